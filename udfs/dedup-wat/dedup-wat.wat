;; dedup-wat: the keyed process function "dedup" of udfs/dedup written
;; directly against ABI v1 (docs/ABI.md: grouped frames, Keyed state and
;; timers), without an SDK or WASI. It emits the first record of a key not
;; seen before and drops the others, keeping a mark in the value state
;; "seen" (TTL 1h) through the platform's state imports.
;;
;; Memory: the mark (the byte 0x01) at byte 8, the self-description at byte
;; 16, input frames at 64 KiB, and each output frame right after its input
;; frame. An output entry (6 bytes and the value, timestamp and headers of a
;; record) is at most 2 bytes longer than the input record it copies, so an
;; output frame needs at most the input's size plus 2 bytes a record.
(module
  (import "platform" "enter" (func $enter (param i32)))
  (import "platform" "value_get" (func $value_get (param i32 i32 i32) (result i32)))
  (import "platform" "value_set" (func $value_set (param i32 i32 i32)))

  (memory (export "memory") 2)

  (data (i32.const 8) "\01")
  (data (i32.const 16) "{\"abi\":1,\"functions\":[{\"name\":\"dedup\",\"kind\":\"process\"}],\"states\":[{\"name\":\"seen\",\"kind\":\"value\",\"ttl\":\"1h\"}]}")

  (func (export "platform_abi_version") (result i32)
    (i32.const 1))

  ;; The description: 110 bytes at 16.
  (func (export "platform_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 110)))

  ;; The input region is always at 64 KiB; memory grows to hold a frame of
  ;; $size bytes and its output frame.
  (func (export "platform_alloc") (param $size i32) (result i32)
    (call $reserve (i32.add (i32.const 65600) (i32.mul (local.get $size) (i32.const 3))))
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

  ;; $skip_bytes returns the address after the length-prefixed bytes at $p.
  (func $skip_bytes (param $p i32) (result i32)
    (i32.add (i32.add (local.get $p) (i32.const 4)) (i32.load (local.get $p))))

  ;; $skip_headers returns the address after the headers (a count, then
  ;; name and value pairs) at $p.
  (func $skip_headers (param $p i32) (result i32)
    (local $n i32)
    (local.set $n (i32.load (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (block $done
      (loop $each
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $p (call $skip_bytes (call $skip_bytes (local.get $p))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $each)))
    (local.get $p))

  ;; $skip_records returns the address after $n records at $p.
  (func $skip_records (param $p i32) (param $n i32) (result i32)
    (block $done
      (loop $each
        (br_if $done (i32.eqz (local.get $n)))
        ;; key, value, timestamp, headers
        (local.set $p (call $skip_headers
          (i32.add (call $skip_bytes (call $skip_bytes (local.get $p))) (i32.const 8))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $each)))
    (local.get $p))

  (func (export "platform_call") (param $fn i32) (param $ptr i32) (param $len i32) (result i64)
    (local $out i32) (local $o i32) (local $p i32) (local $groups i32) (local $g i32)
    (local $flags i32) (local $n i32) (local $first i32) (local $index i32) (local $count i32)
    (local $value i32) (local $end i32)
    ;; The module has one function, index 0.
    (if (local.get $fn) (then unreachable))
    (local.set $out
      (i32.and (i32.add (i32.add (local.get $ptr) (local.get $len)) (i32.const 7)) (i32.const -8)))
    (call $reserve (i32.add (local.get $out) (i32.add (i32.mul (local.get $len) (i32.const 2)) (i32.const 64))))
    (local.set $o (i32.add (local.get $out) (i32.const 4)))
    ;; Frame head: op, watermark, processing time, then the group count.
    (local.set $groups (i32.load offset=17 (local.get $ptr)))
    (local.set $p (i32.add (local.get $ptr) (i32.const 21)))
    (block $done
      (loop $group
        (br_if $done (i32.ge_u (local.get $g) (local.get $groups)))
        ;; Group head: flags, key, then the optional window, accumulators
        ;; and timer, then the record count.
        (local.set $flags (i32.load8_u (local.get $p)))
        (local.set $p (call $skip_bytes (i32.add (local.get $p) (i32.const 1))))
        (if (i32.and (local.get $flags) (i32.const 0x01))
          (then (local.set $p (i32.add (local.get $p) (i32.const 16)))))
        (if (i32.and (local.get $flags) (i32.const 0x02))
          (then (local.set $p (call $skip_bytes (local.get $p)))))
        (if (i32.and (local.get $flags) (i32.const 0x04))
          (then (local.set $p (call $skip_bytes (local.get $p)))))
        (if (i32.and (local.get $flags) (i32.const 0x08))
          (then (local.set $p (i32.add (local.get $p) (i32.const 9)))))
        (local.set $n (i32.load (local.get $p)))
        (local.set $first (i32.add (local.get $p) (i32.const 4)))
        (local.set $p (call $skip_records (local.get $first) (local.get $n)))
        (if (i32.and (local.get $flags) (i32.const 0x10))
          (then (local.set $p (call $skip_records
            (i32.add (local.get $p) (i32.const 4)) (i32.load (local.get $p))))))
        (if (local.get $n)
          (then
            (local.set $index (i32.add (local.get $index) (local.get $n)))
            (call $enter (local.get $g))
            ;; Absent (-1): mark the key and emit its first record.
            (if (i32.lt_s (call $value_get (i32.const 0) (i32.const 0) (i32.const 0)) (i32.const 0))
              (then
                (call $value_set (i32.const 0) (i32.const 8) (i32.const 1))
                ;; A record entry for the group's last record, with flags
                ;; 0x06: the first record's value, timestamp and headers,
                ;; which follow its key in the frame as they do in an entry.
                (local.set $value (call $skip_bytes (local.get $first)))
                (local.set $end (call $skip_headers
                  (i32.add (call $skip_bytes (local.get $value)) (i32.const 8))))
                (i32.store8 (local.get $o) (i32.const 1))
                (i32.store offset=1 align=1 (local.get $o) (i32.sub (local.get $index) (i32.const 1)))
                (i32.store8 offset=5 (local.get $o) (i32.const 0x06))
                (memory.copy (i32.add (local.get $o) (i32.const 6)) (local.get $value)
                  (i32.sub (local.get $end) (local.get $value)))
                (local.set $o (i32.add (local.get $o)
                  (i32.add (i32.const 6) (i32.sub (local.get $end) (local.get $value)))))
                (local.set $count (i32.add (local.get $count) (i32.const 1)))))))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $group)))
    (i32.store (local.get $out) (local.get $count))
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
      (i64.extend_i32_u (i32.sub (local.get $o) (local.get $out))))))
