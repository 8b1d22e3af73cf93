// The module's ABI exports. A UDF's entry file re-exports them:
//
//   export * from "platform-udf/assembly/exports";

import { bufferLength, bufferStart } from "./buffer";
import { call, describe, failFrame } from "./call";

/** The grow-only region platform_alloc hands out, and its size. */
let input = new ArrayBuffer(0);

/** The smallest input region, so that small frames never reallocate. */
const MIN_INPUT: i32 = 64 << 10;

function packed(): u64 {
  return (<u64>bufferStart() << 32) | <u64>bufferLength();
}

export function platform_abi_version(): i32 {
  return 1;
}

export function platform_alloc(size: u32): usize {
  if (<i32>size > input.byteLength) {
    input = new ArrayBuffer(max(max(<i32>size, input.byteLength << 1), MIN_INPUT));
  }
  return changetype<usize>(input);
}

export function platform_describe(): u64 {
  describe();
  return packed();
}

export function platform_call(fn: u32, ptr: usize, len: u32): u64 {
  const base = changetype<usize>(input);
  if (ptr < base || ptr - base + <usize>len > <usize>input.byteLength) {
    failFrame("udf: the input frame is not inside the region platform_alloc returned");
  } else {
    call(fn, input, ptr, <usize>len);
  }
  return packed();
}
