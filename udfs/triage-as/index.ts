// triage-as: the keyed process function triage of udfs/triage, written with
// the AssemblyScript SDK: orders with an integer "amount" below 900 go on,
// larger ones to the side output "large", and orders without a readable
// amount to "invalid", each as it is.

import { Context, Output, Record, process } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** The amount from which an order is large. */
const LARGE_AMOUNT: i64 = 900;

/** triage passes each order on, or sends it to "large" or "invalid", as it
 * is. */
function triage(ctx: Context, key: Uint8Array, records: Record[]): void {
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const o = new Output(r.value).withKey(r.key).withTimestamp(r.timestamp).withHeaders(r.headers);
    const n = amount(r.value);
    if (n < 0) ctx.output("invalid", o);
    else if (n >= LARGE_AMOUNT) ctx.output("large", o);
    else ctx.emit(o);
  }
}

const FIELD = "\"amount\":";

/** amount reads the 1 to 9 digits right after the first "amount": of v, as
 * the Go module does; -1 when there are none. */
function amount(v: Uint8Array): i64 {
  const flen = FIELD.length;
  for (let i = 0; i + flen <= v.length; i++) {
    let match = true;
    for (let k = 0; k < flen && match; k++) match = v[i + k] == <u8>FIELD.charCodeAt(k);
    if (!match) continue;
    let n: i64 = 0;
    let digits = 0;
    for (let j = i + flen; j < v.length && digits < 9 && v[j] >= 0x30 && v[j] <= 0x39; j++) {
      n = n * 10 + <i64>(v[j] - 0x30);
      digits++;
    }
    return digits > 0 ? n : -1;
  }
  return -1;
}

process("triage", triage);
