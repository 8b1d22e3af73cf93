// timeout-as: Flink's KeyedProcessFunction example (CountWithTimeoutFunction)
// written with the AssemblyScript SDK: it counts each key's records and
// emits the count once a key has had no record for a minute of event time,
// with a value state and an event-time timer per record. The state has a
// TTL of an hour of processing time: a key quiet for that long is
// forgotten, and its timer then emits nothing.

import { Context, Record, TimeDomain, Timer, ValueState, bytes, fail, onTimer, process } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** A minute of event time, in milliseconds. */
const QUIET: i64 = 60000;

/** counts holds a key's count and the timestamp of its last record, two
 * 8-byte little-endian integers. */
const counts = new ValueState("counts", "1h");

/** count adds a key's records to its count and sets a timer a minute after
 * each one; only the last one's timer will report. */
function count(ctx: Context, key: Uint8Array, records: Record[]): void {
  let c: u64 = 0;
  let last: i64 = 0;
  const v = counts.get(ctx);
  if (v) {
    if (v.length != 16) {
      fail("state counts: want 16 bytes");
      return;
    }
    c = load<u64>(v.dataStart);
    last = load<i64>(v.dataStart + 8);
  }
  for (let i = 0; i < records.length; i++) {
    c++;
    last = records[i].timestamp;
    ctx.registerTimer(TimeDomain.EventTime, last + QUIET);
  }
  const out = new Uint8Array(16);
  store<u64>(out.dataStart, c);
  store<i64>(out.dataStart + 8, last);
  counts.set(ctx, out);
}

/** timeout emits the key's count, as decimal text, when the timer is the
 * last record's, and forgets the key. */
function timeout(ctx: Context, key: Uint8Array, timer: Timer): void {
  const v = counts.get(ctx);
  if (!v) return;
  if (v.length != 16) {
    fail("state counts: want 16 bytes");
    return;
  }
  if (timer.timestamp != load<i64>(v.dataStart + 8) + QUIET) return;
  ctx.emitValue(bytes(load<u64>(v.dataStart).toString()));
  counts.clear(ctx);
}

process("count", count);
onTimer("timeout", timeout);
