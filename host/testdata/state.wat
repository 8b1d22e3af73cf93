;; A module that exercises the state and timer imports directly, for the
;; host's tests. platform_call ignores the frame's layout: function
;;   0 roundtrip  runs every state and timer import once with the frame's
;;                bytes as a value (its first byte as a map key) and returns
;;                the results (i32 each, from 4096) and the buffers they
;;                filled (256 bytes each, from 8192)
;;   1 oob        passes a value location outside memory
;;   2 domain     registers a timer in time domain 7
;;   3 enter      enters the group whose index is the frame's first u32
;;   4 getput     for each group i below the frame's first u32: enters i,
;;                reads value state 0 into a 64-byte buffer and writes 8
;;                bytes back (the benchmark of state access through the ABI)
(module
  (import "platform" "enter" (func $enter (param i32)))
  (import "platform" "value_get" (func $value_get (param i32 i32 i32) (result i32)))
  (import "platform" "value_set" (func $value_set (param i32 i32 i32)))
  (import "platform" "state_clear" (func $state_clear (param i32)))
  (import "platform" "list_append" (func $list_append (param i32 i32 i32)))
  (import "platform" "list_get" (func $list_get (param i32 i32 i32) (result i32)))
  (import "platform" "map_get" (func $map_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "platform" "map_put" (func $map_put (param i32 i32 i32 i32 i32)))
  (import "platform" "map_remove" (func $map_remove (param i32 i32 i32)))
  (import "platform" "map_entries" (func $map_entries (param i32 i32 i32) (result i32)))
  (import "platform" "timer_register" (func $timer_register (param i32 i64)))
  (import "platform" "timer_delete" (func $timer_delete (param i32 i64)))

  (memory (export "memory") 2)

  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"roundtrip\",\"kind\":\"process\"},{\"name\":\"oob\",\"kind\":\"process\"},{\"name\":\"domain\",\"kind\":\"process\"},{\"name\":\"enter\",\"kind\":\"process\"},{\"name\":\"getput\",\"kind\":\"process\"}],\"states\":[{\"name\":\"v\",\"kind\":\"value\"},{\"name\":\"l\",\"kind\":\"list\"},{\"name\":\"m\",\"kind\":\"map\",\"ttl\":\"1h\"}]}")

  (func (export "platform_abi_version") (result i32) (i32.const 1))

  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 300)))

  (func (export "platform_alloc") (param $size i32) (result i32) (i32.const 65536))

  (func (export "platform_call") (param $fn i32) (param $p i32) (param $n i32) (result i64)
    (block $getput
    (block $enter
      (block $domain
        (block $oob
          (block $roundtrip
            (br_table $roundtrip $oob $domain $enter $getput (local.get $fn)))
          (return (call $roundtrip (local.get $p) (local.get $n))))
        (call $enter (i32.const 0))
        (call $value_set (i32.const 0) (i32.const 0xfffffff0) (i32.const 100))
        (return (i64.const 0)))
      (call $enter (i32.const 0))
      (call $timer_register (i32.const 7) (i64.const 0))
      (return (i64.const 0)))
    (call $enter (i32.load (local.get $p)))
    (return (i64.const 0)))
    (call $getput (i32.load (local.get $p)))
    (i64.const 0))

  (func $getput (param $groups i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $groups)))
        (call $enter (local.get $i))
        (drop (call $value_get (i32.const 0) (i32.const 8192) (i32.const 64)))
        (call $value_set (i32.const 0) (i32.const 8192) (i32.const 8))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  (func $roundtrip (param $p i32) (param $n i32) (result i64)
    (call $enter (i32.const 0))
    (i32.store (i32.const 4096) (call $value_get (i32.const 0) (i32.const 8192) (i32.const 0)))
    (call $value_set (i32.const 0) (local.get $p) (local.get $n))
    (i32.store (i32.const 4100) (call $value_get (i32.const 0) (i32.const 8192) (i32.const 1)))
    (i32.store (i32.const 4104) (call $value_get (i32.const 0) (i32.const 8192) (i32.const 256)))
    (call $list_append (i32.const 1) (local.get $p) (local.get $n))
    (call $list_append (i32.const 1) (local.get $p) (i32.const 1))
    (i32.store (i32.const 4108) (call $list_get (i32.const 1) (i32.const 8448) (i32.const 256)))
    (call $map_put (i32.const 2) (local.get $p) (i32.const 1) (local.get $p) (local.get $n))
    (i32.store (i32.const 4112) (call $map_get (i32.const 2) (local.get $p) (i32.const 1) (i32.const 8704) (i32.const 256)))
    (i32.store (i32.const 4116) (call $map_entries (i32.const 2) (i32.const 8960) (i32.const 256)))
    (call $map_remove (i32.const 2) (local.get $p) (i32.const 1))
    (i32.store (i32.const 4120) (call $map_get (i32.const 2) (local.get $p) (i32.const 1) (i32.const 8704) (i32.const 0)))
    (call $state_clear (i32.const 0))
    (i32.store (i32.const 4124) (call $value_get (i32.const 0) (i32.const 8192) (i32.const 0)))
    (call $timer_register (i32.const 1) (i64.const 42))
    (call $timer_delete (i32.const 0) (i64.const -7))
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 5120)))
)
