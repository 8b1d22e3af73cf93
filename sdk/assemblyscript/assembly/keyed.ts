// Keyed process functions: the context they see, the state handles, and the
// decoding of grouped frames for them (docs/ABI.md, Keyed process
// functions).

import { Header, Output, Record } from "./record";

// @ts-ignore: decorator
@external("platform", "enter") declare function hostEnter(group: u32): void;
// @ts-ignore: decorator
@external("platform", "value_get") declare function hostValueGet(state: u32, buf: usize, cap: usize): i32;
// @ts-ignore: decorator
@external("platform", "value_set") declare function hostValueSet(state: u32, ptr: usize, len: usize): void;
// @ts-ignore: decorator
@external("platform", "state_clear") declare function hostStateClear(state: u32): void;
// @ts-ignore: decorator
@external("platform", "list_append") declare function hostListAppend(state: u32, ptr: usize, len: usize): void;
// @ts-ignore: decorator
@external("platform", "list_get") declare function hostListGet(state: u32, buf: usize, cap: usize): i32;
// @ts-ignore: decorator
@external("platform", "map_get") declare function hostMapGet(state: u32, key: usize, keyLen: usize, buf: usize, cap: usize): i32;
// @ts-ignore: decorator
@external("platform", "map_put") declare function hostMapPut(state: u32, key: usize, keyLen: usize, ptr: usize, len: usize): void;
// @ts-ignore: decorator
@external("platform", "map_remove") declare function hostMapRemove(state: u32, key: usize, keyLen: usize): void;
// @ts-ignore: decorator
@external("platform", "map_entries") declare function hostMapEntries(state: u32, buf: usize, cap: usize): i32;
// @ts-ignore: decorator
@external("platform", "timer_register") declare function hostTimerRegister(domain: u32, timestamp: i64): void;
// @ts-ignore: decorator
@external("platform", "timer_delete") declare function hostTimerDelete(domain: u32, timestamp: i64): void;

/** Enters group g: later state and timer calls act on its key. */
export function enter(g: u32): void {
  hostEnter(g);
}

/** Time domains of timers. */
export enum TimeDomain {
  EventTime = 0,
  ProcessingTime = 1,
}

/** A timer that fired. */
export class Timer {
  constructor(public timestamp: i64, public domain: TimeDomain) {}
}

/** A declared state. */
export class StateDecl {
  /** Set for a broadcast state (broadcast.ts). */
  broadcast: bool = false;
  constructor(public name: string, public kind: string, public ttl: string) {}
}

export const states = new Array<StateDecl>();

function declare(name: string, kind: string, ttl: string): u32 {
  assert(name.length > 0, "a state needs a non-empty name");
  for (let i = 0; i < states.length; i++) assert(states[i].name != name, "state declared twice");
  states.push(new StateDecl(name, kind, ttl));
  return <u32>(states.length - 1);
}

/** The result buffer of state reads, grown to what the platform asks for. */
let scratch = new Uint8Array(256);

function copy(b: Uint8Array): Uint8Array {
  return b.slice(0);
}

/** A value state: one value per key. Declare it at the top level, with an
 * optional TTL (a Go duration such as "1h"). */
export class ValueState {
  private id: u32;

  constructor(name: string, ttl: string = "") {
    this.id = declare(name, "value", ttl);
  }

  /** The current key's value (a copy), or null. */
  get(ctx: Context): Uint8Array | null {
    ctx.check();
    let n = hostValueGet(this.id, scratch.dataStart, <usize>scratch.length);
    if (n > scratch.length) {
      scratch = new Uint8Array(n);
      n = hostValueGet(this.id, scratch.dataStart, <usize>scratch.length);
    }
    return n < 0 ? null : copy(scratch.subarray(0, n));
  }

  /** Sets the current key's value. */
  set(ctx: Context, value: Uint8Array): void {
    ctx.check();
    hostValueSet(this.id, value.dataStart, <usize>value.length);
  }

  /** Removes the current key's value. */
  clear(ctx: Context): void {
    ctx.check();
    hostStateClear(this.id);
  }
}

/** Reads a list or map state into scratch. */
function readAll(list: bool, id: u32): void {
  let n = list ? hostListGet(id, scratch.dataStart, <usize>scratch.length) : hostMapEntries(id, scratch.dataStart, <usize>scratch.length);
  if (n > scratch.length) {
    scratch = new Uint8Array(n);
    if (list) hostListGet(id, scratch.dataStart, <usize>scratch.length);
    else hostMapEntries(id, scratch.dataStart, <usize>scratch.length);
  }
}

/** Splits scratch, a list or map read, into count times per byte strings. */
function elements(per: i32): Uint8Array[] {
  const p = scratch.dataStart;
  const count = <i32>load<u32>(p);
  const out = new Array<Uint8Array>(count * per);
  let off = 4;
  for (let i = 0; i < count * per; i++) {
    const n = <i32>load<u32>(p + <usize>off);
    out[i] = scratch.slice(off + 4, off + 4 + n);
    off += 4 + n;
  }
  return out;
}

/** A list state: a list of values per key, in append order. */
export class ListState {
  private id: u32;

  constructor(name: string, ttl: string = "") {
    this.id = declare(name, "list", ttl);
  }

  /** Appends a value to the current key's list. */
  append(ctx: Context, value: Uint8Array): void {
    ctx.check();
    hostListAppend(this.id, value.dataStart, <usize>value.length);
  }

  /** The current key's values (copies), in append order. */
  get(ctx: Context): Uint8Array[] {
    ctx.check();
    readAll(true, this.id);
    return elements(1);
  }

  /** Removes the current key's list. */
  clear(ctx: Context): void {
    ctx.check();
    hostStateClear(this.id);
  }
}

/** A map state: a map from user keys to values per key. */
export class MapState {
  private id: u32;

  constructor(name: string, ttl: string = "") {
    this.id = declare(name, "map", ttl);
  }

  /** The value under a user key (a copy), or null. */
  get(ctx: Context, key: Uint8Array): Uint8Array | null {
    ctx.check();
    let n = hostMapGet(this.id, key.dataStart, <usize>key.length, scratch.dataStart, <usize>scratch.length);
    if (n > scratch.length) {
      scratch = new Uint8Array(n);
      n = hostMapGet(this.id, key.dataStart, <usize>key.length, scratch.dataStart, <usize>scratch.length);
    }
    return n < 0 ? null : copy(scratch.subarray(0, n));
  }

  /** Sets the value under a user key. */
  put(ctx: Context, key: Uint8Array, value: Uint8Array): void {
    ctx.check();
    hostMapPut(this.id, key.dataStart, <usize>key.length, value.dataStart, <usize>value.length);
  }

  /** Removes a user key. */
  remove(ctx: Context, key: Uint8Array): void {
    ctx.check();
    hostMapRemove(this.id, key.dataStart, <usize>key.length);
  }

  /** The entries, in bytewise user key order: key, value, key, value, ... */
  entries(ctx: Context): Uint8Array[] {
    ctx.check();
    readAll(false, this.id);
    return elements(2);
  }

  /** Removes the current key's map. */
  clear(ctx: Context): void {
    ctx.check();
    hostStateClear(this.id);
  }
}

/** The watermark before the first one. */
export const NO_WATERMARK: i64 = i64.MIN_VALUE;

/** What a keyed function sees of the platform during its call for one key
 * (and, for a window process function with state, one window): the key,
 * time, state (through the state handles), timers and output. */
export class Context {
  key: Uint8Array = new Uint8Array(0);
  watermark: i64 = NO_WATERMARK;
  processingTime: i64 = 0;
  active: bool = false;
  /** The record outputs inherit from: the group's last record, the timer,
   * or the window's key and end - 1. */
  base: Record = new Record();
  /** Set for a window process function, which has no timers. */
  window: bool = false;
  emitFn: (o: Output) => void = (o: Output): void => {};
  outputFn: (tag: string, o: Output) => void = (tag: string, o: Output): void => {};

  check(): void {
    assert(this.active, "state, timers or emit used outside a keyed call");
  }

  /** Aborts a timer call of a window process function: it has none (nor
   * has Flink's ProcessWindowFunction), and the platform would trap it. */
  private checkTimers(): void {
    this.check();
    assert(!this.window, "window process functions have no timers");
  }

  /** Emits an output; the fields it does not set are the group's last
   * record's (for on_timer: the timer's key and timestamp, no headers; for
   * a window: its key and end - 1, no headers). */
  emit(o: Output): void {
    this.check();
    const f = this.emitFn;
    f(o);
  }

  /** Emits a record as it is: its key, value, timestamp and headers. */
  emitRecord(r: Record): void {
    this.emit(new Output(r.value).withKey(r.key).withTimestamp(r.timestamp).withHeaders(r.headers));
  }

  /** Emits a value with the current key, the last record's (the timer's,
   * or the window's end - 1) timestamp and no headers. */
  emitValue(value: Uint8Array): void {
    this.emit(new Output(value).withKey(this.key).withTimestamp(this.base.timestamp).withHeaders(new Array<Header>(0)));
  }

  /** Emits an output on the side output tag (Flink's ctx.output(tag,
   * value)); it inherits as emit's outputs do, so it carries the event time
   * of the record (or timer, or window) that caused it. A tag the operator
   * does not declare in its side_outputs fails the group under the job's
   * on_udf_error. */
  output(tag: string, o: Output): void {
    this.check();
    const f = this.outputFn;
    f(tag, o);
  }

  /** Emits a value on the side output tag with the current key, the
   * timestamp emitValue gives and no headers. */
  outputValue(tag: string, value: Uint8Array): void {
    this.output(tag, new Output(value).withKey(this.key).withTimestamp(this.base.timestamp).withHeaders(new Array<Header>(0)));
  }

  /** Registers (once, however often called) a timer for the current key. */
  registerTimer(domain: TimeDomain, timestamp: i64): void {
    this.checkTimers();
    hostTimerRegister(<u32>domain, timestamp);
  }

  /** Deletes the current key's timer, if registered. */
  deleteTimer(domain: TimeDomain, timestamp: i64): void {
    this.checkTimers();
    hostTimerDelete(<u32>domain, timestamp);
  }
}
