;; A keyed process function for the benchmark of state larger than memory
;; (bigstate_test.go), declaring one value state.
;;   0 update   for each group i below the frame's first u32: enters i,
;;              reads value state 0 into a 256-byte buffer, adds 1 to the
;;              u64 counter at its start (a key without a value, or with one
;;              shorter than 8 bytes, starts from 100 zero bytes) and writes
;;              the value back at its length (at most 256 bytes)
(module
  (import "platform" "enter" (func $enter (param i32)))
  (import "platform" "value_get" (func $value_get (param i32 i32 i32) (result i32)))
  (import "platform" "value_set" (func $value_set (param i32 i32 i32)))

  (memory (export "memory") 2)

  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"update\",\"kind\":\"process\"}],\"states\":[{\"name\":\"v\",\"kind\":\"value\"}]}")

  (func (export "platform_abi_version") (result i32) (i32.const 1))

  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 97)))

  (func (export "platform_alloc") (param $size i32) (result i32) (i32.const 65536))

  (func (export "platform_call") (param $fn i32) (param $p i32) (param $n i32) (result i64)
    (call $update (i32.load (local.get $p)))
    (i64.const 0))

  (func $update (param $groups i32)
    (local $i i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $groups)))
        (call $enter (local.get $i))
        (local.set $n (call $value_get (i32.const 0) (i32.const 8192) (i32.const 256)))
        (if (i32.lt_s (local.get $n) (i32.const 8))
          (then
            (memory.fill (i32.const 8192) (i32.const 0) (i32.const 100))
            (local.set $n (i32.const 100))))
        (if (i32.gt_s (local.get $n) (i32.const 256))
          (then (local.set $n (i32.const 256))))
        (i64.store (i32.const 8192) (i64.add (i64.load (i32.const 8192)) (i64.const 1)))
        (call $value_set (i32.const 0) (i32.const 8192) (local.get $n))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
)
