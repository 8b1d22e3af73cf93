// The AssemblyScript SDK for the platform's WebAssembly UDFs, ABI v1
// (docs/ABI.md). A module registers its functions by name at the top level
// of its entry file, which runs once per instance (asc --exportStart
// _initialize), and re-exports the ABI's exports from "./exports":
//
//   import { map, Output, Record } from "platform-udf/assembly/index";
//   export * from "platform-udf/assembly/exports";
//   map("shout", (r: Record): Output => new Output(shout(r.value)));
//
// The SDK decodes each batch of records, calls the function once per record
// (window and coGroup functions: once per group; join functions: once per
// pair) and encodes the results, in buffers it reuses from call to call.
// fail() fails one record (or group); an abort or a trap fails the whole
// call.

import { AggregateFns, Emitter, Eviction, LookupResult, Lookups, Window, enableKeyed, enableWindowState, fail, register } from "./call";
import { Context, ListState, MapState, NO_WATERMARK, TimeDomain, Timer, ValueState } from "./keyed";
import { BroadcastState } from "./broadcast";
import { formatFloat } from "./float";
import { Header, Output, Record, bytes } from "./record";
import { JsonFields, JsonKind, JsonPath, JsonReader, JsonWriter } from "./json";

export { AggregateFns, BroadcastState, Context, Emitter, Eviction, LookupResult, Lookups, Window, Header, JsonFields, JsonKind, JsonPath, JsonReader, JsonWriter, ListState, MapState, NO_WATERMARK, Output, Record, TimeDomain, Timer, ValueState, bytes, fail, formatFloat };

/** Registers a map function: exactly one output per input record. */
export function map(name: string, f: (r: Record) => Output): void {
  register(name, "map").map = f;
}

/** Registers a filter: the input passes on, unchanged, when f returns true. */
export function filter(name: string, f: (r: Record) => bool): void {
  register(name, "filter").filter = f;
}

/** Registers a flat map function: it emits zero or more outputs per input. */
export function flatMap(name: string, f: (r: Record, out: Emitter) => void): void {
  register(name, "flat_map").flatMap = f;
}

/** Registers the first half of an async lookup (docs/ABI.md, Async
 * lookups): f asks for the record's lookups with ask.kv and ask.httpGet and
 * returns at once; the platform issues them concurrently. */
export function asyncRequest(name: string, f: (r: Record, ask: Lookups) => void): void {
  register(name, "lookup_request").lookupRequest = f;
}

/** Registers the second half of an async lookup: f gets a record and its
 * lookups' results, in the order asked, and emits as a flat map does. */
export function asyncResult(name: string, f: (r: Record, results: LookupResult[], out: Emitter) => void): void {
  register(name, "lookup_result").lookupResult = f;
}

/** Registers a key selector: f returns the record's new key. */
export function key(name: string, f: (r: Record) => Uint8Array): void {
  register(name, "key").key = f;
}

/** Registers a timestamp assigner: f returns the record's event time. */
export function timestamp(name: string, f: (r: Record) => i64): void {
  register(name, "timestamp").timestamp = f;
}

/** Registers an incremental window aggregate over accumulator bytes: create
 * a new accumulator, add a record to one, merge a later one into one (each
 * returns the accumulator, which may be the one given, changed), and the
 * window's result value. */
export function aggregate(name: string, f: AggregateFns): void {
  register(name, "aggregate").aggregate = f;
}

/** Registers a window reduce function: it folds a value into the
 * accumulated value, which starts as the first record's value and is the
 * window's result. It must be associative. */
export function reduce(name: string, f: (acc: Uint8Array, value: Uint8Array) => Uint8Array): void {
  register(name, "reduce").reduce = f;
}

/** Registers a window process function: called once per window that fires,
 * with its key, bounds and records; what it emits inherits the window's key
 * and the timestamp end - 1, and no headers. */
export function windowProcess(name: string, f: (key: Uint8Array, w: Window, records: Record[], out: Emitter) => void): void {
  register(name, "window_process").windowProcess = f;
}

/** Registers a window process function with per-window state, as Flink's
 * ProcessWindowFunction with its context's windowState(): it is called once
 * per window that fires (again when a record late within the allowed
 * lateness re-fires it), with the window's key, bounds and records, and the
 * states the module declares act on that key's state in that window. The
 * platform clears a window's state when it drops the window, at its end
 * plus the allowed lateness. ctx.emit outputs inherit the window's key and
 * the timestamp end - 1; ctx has no timers (calling them aborts). fail()
 * discards what was emitted for the window; the state it changed stays
 * changed. The platform refuses it over session or count windows. */
export function windowProcessWithState(name: string, f: (ctx: Context, key: Uint8Array, w: Window, records: Record[]) => void): void {
  enableWindowState();
  register(name, "window_process").windowState = f;
}

/** Registers a join function (Flink's JoinFunction): it is called once per
 * pair of a left and a right record with the same key, in the same window
 * (w) or, for an interval join (w is 0, 0), within the join's bounds; the
 * SDK walks each group the platform sends, every left record with every
 * right record, in order. What it emits inherits the key, and the timestamp
 * end - 1 or, for an interval join, the later of the pair's timestamps.
 * fail() discards what was emitted for the whole group and fails it. */
export function join(name: string, f: (key: Uint8Array, w: Window, left: Record, right: Record, out: Emitter) => void): void {
  register(name, "join").join = f;
}

/** Registers a coGroup function (Flink's CoGroupFunction): it is called
 * once per key and window with the window's left and right records, either
 * of which may be empty, for inner, left, right and full outer joins. What
 * it emits inherits as with join; fail() discards it and fails the group. */
export function coGroup(name: string, f: (key: Uint8Array, w: Window, left: Record[], right: Record[], out: Emitter) => void): void {
  register(name, "co_group").coGroup = f;
}

/** Registers a dynamic session gap: the session of a record lasts until its
 * timestamp plus the returned gap in milliseconds, positive. */
export function sessionGap(name: string, f: (r: Record) => i64): void {
  register(name, "session_gap").sessionGap = f;
}

/** Registers a custom window evictor (Flink's Evictor): called for each
 * window that fires, before its window function, after it or both (the job
 * spec's evictor.when says), it calls e.evict(i) for each record to remove;
 * what it evicts is gone from the window, for its later firings too.
 * fail() fails the window, which keeps its records. */
export function evictor(name: string, f: (e: Eviction) => void): void {
  register(name, "evictor").evictor = f;
}

/** Registers a punctuated watermark function: for each record it returns a
 * watermark to emit right after it, or NO_WATERMARK for none. */
export function watermark(name: string, f: (r: Record) => i64): void {
  register(name, "watermark").watermark = f;
}

/** Registers a keyed process function: it gets the records of one key of a
 * batch at a time, in arrival order, with the key's state, timers and output
 * in ctx. fail() fails every record of the key. */
export function process(name: string, f: (ctx: Context, key: Uint8Array, records: Record[]) => void): void {
  enableKeyed();
  register(name, "process").process = f;
}

/** Registers the broadcast side of a broadcast_process operator (Flink's
 * processBroadcastElement): it gets a batch of the broadcast input's records,
 * in arrival order, and reads and writes BroadcastStates. It has no key
 * (emitValue emits with an empty key), no keyed state and no timers: those
 * calls trap. fail() fails every record of the batch. */
export function processBroadcast(name: string, f: (ctx: Context, records: Record[]) => void): void {
  enableKeyed();
  register(name, "process_broadcast").processBroadcast = f;
}

/** Registers the function that handles a process function's timers, one
 * timer of one key at a time. */
export function onTimer(name: string, f: (ctx: Context, key: Uint8Array, timer: Timer) => void): void {
  enableKeyed();
  register(name, "on_timer").onTimer = f;
}

/** Log levels. */
export enum Level {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
}

// @ts-ignore: decorator
@external("platform", "log")
declare function platformLog(level: i32, ptr: usize, len: usize): void;

/** Writes one line into the platform's logs at a level. */
export function log(level: Level, message: string): void {
  const b = String.UTF8.encode(message);
  platformLog(level, changetype<usize>(b), <usize>b.byteLength);
}
