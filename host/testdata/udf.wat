;; A UDF module written directly against ABI v1 (see abi/frame.go for the
;; frame layout). Every function is a map; platform_call picks one by index:
;;   0 upper  upper-cases each value; traps (unreachable) on the value "poison"
;;   1 spin   loops forever
;;   2 bomb   grows memory a page at a time and traps once growth is refused
;;   3 log    logs each value through platform.log at the level in the
;;            record's timestamp; a record with key "bad" passes an
;;            out-of-bounds location instead
;;   4 badout returns an output location outside memory
;;   5 exit   calls proc_exit(3)
;;   6 print  writes each value to stdout, or to stderr when the key is set
;; Input frames are placed at 64 KiB, output frames right after them.
(module
  (import "platform" "log" (func $log (param i32 i32 i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))

  (memory (export "memory") 2)

  (global $input i32 (i32.const 65536))
  (global $out (mut i32) (i32.const 65536))
  (global $ready (mut i32) (i32.const 0))

  (data (i32.const 8) "poison")
  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"upper\",\"kind\":\"map\"},{\"name\":\"spin\",\"kind\":\"map\"},{\"name\":\"bomb\",\"kind\":\"map\"},{\"name\":\"log\",\"kind\":\"map\"},{\"name\":\"badout\",\"kind\":\"map\"},{\"name\":\"exit\",\"kind\":\"map\"},{\"name\":\"print\",\"kind\":\"map\"}]}")

  (func (export "_initialize") (global.set $ready (i32.const 1)))

  (func (export "platform_abi_version") (result i32) (i32.const 1))

  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 229)))

  ;; The input region starts at 64 KiB; the output region follows it, and
  ;; memory is grown to hold both (an output is never longer than 16 bytes
  ;; more than its input).
  (func (export "platform_alloc") (param $size i32) (result i32)
    (local $need i32)
    (global.set $out
      (i32.and (i32.add (i32.add (global.get $input) (local.get $size)) (i32.const 7)) (i32.const -8)))
    (local.set $need
      (i32.shr_u (i32.add (i32.add (global.get $out) (local.get $size)) (i32.const 65551)) (i32.const 16)))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
          (then unreachable))))
    (global.get $input))

  (func (export "platform_call") (param $fn i32) (param $ptr i32) (param $len i32) (result i64)
    (if (i32.eqz (global.get $ready)) (then unreachable))
    (block $print
      (block $exit
        (block $badout
          (block $log
            (block $bomb
              (block $spin
                (block $upper
                  (br_table $upper $spin $bomb $log $badout $exit $print (local.get $fn)))
                (return (call $upper (local.get $ptr))))
              (loop $forever (br $forever)))
            (loop $grow
              (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
            unreachable)
          (return (call $each_log (local.get $ptr))))
        (return (i64.shl (i64.const 0xffff0000) (i64.const 32))))
      (call $proc_exit (i32.const 3))
      unreachable)
    (call $each_print (local.get $ptr)))

  ;; $skip_headers returns the position after the header list at $p.
  (func $skip_headers (param $p i32) (result i32)
    (local $n i32)
    (local.set $n (i32.load (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
        (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $p))

  (func $is_poison (param $v i32) (param $n i32) (result i32)
    (if (result i32) (i32.ne (local.get $n) (i32.const 6))
      (then (i32.const 0))
      (else
        (i32.and
          (i32.eq (i32.load (local.get $v)) (i32.load (i32.const 8)))
          (i32.eq (i32.load16_u (i32.add (local.get $v) (i32.const 4))) (i32.load16_u (i32.const 12)))))))

  (func $upper (param $p i32) (result i64)
    (local $count i32) (local $i i32) (local $w i32)
    (local $v i32) (local $n i32) (local $j i32) (local $c i32)
    (local.set $count (i32.load (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (i32.store (global.get $out) (local.get $count))
    (local.set $w (i32.add (global.get $out) (i32.const 4)))
    (block $done
      (loop $record
        (br_if $done (i32.eq (local.get $i) (local.get $count)))
        (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
        (local.set $n (i32.load (local.get $p)))
        (local.set $v (i32.add (local.get $p) (i32.const 4)))
        (local.set $p (call $skip_headers (i32.add (i32.add (local.get $v) (local.get $n)) (i32.const 8))))
        (if (call $is_poison (local.get $v) (local.get $n)) (then unreachable))
        (i32.store8 (local.get $w) (i32.const 1))
        (i32.store (i32.add (local.get $w) (i32.const 1)) (local.get $i))
        (i32.store8 (i32.add (local.get $w) (i32.const 5)) (i32.const 0))
        (i32.store (i32.add (local.get $w) (i32.const 6)) (local.get $n))
        (local.set $w (i32.add (local.get $w) (i32.const 10)))
        (local.set $j (i32.const 0))
        (block $copied
          (loop $byte
            (br_if $copied (i32.eq (local.get $j) (local.get $n)))
            (local.set $c (i32.load8_u (i32.add (local.get $v) (local.get $j))))
            (if (i32.lt_u (i32.sub (local.get $c) (i32.const 97)) (i32.const 26))
              (then (local.set $c (i32.sub (local.get $c) (i32.const 32)))))
            (i32.store8 (i32.add (local.get $w) (local.get $j)) (local.get $c))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $byte)))
        (local.set $w (i32.add (local.get $w) (local.get $n)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $record)))
    (i64.or
      (i64.shl (i64.extend_i32_u (global.get $out)) (i64.const 32))
      (i64.extend_i32_u (i32.sub (local.get $w) (global.get $out)))))

  ;; $empty_output writes an output frame of no entries and returns it.
  (func $empty_output (result i64)
    (i32.store (global.get $out) (i32.const 0))
    (i64.or (i64.shl (i64.extend_i32_u (global.get $out)) (i64.const 32)) (i64.const 4)))

  (func $each_log (param $p i32) (result i64)
    (local $count i32) (local $k i32) (local $kn i32) (local $v i32) (local $n i32)
    (local.set $count (i32.load (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (block $done
      (loop $record
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $kn (i32.load (local.get $p)))
        (local.set $k (i32.add (local.get $p) (i32.const 4)))
        (local.set $p (i32.add (local.get $k) (local.get $kn)))
        (local.set $n (i32.load (local.get $p)))
        (local.set $v (i32.add (local.get $p) (i32.const 4)))
        (local.set $p (i32.add (local.get $v) (local.get $n)))
        (if (local.get $kn)
          (then (call $log (i32.const 1) (i32.const -16) (i32.const 64)))
          (else (call $log (i32.wrap_i64 (i64.load (local.get $p))) (local.get $v) (local.get $n))))
        (local.set $p (call $skip_headers (i32.add (local.get $p) (i32.const 8))))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $record)))
    (call $empty_output))

  (func $each_print (param $p i32) (result i64)
    (local $count i32) (local $kn i32) (local $n i32) (local $iov i32)
    (local.set $iov (global.get $out))
    (local.set $count (i32.load (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (block $done
      (loop $record
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $kn (i32.load (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (local.get $kn))))
        (local.set $n (i32.load (local.get $p)))
        (i32.store (local.get $iov) (i32.add (local.get $p) (i32.const 4)))
        (i32.store (i32.add (local.get $iov) (i32.const 4)) (local.get $n))
        (drop (call $fd_write
          (select (i32.const 2) (i32.const 1) (local.get $kn))
          (local.get $iov) (i32.const 1) (i32.add (local.get $iov) (i32.const 8))))
        (local.set $p (call $skip_headers (i32.add (i32.add (local.get $p) (i32.add (i32.const 4) (local.get $n))) (i32.const 8))))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $record)))
    (global.set $out (i32.add (global.get $out) (i32.const 16)))
    (call $empty_output))
)
