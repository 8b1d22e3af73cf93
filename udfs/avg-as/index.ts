// avg-as: the window functions of udfs/avg, written with the AssemblyScript
// SDK, over JSON records with a number field "amount": an incremental
// average (aggregate), the record with the largest amount (reduce) and a
// count of records (aggregate). The README says exactly what each writes.

import { AggregateFns, Record, Window, aggregate, bytes, fail, formatFloat, reduce } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

const FIELD = bytes('"amount":');

/** amount reads the number after "amount": in a flat JSON object, as the Go
 * module does: an integer exactly, anything else as a float. It fails the
 * record and returns NaN when there is none. */
function amount(v: Uint8Array): f64 {
  let i = 0;
  while (i + FIELD.length <= v.length && memory.compare(v.dataStart + <usize>i, FIELD.dataStart, <usize>FIELD.length) != 0) i++;
  if (i + FIELD.length > v.length) {
    fail('no "amount" field');
    return NaN;
  }
  let p = i + FIELD.length;
  while (p < v.length && v[p] == 0x20) p++;
  let end = p;
  while (end < v.length && ((v[end] >= 0x30 && v[end] <= 0x39) || v[end] == 0x2d || v[end] == 0x2e || v[end] == 0x65 || v[end] == 0x45 || v[end] == 0x2b)) end++;
  if (end == p) {
    fail('"amount" is not a number');
    return NaN;
  }
  const neg = v[p] == 0x2d;
  let whole = end > p + (neg ? 1 : 0);
  let n: i64 = 0;
  for (let j = neg ? p + 1 : p; j < end && whole; j++) {
    if (v[j] < 0x30 || v[j] > 0x39 || n > i64.MAX_VALUE / 10 - 9) whole = false;
    else n = n * 10 + <i64>(v[j] - 0x30);
  }
  if (whole) return <f64>(neg ? -n : n);
  const text = String.UTF8.decodeUnsafe(v.dataStart + <usize>p, <usize>(end - p));
  const x = parseFloat(text);
  if (isNaN(x)) fail('"amount" is not a number');
  return x;
}

/** jsonString is s as a JSON string, escaping quotes, backslashes and
 * control characters; other bytes pass as they are. */
function jsonString(s: Uint8Array): string {
  const hex = "0123456789abcdef";
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c == 0x22 || c == 0x5c) out += "\\" + String.fromCharCode(c);
    else if (c < 0x20) out += "\\u00" + hex.charAt(c >> 4) + hex.charAt(c & 15);
    else out += String.UTF8.decodeUnsafe(s.dataStart + <usize>i, 1);
  }
  return out + '"';
}

/** The accumulator of avg, in 16 bytes: the count, then the sum's bits,
 * little-endian, as the Go module stores them. */
function meanCreate(): Uint8Array {
  return new Uint8Array(16);
}

function meanAdd(acc: Uint8Array, r: Record): Uint8Array {
  if (acc.length != 16) {
    fail("avg: accumulator is not 16 bytes");
    return acc;
  }
  const v = amount(r.value);
  store<i64>(acc.dataStart, load<i64>(acc.dataStart) + 1);
  store<f64>(acc.dataStart, load<f64>(acc.dataStart, 8) + v, 8);
  return acc;
}

function meanMerge(acc: Uint8Array, other: Uint8Array): Uint8Array {
  if (acc.length != 16 || other.length != 16) {
    fail("avg: accumulator is not 16 bytes");
    return acc;
  }
  const out = acc.slice(0);
  store<i64>(out.dataStart, load<i64>(acc.dataStart) + load<i64>(other.dataStart));
  store<f64>(out.dataStart, load<f64>(acc.dataStart, 8) + load<f64>(other.dataStart, 8), 8);
  return out;
}

function meanResult(key: Uint8Array, w: Window, acc: Uint8Array): Uint8Array {
  if (acc.length != 16) {
    fail("avg: accumulator is not 16 bytes");
    return acc;
  }
  const count = load<i64>(acc.dataStart);
  const avg = load<f64>(acc.dataStart, 8) / <f64>count;
  return bytes('{"key":' + jsonString(key) + ',"window_start":' + w.start.toString() + ',"window_end":' + w.end.toString() +
    ',"avg":' + formatFloat(avg) + ',"count":' + count.toString() + "}");
}

/** The accumulator of count: the number of records, in 8 bytes. */
function countCreate(): Uint8Array {
  return new Uint8Array(8);
}

function countAdd(acc: Uint8Array, r: Record): Uint8Array {
  if (acc.length != 8) {
    fail("count: accumulator is not 8 bytes");
    return acc;
  }
  store<i64>(acc.dataStart, load<i64>(acc.dataStart) + 1);
  return acc;
}

function countMerge(acc: Uint8Array, other: Uint8Array): Uint8Array {
  if (acc.length != 8 || other.length != 8) {
    fail("count: accumulator is not 8 bytes");
    return acc;
  }
  const out = acc.slice(0);
  store<i64>(out.dataStart, load<i64>(acc.dataStart) + load<i64>(other.dataStart));
  return out;
}

function countResult(key: Uint8Array, w: Window, acc: Uint8Array): Uint8Array {
  if (acc.length != 8) {
    fail("count: accumulator is not 8 bytes");
    return acc;
  }
  return bytes(load<i64>(acc.dataStart).toString());
}

/** largest keeps the record value with the larger amount (the earlier one
 * on a tie). */
function largest(acc: Uint8Array, value: Uint8Array): Uint8Array {
  const a = amount(acc);
  const v = amount(value);
  return v > a ? value : acc;
}

aggregate("avg", new AggregateFns(meanCreate, meanAdd, meanMerge, meanResult));
reduce("largest", largest);
aggregate("count", new AggregateFns(countCreate, countAdd, countMerge, countResult));
