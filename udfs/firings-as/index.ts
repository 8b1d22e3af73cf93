// firings-as: the window process function count of udfs/firings, written
// with the AssemblyScript SDK: it keeps per-window state, as Flink's classic
// use of ProcessWindowFunction's windowState(), to count how often each
// window of each key fired, so that a record late within the allowed
// lateness, which fires the window again, is reported as its second firing.

import {
  Context, Emitter, Record, ValueState, Window, bytes, fail, windowProcess, windowProcessWithState,
} from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

// @ts-ignore: decorator
@external("platform", "timer_register") declare function importTimerRegister(domain: u32, timestamp: i64): void;

/** fired is the number of times a window of a key has fired, 8 bytes
 * little-endian. */
const fired = new ValueState("fired");

/** count emits "<key> [<start>,<end>) firing <n>: <m> records" for the n-th
 * firing of a window holding m records. */
function count(ctx: Context, key: Uint8Array, w: Window, records: Record[]): void {
  let n: u64 = 1;
  const v = fired.get(ctx);
  if (v) {
    if (v.length != 8) {
      fail("state fired of key \"" + String.UTF8.decodeUnsafe(key.dataStart, <usize>key.length) + "\": " +
        v.length.toString() + " bytes, want 8");
      return;
    }
    n = load<u64>(v.dataStart) + 1;
  }
  const state = new Uint8Array(8);
  store<u64>(state.dataStart, n);
  fired.set(ctx, state);
  // The key's bytes go out as they are, valid UTF-8 or not, as in Go.
  const rest = bytes(" [" + w.start.toString() + "," + w.end.toString() + ") firing " + n.toString() + ": " +
    records.length.toString() + " records");
  const out = new Uint8Array(key.length + rest.length);
  out.set(key);
  out.set(rest, key.length);
  ctx.emitValue(out);
}

/** rearm is deliberately wrong, for the platform's tests: it registers an
 * event-time timer at the window's end through the import itself (the SDK
 * refuses timers in window process functions before the platform does),
 * which a window process function may not do, so the platform fails its
 * call. */
function rearm(key: Uint8Array, w: Window, records: Record[], out: Emitter): void {
  importTimerRegister(0, w.end);
}

windowProcessWithState("count", count);
windowProcess("rearm", rearm);
