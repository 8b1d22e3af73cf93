// timers-as: a module for the tests of the AssemblyScript SDK's harness
// (sdk/assemblyscript/harness.mjs), the twin of timers-c and timers-rust:
// value, list and map state with and without a TTL, event and
// processing-time timers, a timer that onTimer registers, a side output, an
// error and a broadcast state. udfs/testdata/harness/timers.script drives it.

import {
  BroadcastState, Context, ListState, MapState, Record, TimeDomain, Timer, ValueState, bytes, fail, onTimer, process, processBroadcast,
} from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

const count = new ValueState("count", "10s");
const seen = new ListState("seen", "10s");
const last = new MapState("last");
const rules = new BroadcastState("rules");

const prefix = bytes("prefix");

function str(b: Uint8Array): string {
  return String.UTF8.decodeUnsafe(b.dataStart, <usize>b.length);
}

/** track counts a key's records (count, 10s TTL), keeps their values (seen,
 * 10s TTL) and its last one (last, no TTL), sets an event-time timer 100 ms
 * after each record and a processing-time timer a second after now, and
 * emits "<rule>count=<n>" with the broadcast rule "prefix". A first record
 * "bad" fails the group. */
function track(ctx: Context, key: Uint8Array, records: Record[]): void {
  if (str(records[0].value) == "bad") {
    fail("bad record");
    return;
  }
  for (let i = 0; i < records.length; i++) {
    seen.append(ctx, records[i].value);
    ctx.registerTimer(TimeDomain.EventTime, records[i].timestamp + 100);
  }
  const v = count.get(ctx);
  const c = <u8>((v && v.length == 1 ? v[0] : 0) + records.length);
  const n = new Uint8Array(1);
  n[0] = c;
  count.set(ctx, n);
  last.put(ctx, bytes("value"), records[records.length - 1].value);
  ctx.registerTimer(TimeDomain.ProcessingTime, ctx.processingTime + 1000);
  const rule = rules.get(ctx, prefix);
  ctx.emitValue(bytes((rule ? str(rule) : "") + "count=" + c.toString()));
}

/** fire emits "event=<ts>,seen=<values>" for an event-time timer, and sets
 * one a millisecond later for each at x10; it emits "proc=<ts>" on the side
 * output proc for a processing-time timer. */
function fire(ctx: Context, key: Uint8Array, timer: Timer): void {
  if (timer.domain == TimeDomain.ProcessingTime) {
    ctx.outputValue("proc", bytes("proc=" + timer.timestamp.toString()));
    return;
  }
  const values = seen.get(ctx);
  let s = "event=" + timer.timestamp.toString() + ",seen=";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) s += ",";
    s += str(values[i]);
  }
  ctx.emitValue(bytes(s));
  if (timer.timestamp % 100 == 10) ctx.registerTimer(TimeDomain.EventTime, timer.timestamp + 1);
}

/** setRules sets the broadcast rule "prefix" to each record's value. */
function setRules(ctx: Context, records: Record[]): void {
  for (let i = 0; i < records.length; i++) rules.put(ctx, prefix, records[i].value);
}

process("track", track);
onTimer("fire", fire);
processBroadcast("rules", setRules);
