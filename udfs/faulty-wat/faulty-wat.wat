;; faulty-wat: map functions that misbehave on purpose, for the platform's
;; failure tests, written directly against ABI v1 (docs/ABI.md). Each function
;; passes every value through unchanged (record flags 0: key, timestamp and
;; headers inherited) except its trigger value:
;;   0 poison  traps (unreachable) on the value "poison"
;;   1 reject  reports the error "rejected poison" for the value "poison"
;;   2 spin    loops forever on the value "spin"
;;   3 bomb    grows memory a page at a time on the value "bomb", and traps
;;             once memory cannot grow any more
;;
;; Memory: the self-description at byte 16, the trigger values and the error
;; message from byte 192, input frames at 64 KiB and each output frame right
;; after its input frame (an output entry is never longer than its input
;; record).
(module
  (memory (export "memory") 2)

  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"poison\",\"kind\":\"map\"},{\"name\":\"reject\",\"kind\":\"map\"},{\"name\":\"spin\",\"kind\":\"map\"},{\"name\":\"bomb\",\"kind\":\"map\"}]}")
  (data (i32.const 192) "poison")
  (data (i32.const 200) "spin")
  (data (i32.const 208) "bomb")
  (data (i32.const 216) "rejected poison")

  (func (export "platform_abi_version") (result i32)
    (i32.const 1))

  ;; The description: 143 bytes at 16.
  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 143)))

  ;; The input region is always at 64 KiB; memory grows to hold a frame of
  ;; $size bytes and its output frame.
  (func (export "platform_alloc") (param $size i32) (result i32)
    (call $reserve (i32.add (i32.const 65544) (i32.shl (local.get $size) (i32.const 1))))
    (i32.const 65536))

  ;; $reserve grows memory to at least $end bytes, or traps.
  (func $reserve (param $end i32)
    (local $have i32)
    (local.set $have (i32.shl (memory.size) (i32.const 16)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow
                (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                  (i32.const 16)))
              (i32.const -1))
          (then unreachable)))))

  ;; $equals reports whether the $n bytes at $p equal the $m bytes at $q.
  (func $equals (param $p i32) (param $n i32) (param $q i32) (param $m i32) (result i32)
    (if (i32.ne (local.get $n) (local.get $m))
      (then (return (i32.const 0))))
    (block $differ
      (loop $next
        (if (i32.eqz (local.get $n))
          (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $p)) (i32.load8_u (local.get $q))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  (func (export "platform_call") (param $fn i32) (param $ptr i32) (param $len i32) (result i64)
    (local $trigger i32) (local $tlen i32)
    (local $out i32) (local $n i32) (local $i i32) (local $p i32) (local $o i32)
    (local $value i32) (local $vlen i32) (local $h i32)
    ;; The trigger value of function $fn; other indexes trap.
    (block $chosen
      (block $bomb
        (block $spin
          (block $poison
            (block $unknown
              (br_table $poison $poison $spin $bomb $unknown (local.get $fn)))
            unreachable)
          (local.set $trigger (i32.const 192))
          (local.set $tlen (i32.const 6))
          (br $chosen))
        (local.set $trigger (i32.const 200))
        (local.set $tlen (i32.const 4))
        (br $chosen))
      (local.set $trigger (i32.const 208))
      (local.set $tlen (i32.const 4)))
    (local.set $out
      (i32.and (i32.add (i32.add (local.get $ptr) (local.get $len)) (i32.const 7)) (i32.const -8)))
    (call $reserve (i32.add (local.get $out) (local.get $len)))
    ;; One entry per input record.
    (local.set $n (i32.load (local.get $ptr)))
    (i32.store (local.get $out) (local.get $n))
    (local.set $p (i32.add (local.get $ptr) (i32.const 4)))
    (local.set $o (i32.add (local.get $out) (i32.const 4)))
    (block $records_done
      (loop $records
        (br_if $records_done (i32.ge_u (local.get $i) (local.get $n)))
        ;; Skip the key; note the value; skip the value, the timestamp and
        ;; the headers.
        (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
        (local.set $vlen (i32.load (local.get $p)))
        (local.set $value (i32.add (local.get $p) (i32.const 4)))
        (local.set $p (i32.add (local.get $value) (local.get $vlen)))
        (local.set $h (i32.load offset=8 (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 12)))
        (block $headers_done
          (loop $headers
            (br_if $headers_done (i32.eqz (local.get $h)))
            (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
            (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
            (local.set $h (i32.sub (local.get $h) (i32.const 1)))
            (br $headers)))
        (block $next
          (if (call $equals (local.get $value) (local.get $vlen) (local.get $trigger) (local.get $tlen))
            (then
              (block $grow
                (block $loop
                  (block $reject
                    (block $trap
                      (br_table $trap $reject $loop $grow (local.get $fn)))
                    ;; poison
                    unreachable)
                  ;; reject: tag 2 (error), the input index, the message.
                  (i32.store8 (local.get $o) (i32.const 2))
                  (i32.store offset=1 align=1 (local.get $o) (local.get $i))
                  (i32.store offset=5 align=1 (local.get $o) (i32.const 15))
                  (memory.copy (i32.add (local.get $o) (i32.const 9)) (i32.const 216) (i32.const 15))
                  (local.set $o (i32.add (local.get $o) (i32.const 24)))
                  (br $next))
                ;; spin: never returns.
                (loop $forever
                  (br $forever)))
              ;; bomb: grow until refused, then trap.
              (loop $more
                (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
              unreachable))
          ;; Pass the value through: tag 1 (record), the input index, flags 0,
          ;; the value.
          (i32.store8 (local.get $o) (i32.const 1))
          (i32.store offset=1 align=1 (local.get $o) (local.get $i))
          (i32.store8 offset=5 (local.get $o) (i32.const 0))
          (i32.store offset=6 align=1 (local.get $o) (local.get $vlen))
          (memory.copy (i32.add (local.get $o) (i32.const 10)) (local.get $value) (local.get $vlen))
          (local.set $o (i32.add (local.get $o) (i32.add (i32.const 10) (local.get $vlen)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $records)))
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
      (i64.extend_i32_u (i32.sub (local.get $o) (local.get $out))))))
