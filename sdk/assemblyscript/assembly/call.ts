// The registry of functions and the dispatch of a frame's records to them.

import { bufferLength, putArray, putBytes, putI64, putString, putU32, putU8, setU32, truncate } from "./buffer";
import { Context, NO_WATERMARK, TimeDomain, Timer, enter, states } from "./keyed";
import { Header, Output, Record } from "./record";

const TAG_RECORD: u8 = 1;
const TAG_OUTPUT: u8 = 8;
const TAG_ERROR: u8 = 2;
const TAG_KEEP: u8 = 3;
const TAG_KEY: u8 = 4;
const TAG_TIMESTAMP: u8 = 5;
const TAG_ACCUMULATOR: u8 = 6;
const TAG_WATERMARK: u8 = 7;
const OP_ADD: u8 = 1;
const OP_MERGE: u8 = 2;
const OP_RESULT: u8 = 3;
const OP_EVICT_BEFORE: u8 = 8;
const OP_EVICT_AFTER: u8 = 9;
const HAS_KEY: u8 = 1;
const HAS_TIMESTAMP: u8 = 2;
const HAS_HEADERS: u8 = 4;

/** The input index of an error entry that fails the whole frame. */
const ALL_RECORDS: u32 = 0xffffffff;

/** A registered function: its name, kind, and the function of that kind. */
class Fn {
  map: ((r: Record) => Output) | null = null;
  filter: ((r: Record) => bool) | null = null;
  flatMap: ((r: Record, out: Emitter) => void) | null = null;
  key: ((r: Record) => Uint8Array) | null = null;
  timestamp: ((r: Record) => i64) | null = null;
  process: ((ctx: Context, key: Uint8Array, records: Record[]) => void) | null = null;
  onTimer: ((ctx: Context, key: Uint8Array, timer: Timer) => void) | null = null;
  processBroadcast: ((ctx: Context, records: Record[]) => void) | null = null;
  aggregate: AggregateFns | null = null;
  reduce: ((acc: Uint8Array, value: Uint8Array) => Uint8Array) | null = null;
  windowProcess: ((key: Uint8Array, w: Window, records: Record[], out: Emitter) => void) | null = null;
  windowState: ((ctx: Context, key: Uint8Array, w: Window, records: Record[]) => void) | null = null;
  join: ((key: Uint8Array, w: Window, left: Record, right: Record, out: Emitter) => void) | null = null;
  coGroup: ((key: Uint8Array, w: Window, left: Record[], right: Record[], out: Emitter) => void) | null = null;
  sessionGap: ((r: Record) => i64) | null = null;
  watermark: ((r: Record) => i64) | null = null;
  lookupRequest: ((r: Record, ask: Lookups) => void) | null = null;
  lookupResult: ((r: Record, results: LookupResult[], out: Emitter) => void) | null = null;
  evictor: ((e: Eviction) => void) | null = null;

  constructor(public name: string, public kind: string) {}
}

/** The result of one lookup: found (the KV key exists, or the HTTP GET
 * answered 2xx) and the value (the entry's value or the body). */
export class LookupResult {
  constructor(public found: bool, public value: Uint8Array) {}
}

/** Collects the lookups a lookup_request function asks for one record
 * (docs/ABI.md, Async lookups). */
export class Lookups {
  index: u32 = 0;
  count: u32 = 0;

  /** Asks for key of NATS KV bucket. */
  kv(bucket: string, key: Uint8Array): void {
    this.ask(1, Uint8Array.wrap(String.UTF8.encode(bucket)), key);
  }

  /** Asks for the body of an HTTP GET of url, whose host must be on the
   * job's lookups.http.allow list. */
  httpGet(url: string): void {
    this.ask(2, Uint8Array.wrap(String.UTF8.encode(url)), EMPTY);
  }

  private ask(kind: u8, target: Uint8Array, key: Uint8Array): void {
    putEntry(TAG_RECORD, this.index);
    putU8(0);
    putU32(<u32>(1 + 4 + target.length + 4 + key.length));
    putU8(kind);
    putArray(target);
    putArray(key);
    this.count++;
  }
}

const asker = new Lookups();
const results = new Array<LookupResult>();

const functions = new Array<Fn>();

export function register(name: string, kind: string): Fn {
  assert(name.length > 0, "a function needs a non-empty name");
  for (let i = 0; i < functions.length; i++) {
    assert(functions[i].name != name, "function registered twice");
  }
  const f = new Fn(name, kind);
  functions.push(f);
  return f;
}

/** Receives the records a flat map, window process, join or coGroup
 * function emits for one input, window or group. */
export class Emitter {
  index: u32 = 0;
  count: u32 = 0;
  base: Record = record;
  /** The timestamp of outputs that set none, when not 0: the later of the
   * pair's timestamps in an interval join. */
  stamp: i64 = 0;

  /** Emits one record; it is copied at once. */
  emit(o: Output): void {
    putOutput(this.index, o, this.base, this.stamp);
    this.count++;
  }

  /** Emits one record on the side output tag (Flink's ctx.output(tag,
   * value)) from a window process, join or coGroup function; it inherits as
   * emit's records do. A tag the operator does not declare in its
   * side_outputs fails the group. */
  output(tag: string, o: Output): void {
    putOutput(this.index, o, this.base, this.stamp, tag);
    this.count++;
  }
}

/** A window's bounds in milliseconds: it holds the records with start <=
 * timestamp < end; its results are stamped end - 1. */
export class Window {
  constructor(public start: i64, public end: i64) {}
}

/** A window an evictor is asked about (Flink's Evictor): its key, bounds
 * and records (in the order they were added), the operator's watermark,
 * and whether the evictor runs after the window function (else before).
 * Records are kept unless the evictor calls evict. */
export class Eviction {
  key: Uint8Array = new Uint8Array(0);
  window: Window = new Window(0, 0);
  records: Record[] = [];
  watermark: i64 = 0;
  after: bool = false;
  /** The keep bitmap the SDK answers: bit i % 8 of byte i / 8 keeps
   * record i. */
  keep: Uint8Array = new Uint8Array(0);

  /** Removes record i from the window (i < records.length; past it
   * aborts). */
  evict(i: i32): void {
    if (i < 0 || i >= this.records.length) unreachable();
    this.keep[i >> 3] = <u8>(<i32>this.keep[i >> 3] & ~(1 << (i & 7)));
  }

  /** Reports whether record i has been evicted. */
  evicted(i: i32): bool {
    return (<i32>this.keep[i >> 3] & (1 << (i & 7))) == 0;
  }
}

/** The Eviction of every evictor call, reused from window to window. */
const eviction = new Eviction();

/** Runs an evictor over the window of group g: answers its keep bitmap
 * unless it failed. */
function runEvictor(f: (e: Eviction) => void, op: u8, g: u32, key: Uint8Array, w: Window, records: Record[]): void {
  if (op != OP_EVICT_BEFORE && op != OP_EVICT_AFTER) {
    fail("udf: evictor called with an unknown op");
    return;
  }
  const n = records.length;
  const keep = new Uint8Array((n + 7) >> 3);
  keep.fill(0xff);
  const rest: i32 = n & 7;
  const last: i32 = (1 << rest) - 1;
  if (rest) keep[keep.length - 1] = <u8>last;
  eviction.key = key;
  eviction.window = w;
  eviction.records = records;
  eviction.watermark = context.watermark;
  eviction.after = op == OP_EVICT_AFTER;
  eviction.keep = keep;
  f(eviction);
  if (!failure) putAccumulator(g, keep);
}

/** An incremental window aggregate over accumulator bytes, which the
 * platform stores between calls (Flink's AggregateFunction). */
export class AggregateFns {
  constructor(
    public create: () => Uint8Array,
    public add: (acc: Uint8Array, r: Record) => Uint8Array,
    public merge: (acc: Uint8Array, other: Uint8Array) => Uint8Array,
    public result: (key: Uint8Array, w: Window, acc: Uint8Array) => Uint8Array,
  ) {}
}

const record = new Record();
const emitter = new Emitter();
let failure: string | null = null;

/** Fails the current record with a message; what the function returns is
 * ignored, and records it emitted for the input are discarded. */
export function fail(message: string): void {
  failure = message;
}

function putEntry(tag: u8, index: u32): void {
  putU8(tag);
  putU32(index);
}

/** Appends a record entry for the current input. It carries the fields the
 * output sets to something other than the input's; the host inherits the
 * others. An output without a timestamp gets stamp unless it is 0. */
function putOutput(index: u32, o: Output, input: Record, stamp: i64 = 0, tag: string | null = null): void {
  if (tag != null) {
    putEntry(TAG_OUTPUT, index);
    putArray(Uint8Array.wrap(String.UTF8.encode(tag)));
  } else {
    putEntry(TAG_RECORD, index);
  }
  const base = changetype<usize>(input.frame);
  let key = o.key;
  if (key && equal(key.dataStart, key.length, base + <usize>input.keyOffset, input.keyLength)) key = null;
  const timestamp = o.hasTimestamp ? o.timestamp : stamp;
  const hasTimestamp = (o.hasTimestamp || stamp != 0) && timestamp != input.timestamp;
  let headers = o.headers;
  if (headers && sameHeaders(headers, input)) headers = null;
  let flags: u8 = 0;
  if (key) flags |= HAS_KEY;
  if (hasTimestamp) flags |= HAS_TIMESTAMP;
  if (headers) flags |= HAS_HEADERS;
  putU8(flags);
  if (key) putArray(key);
  putArray(o.value);
  if (hasTimestamp) putI64(timestamp);
  if (headers) {
    putU32(<u32>headers.length);
    for (let i = 0; i < headers.length; i++) {
      putArray(headers[i].name);
      putArray(headers[i].value);
    }
  }
}

function equal(a: usize, alen: i32, b: usize, blen: i32): bool {
  return alen == blen && memory.compare(a, b, <usize>alen) == 0;
}

/** Whether headers are the input record's. */
function sameHeaders(headers: Header[], record: Record): bool {
  if (headers.length != record.headerCount) return false;
  let p = changetype<usize>(record.frame) + <usize>record.headersOffset;
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i];
    const n = <i32>load<u32>(p);
    if (!equal(h.name.dataStart, h.name.length, p + 4, n)) return false;
    p += 4 + <usize>n;
    const m = <i32>load<u32>(p);
    if (!equal(h.value.dataStart, h.value.length, p + 4, m)) return false;
    p += 4 + <usize>m;
  }
  return true;
}

/** Makes the output a single error entry that fails the whole frame. */
export function failFrame(message: string): void {
  truncate(0);
  putU32(1);
  putEntry(TAG_ERROR, ALL_RECORDS);
  const b = String.UTF8.encode(message);
  putBytes(changetype<usize>(b), <usize>b.byteLength);
}

/** Runs f over one record; returns the number of entries written. */
function run(f: Fn, index: u32): u32 {
  const mark = bufferLength();
  failure = null;
  let n: u32 = 0;
  if (f.map) {
    const g = f.map!;
    const o = g(record);
    if (!failure) {
      putOutput(index, o, record);
      n = 1;
    }
  } else if (f.filter) {
    const g = f.filter!;
    if (g(record) && !failure) {
      putEntry(TAG_KEEP, index);
      n = 1;
    }
  } else if (f.flatMap) {
    const g = f.flatMap!;
    emitter.index = index;
    emitter.count = 0;
    g(record, emitter);
    n = emitter.count;
  } else if (f.key) {
    const g = f.key!;
    const k = g(record);
    if (!failure) {
      putEntry(TAG_KEY, index);
      putArray(k);
      n = 1;
    }
  } else if (f.timestamp) {
    const g = f.timestamp!;
    const ts = g(record);
    if (!failure) {
      putEntry(TAG_TIMESTAMP, index);
      putI64(ts);
      n = 1;
    }
  } else if (f.lookupRequest) {
    const g = f.lookupRequest!;
    asker.index = index;
    asker.count = 0;
    g(record, asker);
    n = asker.count;
  } else if (f.lookupResult) {
    const g = f.lookupResult!;
    emitter.index = index;
    emitter.count = 0;
    g(record, results, emitter);
    n = emitter.count;
  } else {
    const g = f.watermark!;
    const wm = g(record);
    if (!failure && wm != NO_WATERMARK) {
      putEntry(TAG_WATERMARK, index);
      putI64(wm);
      n = 1;
    }
  }
  const msg = failure;
  if (msg) {
    truncate(mark);
    putEntry(TAG_ERROR, index);
    const b = String.UTF8.encode(msg);
    putBytes(changetype<usize>(b), <usize>b.byteLength);
    failure = null;
    return 1;
  }
  return n;
}

/** A frame reader's position, or the reason the frame is malformed. */
let off: usize = 0;
let end: usize = 0;
let bad: string | null = null;
let badAt: usize = 0;

function need(n: usize): bool {
  if (bad) return false;
  if (n > end - off) {
    bad = "want " + n.toString() + " bytes, have " + (end - off).toString();
    badAt = off;
    return false;
  }
  return true;
}

function readU32(): u32 {
  if (!need(4)) return 0;
  const v = load<u32>(off);
  off += 4;
  return v;
}

/** Skips a length and its bytes; returns the offset of the bytes. */
function skipBytes(): usize {
  const n = <usize>readU32();
  if (!need(n)) return off;
  const at = off;
  off += n;
  return at;
}

/** Decodes the record at the reader's position into r. */
function readRecord(r: Record, frame: ArrayBuffer): void {
  const base = changetype<usize>(frame);
  r.frame = frame;
  const key = skipBytes();
  r.keyOffset = <i32>(key - base);
  r.keyLength = <i32>(off - key);
  const value = skipBytes();
  r.valueOffset = <i32>(value - base);
  r.valueLength = <i32>(off - value);
  if (need(8)) {
    r.timestamp = load<i64>(off);
    off += 8;
  }
  const count = readU32();
  if (!bad && <u64>count * 8 > <u64>(end - off)) {
    bad = "header count " + count.toString() + " exceeds the frame";
    badAt = off - 4;
  }
  r.headersOffset = <i32>(off - base);
  r.headerCount = <i32>count;
  for (let h: u32 = 0; h < count && !bad; h++) {
    skipBytes();
    skipBytes();
  }
  r.reset();
}

function readU8(): u8 {
  if (!need(1)) return 0;
  const v = load<u8>(off);
  off += 1;
  return v;
}

function readI64(): i64 {
  if (!need(8)) return 0;
  const v = load<i64>(off);
  off += 8;
  return v;
}

const GROUP_WINDOW: u8 = 0x01;
const GROUP_ACC: u8 = 0x02;
const GROUP_ACC2: u8 = 0x04;
const GROUP_TIMER: u8 = 0x08;
const GROUP_TWO_SIDED: u8 = 0x10;

/** The context of keyed calls, the records of a group (its left side, and
 * right holds a two-sided group's right side), and the output index of what
 * a keyed function emits. */
const context = new Context();
const pool = new Array<Record>();
const group = new Array<Record>();
const right = new Array<Record>();
/** The head of the group readGroup read last: its flags, key, window (zero
 * without one), accumulators (empty without them) and timer. */
class GroupHead {
  flags: u8 = 0;
  key: Uint8Array = EMPTY;
  window: Window = NO_WINDOW;
  acc: Uint8Array = EMPTY;
  acc2: Uint8Array = EMPTY;
  timer: Timer = NO_TIMER;
}
const EMPTY = new Uint8Array(0);
const NO_WINDOW = new Window(0, 0);
const NO_TIMER = new Timer(0, TimeDomain.EventTime);
const head = new GroupHead();

/** Reads the next group of a grouped frame: its head into head, its records
 * into group and, for a two-sided group, its right side into right. False
 * when the frame is bad (bad says why). */
function readGroup(frame: ArrayBuffer): bool {
  const flagsAt = off;
  const flags = readU8();
  if (!bad && (flags & ~(GROUP_WINDOW | GROUP_ACC | GROUP_ACC2 | GROUP_TIMER | GROUP_TWO_SIDED)) != 0) {
    bad = "unknown group flags " + flags.toString();
    badAt = flagsAt;
    return false;
  }
  head.flags = flags;
  head.key = viewBytes(frame);
  head.window = NO_WINDOW;
  if (flags & GROUP_WINDOW) {
    const start = readI64();
    head.window = new Window(start, readI64());
  }
  head.acc = flags & GROUP_ACC ? viewBytes(frame) : EMPTY;
  head.acc2 = flags & GROUP_ACC2 ? viewBytes(frame) : EMPTY;
  head.timer = NO_TIMER;
  if (flags & GROUP_TIMER) {
    const ts = readI64();
    head.timer = new Timer(ts, readU8() == 1 ? TimeDomain.ProcessingTime : TimeDomain.EventTime);
  }
  const n = <i32>readU32();
  group.length = 0;
  for (let i = 0; i < n && !bad; i++) {
    if (i == pool.length) pool.push(new Record());
    readRecord(pool[i], frame);
    group.push(pool[i]);
  }
  right.length = 0;
  if (flags & GROUP_TWO_SIDED) {
    const m = <i32>readU32();
    for (let i = 0; i < m && !bad; i++) {
      if (n + i == pool.length) pool.push(new Record());
      readRecord(pool[n + i], frame);
      right.push(pool[n + i]);
    }
  }
  return !bad;
}

let keyedIndex: u32 = 0;
let keyedCount: u32 = 0;

function emitKeyed(o: Output): void {
  putOutput(keyedIndex, o, context.base);
  keyedCount++;
}

function outputKeyed(tag: string, o: Output): void {
  putOutput(keyedIndex, o, context.base, 0, tag);
  keyedCount++;
}

/** The runner of keyed functions, set when one is registered: a module
 * without keyed functions does not compile it, nor import the state and
 * timer functions. */
let keyedRunner: ((f: Fn, frame: ArrayBuffer, ptr: usize) => void) | null = null;

export function enableKeyed(): void {
  keyedRunner = callKeyed;
}

/** Runs a process or on_timer function over the grouped frame at ptr. */
function callKeyed(f: Fn, frame: ArrayBuffer, ptr: usize): void {
  readU8();
  context.watermark = readI64();
  context.processingTime = readI64();
  context.emitFn = emitKeyed;
  context.outputFn = outputKeyed;
  context.window = false;
  const groups = readU32();
  putU32(0);
  let entries: u32 = 0;
  let index: u32 = 0;
  for (let g: u32 = 0; g < groups && !bad; g++) {
    if (!readGroup(frame)) break;
    const flags = head.flags;
    const key = head.key;
    const timer = head.timer;
    const n = group.length;
    const mark = bufferLength();
    let first = index;
    keyedCount = 0;
    failure = null;
    context.key = key;
    if (f.process || f.processBroadcast) {
      if (n == 0) continue;
      index += <u32>n;
      keyedIndex = index - 1;
      context.base = group[n - 1];
      enter(g);
      context.active = true;
      if (f.process) {
        const p = f.process!;
        p(context, key, group);
      } else {
        const b = f.processBroadcast!;
        b(context, group);
      }
    } else {
      if ((flags & GROUP_TIMER) == 0) {
        failFrame("udf: on_timer group " + g.toString() + " carries no timer");
        return;
      }
      first = g;
      index = g + 1;
      keyedIndex = g;
      const base = new Record();
      base.frame = frame;
      base.keyOffset = <i32>(key.dataStart - changetype<usize>(frame));
      base.keyLength = key.length;
      base.timestamp = timer.timestamp;
      context.base = base;
      enter(g);
      context.active = true;
      const t = f.onTimer!;
      t(context, key, timer);
    }
    context.active = false;
    const msg = failure;
    if (msg) {
      truncate(mark);
      const b = String.UTF8.encode(msg);
      for (let i = first; i < index; i++) {
        putEntry(TAG_ERROR, i);
        putBytes(changetype<usize>(b), <usize>b.byteLength);
      }
      entries += index - first;
      failure = null;
    } else {
      entries += keyedCount;
    }
  }
  if (bad) {
    failFrame("malformed frame at byte " + (badAt - ptr).toString() + ": " + bad!);
  } else if (off != end) {
    failFrame("malformed frame at byte " + (off - ptr).toString() + ": " + (end - off).toString() + " trailing bytes after " + groups.toString() + " groups");
  } else {
    setU32(0, entries);
  }
}

/** The runner of window process functions with state, set when one is
 * registered: a module without them does not compile it, nor import enter. */
let windowStateRunner: ((f: Fn, g: u32, key: Uint8Array, w: Window, base: Record) => u32) | null = null;

export function enableWindowState(): void {
  windowStateRunner = callWindowState;
}

/** Runs a window process function with state over group g, window w, whose
 * records are in group; returns the number of entries it wrote. It enters
 * the group only when the module declares states: the platform gives a
 * module without them no state, and its enter traps. */
function callWindowState(f: Fn, g: u32, key: Uint8Array, w: Window, base: Record): u32 {
  keyedIndex = g;
  keyedCount = 0;
  context.key = key;
  context.base = base;
  context.emitFn = emitKeyed;
  context.outputFn = outputKeyed;
  context.window = true;
  if (states.length > 0) enter(g);
  context.active = true;
  const p = f.windowState!;
  p(context, key, w, group);
  context.active = false;
  context.window = false;
  return keyedCount;
}

/** Reads a byte string at the reader's position as a view into frame. */
function viewBytes(frame: ArrayBuffer): Uint8Array {
  const at = skipBytes();
  return Uint8Array.wrap(frame, <i32>(at - changetype<usize>(frame)), <i32>(off - at));
}

function putAccumulator(g: u32, acc: Uint8Array): void {
  putEntry(TAG_ACCUMULATOR, g);
  putArray(acc);
}

/** The error of a join or co_group group that has no right side. */
const ONE_SIDED = "udf: join group without a right side";

/** Runs a window or join function (aggregate, reduce, window_process with
 * or without state, session_gap, join, co_group) over the grouped frame at
 * ptr. */
function callWindow(f: Fn, frame: ArrayBuffer, ptr: usize): void {
  const op = readU8();
  context.watermark = readI64();
  context.processingTime = readI64();
  const groups = readU32();
  putU32(0);
  let entries: u32 = 0;
  let index: u32 = 0;
  for (let g: u32 = 0; g < groups && !bad; g++) {
    if (!readGroup(frame)) break;
    const flags = head.flags;
    const key = head.key;
    const keyOffset = <i32>(key.dataStart - changetype<usize>(frame));
    const w = head.window;
    const hasAcc = (flags & GROUP_ACC) != 0;
    const acc = head.acc;
    const acc2 = head.acc2;
    const n = group.length;
    const mark = bufferLength();
    failure = null;
    if ((f.join || f.coGroup) && (flags & GROUP_TWO_SIDED) == 0) fail(ONE_SIDED);
    let written: u32 = 1;
    const base = new Record();
    base.frame = frame;
    base.keyOffset = keyOffset;
    base.keyLength = key.length;
    base.timestamp = w.end - 1;
    if (f.aggregate) {
      const a = f.aggregate!;
      if (op == OP_ADD) {
        let x = hasAcc ? acc : a.create();
        for (let i = 0; i < n && !failure; i++) x = a.add(x, group[i]);
        if (!failure) putAccumulator(g, x);
      } else if (op == OP_MERGE) {
        const x = a.merge(acc, acc2);
        if (!failure) putAccumulator(g, x);
      } else if (op == OP_RESULT) {
        const value = a.result(key, w, acc);
        if (!failure) putOutput(g, new Output(value), base);
      } else {
        fail("udf: aggregate called with op " + op.toString());
      }
    } else if (f.reduce) {
      const r = f.reduce!;
      if (op == OP_ADD) {
        let x: Uint8Array | null = hasAcc ? acc : null;
        for (let i = 0; i < n && !failure; i++) {
          const v = group[i].value;
          x = x ? r(x, v) : v;
        }
        if (!x) fail("udf: reduce called without a value");
        else if (!failure) putAccumulator(g, x);
      } else if (op == OP_MERGE) {
        const x = r(acc, acc2);
        if (!failure) putAccumulator(g, x);
      } else {
        fail("udf: reduce called with op " + op.toString());
      }
    } else if (f.windowProcess) {
      const p = f.windowProcess!;
      emitter.index = g;
      emitter.count = 0;
      emitter.base = base;
      p(key, w, group, emitter);
      emitter.base = record;
      written = emitter.count;
    } else if (f.evictor) {
      runEvictor(f.evictor!, op, g, key, w, group);
    } else if (f.windowState) {
      const run = windowStateRunner!;
      written = run(f, g, key, w, base);
    } else if (f.join) {
      joinPairs(f.join!, g, base, key, w, (flags & GROUP_WINDOW) == 0);
      written = emitter.count;
    } else if (f.coGroup) {
      const c = f.coGroup!;
      emitter.index = g;
      emitter.count = 0;
      emitter.base = base;
      if (!failure) c(key, w, group, right, emitter);
      emitter.base = record;
      written = emitter.count;
    } else {
      const s = f.sessionGap!;
      for (let i = 0; i < n; i++, index++) {
        failure = null;
        const gap = s(group[i]);
        const msg = failure;
        if (msg) {
          putEntry(TAG_ERROR, index);
          const b = String.UTF8.encode(msg);
          putBytes(changetype<usize>(b), <usize>b.byteLength);
        } else {
          putEntry(TAG_TIMESTAMP, index);
          putI64(gap);
        }
      }
      failure = null;
      written = <u32>n;
    }
    const msg = failure;
    if (msg) {
      truncate(mark);
      putEntry(TAG_ERROR, g);
      const b = String.UTF8.encode(msg);
      putBytes(changetype<usize>(b), <usize>b.byteLength);
      failure = null;
      written = 1;
    }
    entries += written;
  }
  if (bad) {
    failFrame("malformed frame at byte " + (badAt - ptr).toString() + ": " + bad!);
  } else if (off != end) {
    failFrame("malformed frame at byte " + (off - ptr).toString() + ": " + (end - off).toString() + " trailing bytes after " + groups.toString() + " groups");
  } else {
    setU32(0, entries);
  }
}

/** Calls a join function for every pair of group g, each left record with
 * each right record in order, until one fails; an interval join's pair
 * results are stamped with the later of the pair's timestamps. */
function joinPairs(
  j: (key: Uint8Array, w: Window, left: Record, right: Record, out: Emitter) => void,
  g: u32, base: Record, key: Uint8Array, w: Window, interval: bool,
): void {
  emitter.index = g;
  emitter.count = 0;
  emitter.base = base;
  for (let i = 0; i < group.length && !failure; i++) {
    const l = group[i];
    for (let k = 0; k < right.length && !failure; k++) {
      const r = right[k];
      emitter.stamp = interval ? max(l.timestamp, r.timestamp) : 0;
      j(key, w, l, r, emitter);
    }
  }
  emitter.stamp = 0;
  emitter.base = record;
}

/** Runs function fn over the frame of len bytes at ptr, in frame. */
export function call(fn: u32, frame: ArrayBuffer, ptr: usize, len: usize): void {
  truncate(0);
  if (fn >= <u32>functions.length) {
    failFrame("udf: no function with index " + fn.toString() + "; the module has " + functions.length.toString());
    return;
  }
  const f = functions[fn];
  off = ptr;
  end = ptr + len;
  bad = null;
  if (f.process || f.onTimer || f.processBroadcast) {
    const run = keyedRunner!;
    run(f, frame, ptr);
    return;
  }
  if (f.aggregate || f.reduce || f.windowProcess || f.windowState || f.sessionGap || f.join || f.coGroup || f.evictor) {
    callWindow(f, frame, ptr);
    return;
  }
  const records = readU32();
  putU32(0);
  let entries: u32 = 0;
  for (let i: u32 = 0; i < records && !bad; i++) {
    readRecord(record, frame);
    if (f.lookupResult) readResults(frame);
    if (bad) break;
    entries += run(f, i);
  }
  if (bad) {
    failFrame("malformed frame at byte " + (badAt - ptr).toString() + ": " + bad!);
  } else if (off != end) {
    failFrame("malformed frame at byte " + (off - ptr).toString() + ": " + (end - off).toString() + " trailing bytes after " + records.toString() + " records");
  } else {
    setU32(0, entries);
  }
}

/** Reads the results that follow a record in a lookup result frame. */
function readResults(frame: ArrayBuffer): void {
  const n = readU32();
  if (!bad && <u64>n * 5 > <u64>(end - off)) {
    bad = "result count " + n.toString() + " exceeds the frame";
    badAt = off - 4;
  }
  results.length = 0;
  for (let i: u32 = 0; i < n && !bad; i++) {
    const found = readU8() == 0;
    results.push(new LookupResult(found, viewBytes(frame)));
  }
}

/** Writes the self-description into the buffer. */
export function describe(): void {
  truncate(0);
  putString('{"abi":1,"functions":[');
  for (let i = 0; i < functions.length; i++) {
    if (i > 0) putU8(0x2c);
    putString('{"name":');
    putJSONString(functions[i].name);
    putString(',"kind":"' + functions[i].kind + '"}');
  }
  putU8(0x5d);
  if (states.length > 0) {
    putString(',"states":[');
    for (let i = 0; i < states.length; i++) {
      if (i > 0) putU8(0x2c);
      putString('{"name":');
      putJSONString(states[i].name);
      putString(',"kind":"' + states[i].kind + '"');
      if (states[i].ttl.length > 0) {
        putString(',"ttl":');
        putJSONString(states[i].ttl);
      }
      if (states[i].broadcast) putString(',"broadcast":true');
      putU8(0x7d);
    }
    putU8(0x5d);
  }
  putU8(0x7d);
}

function putJSONString(s: string): void {
  const hex = "0123456789abcdef";
  const b = String.UTF8.encode(s);
  const p = changetype<usize>(b);
  putU8(0x22);
  for (let i = 0; i < b.byteLength; i++) {
    const c = load<u8>(p + <usize>i);
    if (c == 0x22 || c == 0x5c) {
      putU8(0x5c);
      putU8(c);
    } else if (c < 0x20) {
      putString("\\u00" + hex.charAt(c >> 4) + hex.charAt(c & 15));
    } else {
      putU8(c);
    }
  }
  putU8(0x22);
}
