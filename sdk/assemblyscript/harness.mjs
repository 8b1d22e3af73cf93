// A test harness for the keyed functions of a module built with the
// AssemblyScript SDK (Flink's operator test harnesses), for node: it
// instantiates the compiled module with in-memory stand-ins for the
// platform's state and timer imports and drives its process, on_timer and
// process_broadcast functions through the same frames as the platform, with
// explicit processing time and watermarks.
//
// State follows the declared TTL (an entry expires TTL after it was last
// written, against the harness's processing time, and is never returned
// once expired); a job's TTL overrides do not apply. Timers fire in
// timestamp and key order when their clock reaches them, and timers that
// on_timer registers fire in the same move when they are due too.
//
// Times are BigInts (milliseconds); keys and values are Uint8Arrays or
// strings (UTF-8).
//
//     import { Harness } from "platform-udf/harness.mjs";
//     const h = await Harness.load("dedup-as.wasm");
//     h.process("dedup", "a", [{ value: "a1", timestamp: 1n }]);
//     h.setProcessingTime(3_600_000n);

import { readFile } from "node:fs/promises";

/** The watermark before the first one. */
export const NO_WATERMARK = -(1n << 63n);

export const EVENT_TIME = 0;
export const PROCESSING_TIME = 1;

const OP_PROCESS = 0;
const GROUP_TIMER = 0x08;
const TAG_RECORD = 1;
const TAG_ERROR = 2;
const TAG_OUTPUT = 8;
const HAS_KEY = 0x01;
const HAS_TIMESTAMP = 0x02;
const HAS_HEADERS = 0x04;
const ALL_RECORDS = 0xffffffff;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** bytes is b as a Uint8Array: strings are UTF-8 encoded. */
export function bytes(b) {
  if (b === undefined || b === null) return new Uint8Array(0);
  return typeof b === "string" ? encoder.encode(b) : Uint8Array.from(b);
}

/** text decodes UTF-8 bytes. */
export function text(b) {
  return decoder.decode(b);
}

/** A key of a map: the bytes, as a binary string. */
const str = (b) => {
  let s = "";
  for (const c of b) s += String.fromCharCode(c);
  return s;
};
const unstr = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));

function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** ttlMillis parses a Go duration ("1h", "90s", "1h30m", "250ms"). */
export function ttlMillis(s) {
  if (s === "0") return 0n;
  const units = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
  const re = /^([0-9]*\.?[0-9]+)([a-zµ]+)/;
  let rest = s;
  let total = 0;
  if (rest === "") throw new Error("empty duration");
  while (rest !== "") {
    const m = re.exec(rest);
    if (!m || !(m[2] in units)) throw new Error(`${JSON.stringify(s)} is not a duration`);
    total += Number(m[1]) * units[m[2]];
    rest = rest.slice(m[0].length);
  }
  return BigInt(Math.trunc(total));
}

/** A growable little-endian byte builder. */
class Builder {
  constructor() {
    this.buf = new Uint8Array(256);
    this.len = 0;
  }
  room(n) {
    if (this.len + n <= this.buf.length) return;
    const b = new Uint8Array(2 * (this.len + n));
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }
  u8(v) {
    this.room(1);
    this.buf[this.len++] = v;
  }
  u32(v) {
    this.room(4);
    new DataView(this.buf.buffer).setUint32(this.len, v, true);
    this.len += 4;
  }
  i64(v) {
    this.room(8);
    new DataView(this.buf.buffer).setBigInt64(this.len, BigInt(v), true);
    this.len += 8;
  }
  bytes(b) {
    this.u32(b.length);
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  done() {
    return this.buf.subarray(0, this.len);
  }
}

/** A reader over an output frame; errors name the byte. */
class Reader {
  constructor(b) {
    this.b = b;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.off = 0;
  }
  need(n) {
    if (this.off + n > this.b.length) {
      throw new Error(`udf: malformed output frame at byte ${this.off}: want ${n} bytes, have ${this.b.length - this.off}`);
    }
  }
  u8() {
    this.need(1);
    return this.b[this.off++];
  }
  u32() {
    this.need(4);
    const v = this.view.getUint32(this.off, true);
    this.off += 4;
    return v;
  }
  i64() {
    this.need(8);
    const v = this.view.getBigInt64(this.off, true);
    this.off += 8;
    return v;
  }
  bytes() {
    const n = this.u32();
    this.need(n);
    const b = this.b.slice(this.off, this.off + n);
    this.off += n;
    return b;
  }
}

/** Runs a module's keyed functions in node against in-memory state. */
export class Harness {
  /** load compiles and instantiates the module at path (or its bytes). */
  static async load(path, onTimer = "") {
    const wasm = typeof path === "string" ? await readFile(path) : path;
    return new Harness(wasm, onTimer);
  }

  constructor(wasm, onTimer = "") {
    this.onTimer = onTimer;
    this.watermark = NO_WATERMARK;
    this.now = 0n;
    // Slots are "<state>\0<key as a binary string>": value entries, lists
    // of entries, and Maps of user key to entry; an entry is {value, at}.
    this.values = new Map();
    this.lists = new Map();
    this.maps = new Map();
    // timers maps "<domain>\0<ts>\0<key>" to {domain, timestamp, key}.
    this.timerSet = new Map();
    this.groups = null;
    this.current = -1;
    this.broadcasting = false;
    const module = new WebAssembly.Module(wasm);
    const imports = { platform: this.imports(), env: { abort: (msg, file, line, col) => this.abort(msg, file, line, col) } };
    for (const imp of WebAssembly.Module.imports(module)) {
      if (!(imp.module in imports) || !(imp.name in imports[imp.module])) {
        throw new Error(`udf: the module imports ${imp.module}.${imp.name}, which the harness does not provide`);
      }
    }
    this.instance = new WebAssembly.Instance(module, imports);
    this.exports = this.instance.exports;
    if (this.exports._initialize) this.exports._initialize();
    const description = JSON.parse(text(this.unpack(this.exports.platform_describe())));
    this.functions = description.functions;
    this.states = (description.states || []).map((s) => ({ ...s, ttl: s.ttl ? ttlMillis(s.ttl) : 0n }));
  }

  /** memory is the module's memory now (it may grow during a call). */
  memory(ptr, len) {
    return new Uint8Array(this.exports.memory.buffer, ptr, len);
  }

  unpack(packed) {
    const p = BigInt.asUintN(64, packed);
    return this.memory(Number(p >> 32n), Number(p & 0xffffffffn)).slice();
  }

  processingTime() {
    return this.now;
  }

  /** process calls the process function name once with records ({value,
   * timestamp, headers: [[name, value]]}), all of key, and returns its
   * outputs; an output's index is its record's position in records. */
  process(name, key, records) {
    return this.recordsCall(name, "process", bytes(key), records, false);
  }

  /** processBroadcast calls a process_broadcast function with records of
   * the broadcast input. */
  processBroadcast(name, records) {
    return this.recordsCall(name, "process_broadcast", new Uint8Array(0), records, true);
  }

  /** advanceWatermark moves the watermark (never back) and fires the
   * event-time timers due; an output's index is its timer's position
   * among those fired. */
  advanceWatermark(wm) {
    if (BigInt(wm) > this.watermark) this.watermark = BigInt(wm);
    return this.fire(EVENT_TIME, this.watermark);
  }

  /** setProcessingTime moves processing time (never back) and fires the
   * processing-time timers due. */
  setProcessingTime(ms) {
    if (BigInt(ms) > this.now) this.now = BigInt(ms);
    return this.fire(PROCESSING_TIME, this.now);
  }

  /** timers lists the registered timers in domain, timestamp and key
   * order. */
  timers() {
    return [...this.timerSet.values()].sort(byFiringOrder);
  }

  /** value is the value state of key as the platform holds it, or null. */
  value(state, key) {
    const s = this.named(state, key);
    const e = s && this.values.get(s.slot);
    return e && !this.expired(s.id, e) ? e.value.slice() : null;
  }

  /** list is the unexpired values of a list state in append order. */
  list(state, key) {
    const s = this.named(state, key);
    return s ? (this.lists.get(s.slot) || []).filter((e) => !this.expired(s.id, e)).map((e) => e.value.slice()) : [];
  }

  /** map is the unexpired entries of a map state in bytewise key order, as
   * [key, value] pairs. */
  map(state, key) {
    const s = this.named(state, key);
    return s ? this.entries(s.id, s.slot).map(([k, e]) => [k, e.value.slice()]) : [];
  }

  named(state, key) {
    const id = this.states.findIndex((d) => d.name === state);
    if (id < 0) return null;
    return { id, slot: `${id}\0${this.states[id].broadcast ? "" : str(bytes(key))}` };
  }

  entries(id, slot) {
    const m = this.maps.get(slot) || new Map();
    return [...m.entries()]
      .filter(([, e]) => !this.expired(id, e))
      .map(([k, e]) => [unstr(k), e])
      .sort((a, b) => compareBytes(a[0], b[0]));
  }

  expired(id, e) {
    const ttl = this.states[id].ttl;
    return ttl > 0n && this.now >= e.at + ttl;
  }

  function(name, kind) {
    const i = this.functions.findIndex((f) => f.name === name);
    if (i < 0) throw new Error(`udf: no function ${JSON.stringify(name)} is registered`);
    if (this.functions[i].kind !== kind) {
      throw new Error(`udf: ${JSON.stringify(name)} is a ${this.functions[i].kind} function, not ${kind}`);
    }
    return i;
  }

  head(groups) {
    const b = new Builder();
    b.u8(OP_PROCESS);
    b.i64(this.watermark);
    b.i64(this.now);
    b.u32(groups);
    return b;
  }

  recordsCall(name, kind, key, records, broadcasting) {
    const fn = this.function(name, kind);
    const b = this.head(1);
    b.u8(0);
    b.bytes(key);
    b.u32(records.length);
    const inputs = [];
    for (const r of records) {
      const headers = (r.headers || []).map(([n, v]) => [bytes(n), bytes(v)]);
      b.bytes(key);
      b.bytes(bytes(r.value));
      b.i64(r.timestamp || 0n);
      b.u32(headers.length);
      for (const [n, v] of headers) {
        b.bytes(n);
        b.bytes(v);
      }
      inputs.push({ key, timestamp: BigInt(r.timestamp || 0n), headers });
    }
    return this.resolve(this.call(fn, b.done(), [key], broadcasting), inputs);
  }

  call(fn, frame, groups, broadcasting) {
    if (this.groups) throw new Error("udf: a harness call runs inside another");
    const ptr = this.exports.platform_alloc(frame.length) >>> 0;
    this.memory(ptr, frame.length).set(frame);
    this.groups = groups;
    this.current = -1;
    this.broadcasting = broadcasting;
    try {
      return this.unpack(this.exports.platform_call(fn, ptr, frame.length));
    } finally {
      this.groups = null;
      this.broadcasting = false;
    }
  }

  fire(domain, upTo) {
    const outs = [];
    let fired = 0;
    for (;;) {
      const due = [...this.timerSet.values()].filter((t) => t.domain === domain && t.timestamp <= upTo);
      if (due.length === 0) return outs;
      if (!this.onTimer) throw new Error(`udf: ${due.length} timers fired and the harness has no on_timer function`);
      const fn = this.function(this.onTimer, "on_timer");
      due.sort(byFiringOrder);
      const b = this.head(due.length);
      for (const t of due) {
        this.timerSet.delete(timerId(t.domain, t.timestamp, t.key));
        b.u8(GROUP_TIMER);
        b.bytes(t.key);
        b.i64(t.timestamp);
        b.u8(domain);
        b.u32(0);
      }
      const inputs = due.map((t) => ({ key: t.key, timestamp: t.timestamp, headers: [] }));
      for (const o of this.resolve(this.call(fn, b.done(), due.map((t) => t.key), false), inputs)) {
        o.index += fired;
        outs.push(o);
      }
      fired += due.length;
    }
  }

  /** resolve decodes an output frame, filling in what each output
   * inherits from its input. */
  resolve(frame, inputs) {
    const r = new Reader(frame);
    const n = r.u32();
    const outs = [];
    for (let i = 0; i < n; i++) {
      const tag = r.u8();
      const index = r.u32();
      if (tag === TAG_ERROR) {
        const msg = text(r.bytes());
        if (index === ALL_RECORDS) throw new Error(`udf: the whole batch failed: ${msg}`);
        outs.push({ index, error: msg });
        continue;
      }
      if ((tag !== TAG_RECORD && tag !== TAG_OUTPUT) || index >= inputs.length) {
        throw new Error(`udf: output entry ${i} has tag ${tag} and input ${index} of ${inputs.length}`);
      }
      const base = inputs[index];
      const side = tag === TAG_OUTPUT ? text(r.bytes()) : null;
      const flags = r.u8();
      const key = flags & HAS_KEY ? r.bytes() : base.key.slice();
      const value = r.bytes();
      const timestamp = flags & HAS_TIMESTAMP ? r.i64() : base.timestamp;
      let headers = base.headers;
      if (flags & HAS_HEADERS) {
        headers = [];
        for (let j = r.u32(); j > 0; j--) headers.push([r.bytes(), r.bytes()]);
      }
      outs.push({ index, key, value, timestamp, headers, side });
    }
    if (r.off !== frame.length) throw new Error(`udf: malformed output frame: ${frame.length - r.off} trailing bytes`);
    return outs;
  }

  // The stand-in for the platform's imports.

  imports() {
    const read = (ptr, len) => this.memory(ptr >>> 0, len >>> 0).slice();
    const deliver = (buf, cap, data) => {
      if (data.length <= cap >>> 0) this.memory(buf >>> 0, data.length).set(data);
      return data.length;
    };
    const elements = (parts) => {
      const b = new Builder();
      b.u32(parts.length);
      for (const p of parts) for (const x of p) b.bytes(x);
      return b.done();
    };
    return {
      log: (level, ptr, len) => process.stderr.write(`log ${level}: ${text(read(ptr, len))}\n`),
      enter: (group) => {
        if (!this.groups || group >= this.groups.length) misuse(`enter(${group}) outside a group`);
        this.current = group;
      },
      value_get: (state, buf, cap) => {
        const e = this.values.get(this.slot(state, "value"));
        return e && !this.expired(state, e) ? deliver(buf, cap, e.value) : -1;
      },
      value_set: (state, ptr, len) => {
        this.values.set(this.slot(state, "value"), { value: read(ptr, len), at: this.now });
      },
      state_clear: (state) => {
        if (state >= this.states.length) misuse(`state ${state} is not declared`);
        this.writable(state);
        const slot = this.slot(state, this.states[state].kind);
        this.values.delete(slot);
        this.lists.delete(slot);
        this.maps.delete(slot);
      },
      list_append: (state, ptr, len) => {
        const slot = this.slot(state, "list");
        if (!this.lists.has(slot)) this.lists.set(slot, []);
        this.lists.get(slot).push({ value: read(ptr, len), at: this.now });
      },
      list_get: (state, buf, cap) => {
        const list = (this.lists.get(this.slot(state, "list")) || []).filter((e) => !this.expired(state, e));
        return deliver(buf, cap, elements(list.map((e) => [e.value])));
      },
      map_get: (state, key, keyLen, buf, cap) => {
        const m = this.maps.get(this.slot(state, "map"));
        const e = m && m.get(str(read(key, keyLen)));
        return e && !this.expired(state, e) ? deliver(buf, cap, e.value) : -1;
      },
      map_put: (state, key, keyLen, ptr, len) => {
        this.writable(state);
        const slot = this.slot(state, "map");
        if (!this.maps.has(slot)) this.maps.set(slot, new Map());
        this.maps.get(slot).set(str(read(key, keyLen)), { value: read(ptr, len), at: this.now });
      },
      map_remove: (state, key, keyLen) => {
        this.writable(state);
        const m = this.maps.get(this.slot(state, "map"));
        if (m) m.delete(str(read(key, keyLen)));
      },
      map_entries: (state, buf, cap) => {
        const slot = this.slot(state, "map");
        return deliver(buf, cap, elements(this.entries(state, slot).map(([k, e]) => [k, e.value])));
      },
      timer_register: (domain, ts) => {
        const key = this.timerKey();
        this.timerSet.set(timerId(domain, ts, key), { domain, timestamp: ts, key: key.slice() });
      },
      timer_delete: (domain, ts) => {
        this.timerSet.delete(timerId(domain, ts, this.timerKey()));
      },
    };
  }

  /** abort is AssemblyScript's abort import, for modules built without
   * `use: ["abort="]`: it fails the call with the message. */
  abort(msg, file, line, col) {
    const string = (ptr) => {
      if (!ptr) return "";
      const bytes = new DataView(this.exports.memory.buffer).getUint32(ptr - 4, true);
      return String.fromCharCode(...new Uint16Array(this.exports.memory.buffer, ptr, bytes / 2));
    };
    throw new Error(`udf: abort: ${string(msg)} at ${string(file)}:${line}:${col}`);
  }

  /** slot is where state id, of kind, is kept for the group entered. */
  slot(id, kind) {
    const d = this.states[id];
    if (!this.groups) misuse("keyed state and timers exist only inside a harness call");
    if (!d || d.kind !== kind) misuse(`state ${id} is not a declared ${kind} state`);
    if (d.broadcast) return `${id}\0`;
    if (this.broadcasting) misuse(`state ${JSON.stringify(d.name)} is keyed, and a process_broadcast function has no key`);
    if (this.current < 0) misuse("state used before entering a group");
    return `${id}\0${str(this.groups[this.current])}`;
  }

  writable(id) {
    const d = this.states[id];
    if (d && d.broadcast && !this.broadcasting) misuse(`broadcast state ${JSON.stringify(d.name)} is read-only outside process_broadcast`);
  }

  timerKey() {
    if (!this.groups) misuse("timers exist only inside a harness call");
    if (this.broadcasting) misuse("a process_broadcast function has no timers");
    if (this.current < 0) misuse("a timer set before entering a group");
    return this.groups[this.current];
  }
}

function timerId(domain, ts, key) {
  return `${domain}\0${ts}\0${str(key)}`;
}

function byFiringOrder(a, b) {
  if (a.domain !== b.domain) return a.domain - b.domain;
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1;
  return compareBytes(a.key, b.key);
}

/** misuse is a bug of the module under test: it fails the call, as the
 * platform traps it. */
function misuse(msg) {
  throw new Error(`udf harness: ${msg}`);
}
