// lookup-as: the async lookup functions of udfs/lookup written with the
// AssemblyScript SDK; the conformance suite checks that it produces the Go
// module's bytes.

import { Emitter, LookupResult, Lookups, Output, Record, asyncRequest, asyncResult, bytes, fail } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

const USER_FIELD = bytes('"user":"');
const URL_FIELD = bytes('"url":"');
const ORDER_OPEN = bytes('{"order":');
const PROFILE_OPEN = bytes(',"profile":');
const NULL = bytes("null");
const CLOSE = bytes("}");

/** The buffer results are built in; emit copies them. */
let out = new Uint8Array(256);

/** stringField is the bytes after field in v up to the next quote, or null. */
function stringField(v: Uint8Array, field: Uint8Array): Uint8Array | null {
  const at = indexOf(v, field);
  if (at < 0) return null;
  const end = v.indexOf(0x22, at + field.length);
  if (end < 0) return null;
  return v.subarray(at + field.length, end);
}

/** askKV asks for the order's user in the KV bucket "users". */
function askKV(r: Record, ask: Lookups): void {
  const user = stringField(r.value, USER_FIELD);
  if (!user) {
    fail("lookup: order without user");
    return;
  }
  ask.kv("users", user);
}

/** askHTTP asks for the URL the order names. */
function askHTTP(r: Record, ask: Lookups): void {
  const url = stringField(r.value, URL_FIELD);
  if (!url) {
    fail("lookup: order without url");
    return;
  }
  ask.httpGet(String.UTF8.decode(url.slice().buffer));
}

/** join emits {"order":<order>,"profile":<profile or null>} with the
 * order's key and timestamp. */
function join(r: Record, results: LookupResult[], emit: Emitter): void {
  const value = r.value;
  const profile = results.length == 1 && results[0].found ? results[0].value : NULL;
  const n = ORDER_OPEN.length + value.length + PROFILE_OPEN.length + profile.length + CLOSE.length;
  if (n > out.length) out = new Uint8Array(max(n, out.length << 1));
  let p = put(0, ORDER_OPEN);
  p = put(p, value);
  p = put(p, PROFILE_OPEN);
  p = put(p, profile);
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

asyncRequest("ask_kv", askKV);
asyncRequest("ask_http", askHTTP);
asyncResult("join", join);
