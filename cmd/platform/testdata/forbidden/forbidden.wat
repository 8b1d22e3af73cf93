;; A module that implements the ABI but imports what a UDF may not use: a
;; function from an unknown module and a WASI socket call.
(module
  (import "env" "system" (func $system (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func $accept (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"abi\":1,\"functions\":[]}")
  (func (export "platform_abi_version") (result i32) (i32.const 1))
  (func (export "platform_alloc") (param i32) (result i32) (i32.const 4096))
  (func (export "platform_describe") (result i64) (i64.const 0x0000040000000018))
  (func (export "platform_call") (param i32 i32 i32) (result i64) (i64.const 0)))
