// enrich-as: the interval join function enrich of udfs/enrich written with
// the AssemblyScript SDK; the conformance suite checks that it produces the
// Go module's bytes.

import { Emitter, Output, Record, Window, bytes, fail, join } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** TIER_FIELD starts the value of a profile's tier. */
const TIER_FIELD = bytes('"tier":"');
const ORDER_OPEN = bytes('{"order":');
const TIER_OPEN = bytes(',"tier":"');
const CLOSE = bytes('"}');

/** The buffer results are built in; emit copies them. */
let out = new Uint8Array(256);

/** enrich emits {"order":<order>,"tier":"<tier>"} for an order (left) and a
 * profile (right) of the same user: the order's JSON unchanged and the
 * profile's tier, the bytes between "tier":" and the next quote. The result
 * keeps the user as key and the later of both timestamps. */
function enrich(key: Uint8Array, w: Window, order: Record, profile: Record, emit: Emitter): void {
  const v = profile.value;
  const at = indexOf(v, TIER_FIELD);
  const tierEnd = at < 0 ? -1 : v.indexOf(0x22, at + TIER_FIELD.length);
  if (tierEnd < 0) {
    fail("enrich: profile without tier");
    return;
  }
  const tier = v.subarray(at + TIER_FIELD.length, tierEnd);
  const value = order.value;
  const n = ORDER_OPEN.length + value.length + TIER_OPEN.length + tier.length + CLOSE.length;
  if (n > out.length) out = new Uint8Array(max(n, out.length << 1));
  let p = put(0, ORDER_OPEN);
  p = put(p, value);
  p = put(p, TIER_OPEN);
  p = put(p, tier);
  p = put(p, CLOSE);
  emit.emit(new Output(out.subarray(0, p)));
}

/** Copies b into out at p; returns the offset after it. */
function put(p: i32, b: Uint8Array): i32 {
  memory.copy(out.dataStart + <usize>p, b.dataStart, <usize>b.length);
  return p + b.length;
}

/** The offset of the first occurrence of sub in v, or -1. */
function indexOf(v: Uint8Array, sub: Uint8Array): i32 {
  const last = v.length - sub.length;
  for (let i = 0; i <= last; i++) {
    if (memory.compare(v.dataStart + <usize>i, sub.dataStart, <usize>sub.length) == 0) return i;
  }
  return -1;
}

join("enrich", enrich);
