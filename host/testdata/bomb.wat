;; A memory bomb for the memory budget's tests. Both functions are maps:
;;   0 bomb  grows memory 1 MiB at a time, writing a byte to every 4 KiB page
;;           it gets, and traps (unreachable) once growth is refused
;;   1 fill  does the same but returns an empty output once growth is
;;           refused, keeping what it got
;; Input frames are placed at 64 KiB and must be shorter than 64 KiB.
(module
  (memory (export "memory") 2)

  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"bomb\",\"kind\":\"map\"},{\"name\":\"fill\",\"kind\":\"map\"}]}")

  (func (export "platform_abi_version") (result i32) (i32.const 1))

  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 81)))

  (func (export "platform_alloc") (param $size i32) (result i32)
    (i32.const 65536))

  ;; fill grows memory until refused, touching each new 4 KiB page.
  (func $fill
    (local $old i32)
    (local $p i32)
    (local $n i32)
    (loop $grow
      (local.set $old (memory.grow (i32.const 16)))
      (if (i32.eq (local.get $old) (i32.const -1)) (then (return)))
      (local.set $p (i32.shl (local.get $old) (i32.const 16)))
      (local.set $n (i32.const 256))
      (loop $touch
        (i32.store8 (local.get $p) (i32.const 1))
        (local.set $p (i32.add (local.get $p) (i32.const 4096)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br_if $touch (local.get $n)))
      (br $grow)))

  (func (export "platform_call") (param $fn i32) (param $ptr i32) (param $len i32) (result i64)
    (call $fill)
    (if (i32.eqz (local.get $fn)) (then unreachable))
    (i64.const 0)))
