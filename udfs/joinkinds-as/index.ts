// joinkinds-as: the join function pairs and the coGroup function sides of
// udfs/joinkinds written with the AssemblyScript SDK; a test compares their
// output entries with the Go module's.

import { Emitter, Output, Record, Window, bytes, coGroup, fail, join } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** The buffer results are built in, and its length; emit copies them. */
let out = new Uint8Array(256);
let length = 0;

const K2 = bytes("k2");
const LEFT = bytes("|L=");
const RIGHT = bytes("|R=");

function reserve(n: i32): void {
  if (length + n <= out.length) return;
  const grown = new Uint8Array(max(out.length << 1, length + n));
  memory.copy(grown.dataStart, out.dataStart, <usize>length);
  out = grown;
}

function putBytes(b: Uint8Array): void {
  reserve(b.length);
  memory.copy(out.dataStart + <usize>length, b.dataStart, <usize>b.length);
  length += b.length;
}

function putByte(c: u8): void {
  reserve(1);
  out[length++] = c;
}

function putInt(v: i64): void {
  putBytes(bytes(v.toString()));
}

function putWindow(w: Window): void {
  putByte(0x7c);
  putInt(w.start);
  putByte(0x7c);
  putInt(w.end);
}

function putRecord(r: Record): void {
  putByte(0x7c);
  putBytes(r.value);
  putByte(0x7c);
  putInt(r.timestamp);
}

function putSide(label: Uint8Array, records: Record[]): void {
  putBytes(label);
  putInt(records.length);
  putByte(0x3a);
  for (let i = 0; i < records.length; i++) {
    if (i > 0) putByte(0x2c);
    putBytes(records[i].value);
  }
}

function result(): Uint8Array {
  return out.subarray(0, length);
}

/** pairs emits "key|start|end|left|left ts|right|right ts" for each pair;
 * nothing when the right value is "skip"; the line twice, the second time
 * with timestamp 7 and key "k2", when the left value is "two"; and fails the
 * group when the left value is "fail". */
function pairs(key: Uint8Array, w: Window, left: Record, right: Record, emit: Emitter): void {
  const l = left.valueString();
  if (l == "fail") {
    fail("pairs: fail");
    return;
  }
  if (right.valueString() == "skip") return;
  length = 0;
  putBytes(key);
  putWindow(w);
  putRecord(left);
  putRecord(right);
  emit.emit(new Output(result()));
  if (l == "two") emit.emit(new Output(result()).withKey(K2).withTimestamp(7));
}

/** sides emits one record per group, "key|start|end|L=n:v,v|R=m:v,v", the
 * values of each side in order. */
function sides(key: Uint8Array, w: Window, left: Record[], right: Record[], emit: Emitter): void {
  length = 0;
  putBytes(key);
  putWindow(w);
  putSide(LEFT, left);
  putSide(RIGHT, right);
  emit.emit(new Output(result()));
}

join("pairs", pairs);
coGroup("sides", sides);
