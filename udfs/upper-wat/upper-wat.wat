;; upper-wat: the map function "upper" written directly against ABI v1
;; (docs/ABI.md), without an SDK or WASI. It upper-cases the ASCII letters of
;; each record's value and inherits the key, timestamp and headers (record
;; flags 0).
;;
;; Memory: the self-description at byte 16, input frames at 64 KiB, and each
;; output frame right after its input frame. An output entry (10 bytes and the
;; value) is always shorter than its input record (20 bytes, the key, the value
;; and the headers), so an output frame never needs more room than its input.
;;
;; Speed: values are converted eight bytes at a time, and a value's last
;; partial piece by converting the full piece that ends with it again (the
;; output is computed from the unchanged input, so overlapping is harmless).
;; Few loop iterations matter: a host that enforces call deadlines pays for a
;; check at every one.
(module
  (memory (export "memory") 2)

  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"upper\",\"kind\":\"map\"}]}")

  (func (export "platform_abi_version") (result i32)
    (i32.const 1))

  ;; The description: 53 bytes at 16.
  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 53)))

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

  ;; $upper8 returns the eight bytes $x with their ASCII lower-case letters
  ;; upper-cased. A byte is such a letter when its top bit is clear and its
  ;; low seven bits are in 0x61..0x7a. Adding 0x1f to the low seven bits sets
  ;; the top bit from 0x61 on, adding 0x05 from 0x7b on, without carrying into
  ;; the next byte; the two sums differ in the top bit exactly for letters,
  ;; whose bit 0x20 is then flipped.
  (func $upper8 (param $x i64) (result i64)
    (local $low i64)
    (local.set $low (i64.and (local.get $x) (i64.const 0x7f7f7f7f7f7f7f7f)))
    (i64.xor (local.get $x)
      (i64.shr_u
        (i64.and
          (i64.and
            (i64.xor
              (i64.add (local.get $low) (i64.const 0x1f1f1f1f1f1f1f1f))
              (i64.add (local.get $low) (i64.const 0x0505050505050505)))
            (i64.xor (local.get $x) (i64.const -1)))
          (i64.const 0x8080808080808080))
        (i64.const 2))))

  ;; $block32 converts the 32 bytes at $src into $dst.
  (func $block32 (param $src i32) (param $dst i32)
    (i64.store align=1 (local.get $dst) (call $upper8 (i64.load align=1 (local.get $src))))
    (i64.store offset=8 align=1 (local.get $dst) (call $upper8 (i64.load offset=8 align=1 (local.get $src))))
    (i64.store offset=16 align=1 (local.get $dst) (call $upper8 (i64.load offset=16 align=1 (local.get $src))))
    (i64.store offset=24 align=1 (local.get $dst) (call $upper8 (i64.load offset=24 align=1 (local.get $src)))))

  ;; $word8 converts the eight bytes at $src into $dst.
  (func $word8 (param $src i32) (param $dst i32)
    (i64.store align=1 (local.get $dst) (call $upper8 (i64.load align=1 (local.get $src)))))

  ;; $block64 converts the 64 bytes at $src into $dst.
  (func $block64 (param $src i32) (param $dst i32)
    (call $block32 (local.get $src) (local.get $dst))
    (call $block32 (i32.add (local.get $src) (i32.const 32)) (i32.add (local.get $dst) (i32.const 32))))

  ;; $convert converts the $n bytes at $src into $dst. It covers the value
  ;; with pieces of 8, 32 and 64 bytes, the last one overlapping the one
  ;; before, and loops only over values longer than 128 bytes or shorter than
  ;; eight.
  (func $convert (param $src i32) (param $dst i32) (param $n i32)
    (local $off i32) (local $c i32)
    (if (i32.gt_u (local.get $n) (i32.const 128))
      (then
        (loop $blocks
          (call $block64 (i32.add (local.get $src) (local.get $off)) (i32.add (local.get $dst) (local.get $off)))
          (local.set $off (i32.add (local.get $off) (i32.const 64)))
          (br_if $blocks (i32.le_u (i32.add (local.get $off) (i32.const 64)) (local.get $n))))))
    (if (i32.ge_u (local.get $n) (i32.const 64))
      (then
        (if (i32.lt_u (local.get $off) (i32.const 64))
          (then (call $block64 (local.get $src) (local.get $dst))))
        (local.set $off (i32.sub (local.get $n) (i32.const 64)))
        (call $block64 (i32.add (local.get $src) (local.get $off)) (i32.add (local.get $dst) (local.get $off)))
        (return)))
    (if (i32.ge_u (local.get $n) (i32.const 32))
      (then
        (call $block32 (local.get $src) (local.get $dst))
        (local.set $off (i32.sub (local.get $n) (i32.const 32)))
        (call $block32 (i32.add (local.get $src) (local.get $off)) (i32.add (local.get $dst) (local.get $off)))
        (return)))
    (if (i32.ge_u (local.get $n) (i32.const 8))
      (then
        (call $word8 (local.get $src) (local.get $dst))
        (if (i32.gt_u (local.get $n) (i32.const 16))
          (then (call $word8 (i32.add (local.get $src) (i32.const 8)) (i32.add (local.get $dst) (i32.const 8)))))
        (if (i32.gt_u (local.get $n) (i32.const 24))
          (then (call $word8 (i32.add (local.get $src) (i32.const 16)) (i32.add (local.get $dst) (i32.const 16)))))
        (local.set $off (i32.sub (local.get $n) (i32.const 8)))
        (call $word8 (i32.add (local.get $src) (local.get $off)) (i32.add (local.get $dst) (local.get $off)))
        (return)))
    ;; Fewer than eight bytes: one at a time.
    (if (i32.eqz (local.get $n)) (then (return)))
    (loop $bytes
      (local.set $c (i32.load8_u (i32.add (local.get $src) (local.get $off))))
      (i32.store8 (i32.add (local.get $dst) (local.get $off))
        (select
          (i32.sub (local.get $c) (i32.const 32))
          (local.get $c)
          (i32.lt_u (i32.sub (local.get $c) (i32.const 97)) (i32.const 26))))
      (local.set $off (i32.add (local.get $off) (i32.const 1)))
      (br_if $bytes (i32.lt_u (local.get $off) (local.get $n)))))

  (func (export "platform_call") (param $fn i32) (param $ptr i32) (param $len i32) (result i64)
    (local $out i32) (local $n i32) (local $i i32) (local $p i32) (local $o i32)
    (local $vlen i32) (local $h i32)
    ;; The module has one function, index 0.
    (if (local.get $fn) (then unreachable))
    (local.set $out
      (i32.and (i32.add (i32.add (local.get $ptr) (local.get $len)) (i32.const 7)) (i32.const -8)))
    (call $reserve (i32.add (local.get $out) (local.get $len)))
    ;; One entry per input record.
    (local.set $n (i32.load (local.get $ptr)))
    (i32.store (local.get $out) (local.get $n))
    (local.set $p (i32.add (local.get $ptr) (i32.const 4)))
    (local.set $o (i32.add (local.get $out) (i32.const 4)))
    (if (local.get $n)
      (then
        (loop $records
          ;; Skip the key; read the value's length.
          (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
          (local.set $vlen (i32.load (local.get $p)))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          ;; Entry: tag 1 (record), the input index, flags 0, the value.
          (i32.store8 (local.get $o) (i32.const 1))
          (i32.store offset=1 align=1 (local.get $o) (local.get $i))
          (i32.store8 offset=5 (local.get $o) (i32.const 0))
          (i32.store offset=6 align=1 (local.get $o) (local.get $vlen))
          (call $convert (local.get $p) (i32.add (local.get $o) (i32.const 10)) (local.get $vlen))
          (local.set $o (i32.add (local.get $o) (i32.add (i32.const 10) (local.get $vlen))))
          ;; Skip the value, the timestamp and the headers.
          (local.set $p (i32.add (local.get $p) (local.get $vlen)))
          (local.set $h (i32.load offset=8 (local.get $p)))
          (local.set $p (i32.add (local.get $p) (i32.const 12)))
          (if (local.get $h)
            (then
              (loop $headers
                (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
                (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
                (local.set $h (i32.sub (local.get $h) (i32.const 1)))
                (br_if $headers (local.get $h)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $records (i32.lt_u (local.get $i) (local.get $n))))))
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
      (i64.extend_i32_u (i32.sub (local.get $o) (local.get $out))))))
