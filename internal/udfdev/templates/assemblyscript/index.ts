// A UDF module with one map function, shout. Build it with make.

import { Output, Record, fail, map } from "platform-udf/assembly/index";

export * from "platform-udf/assembly/exports";

/** shout upper-cases the ASCII letters of the value and appends "!"; an
 * empty value fails the record. */
function shout(r: Record): Output {
  const v = r.value;
  if (v.length == 0) {
    fail("empty value");
    return new Output(v);
  }
  const out = new Uint8Array(v.length + 1);
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    out[i] = c >= 0x61 && c <= 0x7a ? c - 32 : c;
  }
  out[v.length] = 0x21;
  return new Output(out);
}

map("shout", shout);
