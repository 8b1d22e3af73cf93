// kinds-as: a function of every record kind, written with the AssemblyScript
// SDK, for the platform's tests and as a reference of the SDK. The README
// says what each function does.

import {
  Emitter, Header, Level, Output, Record, bytes, fail, filter, flatMap, key, log, map, timestamp,
} from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** swap exchanges the key and the value. */
function swap(r: Record): Output {
  return new Output(r.key).withKey(r.value);
}

/** delay moves the timestamp one second later. */
function delay(r: Record): Output {
  return new Output(r.value).withTimestamp(r.timestamp + 1000);
}

/** annotate appends a header "length" holding the value's length in decimal. */
function annotate(r: Record): Output {
  const headers = r.headers;
  headers.push(new Header(bytes("length"), bytes(r.valueLength.toString())));
  return new Output(r.value).withHeaders(headers);
}

/** crash traps on the value "crash", which fails the whole call; passes
 * other records through. */
function crash(r: Record): Output {
  if (r.valueString() == "crash") unreachable();
  return new Output(r.value);
}

/** logValue writes the value to the platform's logs at info level and passes
 * the record through. */
function logValue(r: Record): Output {
  log(Level.Info, r.valueString());
  return new Output(r.value);
}

/** nonempty keeps the records whose value is not empty. */
function nonempty(r: Record): bool {
  return r.valueLength > 0;
}

/** fields emits one record per comma-separated field of the value, keeping
 * the key, timestamp and headers. A field "!" fails the record, and none of
 * its fields are emitted. */
function fields(r: Record, out: Emitter): void {
  const v = r.value;
  let start = 0;
  for (let i = 0; i <= v.length; i++) {
    if (i < v.length && v[i] != 0x2c) continue;
    const f = v.subarray(start, i);
    if (f.length == 1 && f[0] == 0x21) {
      fail('field "!" is not allowed');
      return;
    }
    out.emit(new Output(f));
    start = i + 1;
  }
}

/** byValue makes the value the key. */
function byValue(r: Record): Uint8Array {
  return r.value;
}

/** parseTime reads the timestamp from the value, decimal milliseconds since
 * the epoch; a value that is not a number fails the record. */
function parseTime(r: Record): i64 {
  const v = r.value;
  let i = 0;
  let negative = false;
  if (v.length > 0 && (v[0] == 0x2b || v[0] == 0x2d)) {
    negative = v[0] == 0x2d;
    i = 1;
  }
  if (i == v.length) {
    fail("not a decimal number");
    return 0;
  }
  let n: u64 = 0;
  for (; i < v.length; i++) {
    const d = <u64>v[i] - 0x30;
    const limit: u64 = negative ? 9223372036854775808 : 9223372036854775807;
    if (d > 9 || n > (limit - d) / 10) {
      fail("not a decimal number");
      return 0;
    }
    n = n * 10 + d;
  }
  return negative ? -(<i64>n) : <i64>n;
}

map("swap", swap);
map("delay", delay);
map("annotate", annotate);
map("crash", crash);
map("log", logValue);
filter("nonempty", nonempty);
flatMap("fields", fields);
key("by_value", byValue);
timestamp("parse_time", parseTime);
