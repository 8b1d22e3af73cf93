// Reading fields of JSON values and building JSON values, the
// AssemblyScript twin of the Go SDK's sdk/go/json: it reads and writes
// exactly the same bytes.
//
// A JsonReader scans a document from its start to the value a JsonPath
// names and stops there, decoding nothing it does not return. It checks the
// syntax of what it walks through: the objects and arrays on the path up to
// the value, the keys, the value it returns and the comma or bracket after
// it; a value it skips over is only checked to be a string, number or
// literal that ends, or an object or array whose brackets balance.
// Malformed input makes its getters return false; they never trap.
//
// A JsonWriter appends JSON to a buffer it reuses from record to record.

import { exactDecimal, shortDecimal, shortLength, writeShort } from "./float";

/** The kinds of JSON values. */
export enum JsonKind {
  Invalid,
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

/** A path of keys, encoded once: each is the key of a member of an object
 * or, where the value is an array, the decimal index of an element ("0" is
 * the first). Build paths at the top level and reuse them. */
export class JsonPath {
  keys: Uint8Array[] = [];

  constructor(keys: string[]) {
    for (let i = 0; i < keys.length; i++) this.keys.push(Uint8Array.wrap(String.UTF8.encode(keys[i])));
  }
}

/** Members to find in one pass (JsonReader.lookup): their names, encoded
 * once, and where lookup found each. Build them at the top level and reuse
 * them. */
export class JsonFields {
  keys: Uint8Array[] = [];
  kinds: StaticArray<JsonKind>;
  starts: StaticArray<i32>;
  ends: StaticArray<i32>;

  constructor(names: string[]) {
    this.kinds = new StaticArray<JsonKind>(names.length);
    this.starts = new StaticArray<i32>(names.length);
    this.ends = new StaticArray<i32>(names.length);
    for (let i = 0; i < names.length; i++) this.keys.push(Uint8Array.wrap(String.UTF8.encode(names[i])));
  }
}

const NONE: i32 = -1;

// @ts-ignore: decorator
@inline function at(d: Uint8Array, i: i32): u8 {
  return load<u8>(d.dataStart + <usize>i);
}

function skipSpace(d: Uint8Array, i: i32): i32 {
  const n = d.length;
  while (i < n) {
    const c = at(d, i);
    if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
    i++;
  }
  return i;
}

// stringEscaped is set by stringEnd: whether the string has escapes.
let stringEscaped = false;

function stringEnd(d: Uint8Array, i: i32): i32 {
  const n = d.length;
  stringEscaped = false;
  for (i++; i < n; i++) {
    const c = at(d, i);
    if (c == 0x22) return i + 1;
    if (c == 0x5c) {
      stringEscaped = true;
      i++;
    } else if (c < 0x20) {
      return NONE;
    }
  }
  return NONE;
}

function digitsEnd(d: Uint8Array, i: i32): i32 {
  const n = d.length;
  while (i < n && at(d, i) >= 0x30 && at(d, i) <= 0x39) i++;
  return i;
}

function numberEnd(d: Uint8Array, i: i32): i32 {
  const n = d.length;
  if (i < n && at(d, i) == 0x2d) i++;
  if (i >= n) return NONE;
  const c = at(d, i);
  if (c == 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) i = digitsEnd(d, i);
  else return NONE;
  if (i < n && at(d, i) == 0x2e) {
    const j = digitsEnd(d, i + 1);
    if (j == i + 1) return NONE;
    i = j;
  }
  if (i < n && (at(d, i) == 0x65 || at(d, i) == 0x45)) {
    i++;
    if (i < n && (at(d, i) == 0x2b || at(d, i) == 0x2d)) i++;
    const j = digitsEnd(d, i);
    if (j == i) return NONE;
    i = j;
  }
  return i;
}

function containerEnd(d: Uint8Array, i: i32): i32 {
  const n = d.length;
  let depth = 0;
  for (; i < n; i++) {
    const c = at(d, i);
    if (c == 0x7b || c == 0x5b) depth++;
    else if (c == 0x7d || c == 0x5d) {
      if (--depth == 0) return i + 1;
    } else if (c == 0x22) {
      i = stringEnd(d, i);
      if (i == NONE) return NONE;
      i--;
    }
  }
  return NONE;
}

function literalEnd(d: Uint8Array, i: i32, lit: string): i32 {
  const l = lit.length;
  if (d.length - i < l) return NONE;
  for (let k = 0; k < l; k++) {
    if (<i32>at(d, i + k) != lit.charCodeAt(k)) return NONE;
  }
  return i + l;
}

// valueKind is set by valueEnd: the kind of the value.
let valueKind = JsonKind.Invalid;

function valueEnd(d: Uint8Array, i: i32): i32 {
  if (i >= d.length) return NONE;
  switch (at(d, i)) {
    case 0x22:
      valueKind = JsonKind.String;
      return stringEnd(d, i);
    case 0x7b:
      valueKind = JsonKind.Object;
      return containerEnd(d, i);
    case 0x5b:
      valueKind = JsonKind.Array;
      return containerEnd(d, i);
    case 0x74:
      valueKind = JsonKind.Bool;
      return literalEnd(d, i, "true");
    case 0x66:
      valueKind = JsonKind.Bool;
      return literalEnd(d, i, "false");
    case 0x6e:
      valueKind = JsonKind.Null;
      return literalEnd(d, i, "null");
  }
  valueKind = JsonKind.Number;
  return numberEnd(d, i);
}

function hex4(d: Uint8Array, i: i32, n: i32): i32 {
  if (i + 4 > n) return -1;
  let r = 0;
  for (let k = i; k < i + 4; k++) {
    let c = <i32>at(d, k);
    if (c >= 0x30 && c <= 0x39) c -= 0x30;
    else if (c >= 0x61 && c <= 0x66) c -= 0x61 - 10;
    else if (c >= 0x41 && c <= 0x46) c -= 0x41 - 10;
    else return -1;
    r = (r << 4) | c;
  }
  return r;
}

// escapeRune is set by unescape: the code point of the escape.
let escapeRune: u32 = 0;

/** unescape decodes the escape at d[i] (a backslash), with the string's
 * contents ending at n, into escapeRune; it returns its length, 0 when it
 * is invalid. */
function unescape(d: Uint8Array, i: i32, n: i32): i32 {
  if (i + 1 >= n) return 0;
  const c = at(d, i + 1);
  switch (c) {
    case 0x22:
    case 0x5c:
    case 0x2f:
      escapeRune = c;
      return 2;
    case 0x62:
      escapeRune = 8;
      return 2;
    case 0x66:
      escapeRune = 12;
      return 2;
    case 0x6e:
      escapeRune = 10;
      return 2;
    case 0x72:
      escapeRune = 13;
      return 2;
    case 0x74:
      escapeRune = 9;
      return 2;
    case 0x75: {
      const hi = hex4(d, i + 2, n);
      if (hi < 0) return 0;
      if (hi < 0xd800 || hi >= 0xe000) {
        escapeRune = <u32>hi;
        return 6;
      }
      if (hi < 0xdc00 && i + 11 < n && at(d, i + 6) == 0x5c && at(d, i + 7) == 0x75) {
        const lo = hex4(d, i + 8, n);
        if (lo >= 0xdc00 && lo < 0xe000) {
          escapeRune = 0x10000 + ((<u32>hi - 0xd800) << 10) + (<u32>lo - 0xdc00);
          return 12;
        }
      }
      escapeRune = 0xfffd;
      return 6;
    }
  }
  return 0;
}

const utf8Bytes = new StaticArray<u8>(4);

/** utf8 encodes cp into utf8Bytes and returns its length. */
function utf8(cp: u32): i32 {
  if (cp < 0x80) {
    utf8Bytes[0] = <u8>cp;
    return 1;
  }
  if (cp < 0x800) {
    utf8Bytes[0] = <u8>(0xc0 | (cp >> 6));
    utf8Bytes[1] = <u8>(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    utf8Bytes[0] = <u8>(0xe0 | (cp >> 12));
    utf8Bytes[1] = <u8>(0x80 | ((cp >> 6) & 0x3f));
    utf8Bytes[2] = <u8>(0x80 | (cp & 0x3f));
    return 3;
  }
  utf8Bytes[0] = <u8>(0xf0 | (cp >> 18));
  utf8Bytes[1] = <u8>(0x80 | ((cp >> 12) & 0x3f));
  utf8Bytes[2] = <u8>(0x80 | ((cp >> 6) & 0x3f));
  utf8Bytes[3] = <u8>(0x80 | (cp & 0x3f));
  return 4;
}

/** nameEquals tells whether the string contents d[start, end) unescape to
 * key. */
function nameEquals(d: Uint8Array, start: i32, end: i32, escaped: bool, key: Uint8Array): bool {
  const klen = key.length;
  if (!escaped) {
    return end - start == klen && memory.compare(d.dataStart + <usize>start, key.dataStart, <usize>klen) == 0;
  }
  let k = 0;
  for (let i = start; i < end; ) {
    const c = at(d, i);
    if (c != 0x5c) {
      if (k >= klen || at(key, k) != c) return false;
      i++;
      k++;
      continue;
    }
    const l = unescape(d, i, end);
    if (l == 0) return false;
    const w = utf8(escapeRune);
    if (k + w > klen) return false;
    for (let j = 0; j < w; j++) {
      if (at(key, k + j) != utf8Bytes[j]) return false;
    }
    i += l;
    k += w;
  }
  return k == klen;
}

function member(d: Uint8Array, i: i32, key: Uint8Array): i32 {
  const n = d.length;
  i = skipSpace(d, i + 1);
  while (i < n && at(d, i) == 0x22) {
    let end = stringEnd(d, i);
    if (end == NONE) return NONE;
    const match = nameEquals(d, i + 1, end - 1, stringEscaped, key);
    i = skipSpace(d, end);
    if (i >= n || at(d, i) != 0x3a) return NONE;
    i = skipSpace(d, i + 1);
    if (match) return i;
    end = valueEnd(d, i);
    if (end == NONE) return NONE;
    i = skipSpace(d, end);
    if (i >= n || at(d, i) != 0x2c) return NONE;
    i = skipSpace(d, i + 1);
  }
  return NONE;
}

function element(d: Uint8Array, i: i32, index: Uint8Array): i32 {
  const n = d.length;
  const len = index.length;
  if (len == 0 || len > 9 || (len > 1 && at(index, 0) == 0x30)) return NONE;
  let k = 0;
  for (let j = 0; j < len; j++) {
    const c = at(index, j);
    if (c < 0x30 || c > 0x39) return NONE;
    k = k * 10 + <i32>(c - 0x30);
  }
  i = skipSpace(d, i + 1);
  if (i < n && at(d, i) == 0x5d) return NONE;
  for (; k > 0; k--) {
    const end = valueEnd(d, i);
    if (end == NONE) return NONE;
    i = skipSpace(d, end);
    if (i >= n || at(d, i) != 0x2c) return NONE;
    i = skipSpace(d, i + 1);
  }
  return i < n ? i : NONE;
}

const POW10: StaticArray<f64> = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/**
 * Reads values out of JSON documents. Each getter finds the value at a path
 * and returns whether there is one of its kind; the value is then in the
 * reader's fields: `kind`, `start` and `end` (its raw bytes' offsets in the
 * document, a string with its quotes) for every getter, and `int`, `float`,
 * `bool` or `str` for the typed ones. Of several members with a key's name,
 * the first counts. One reader serves every record.
 */
export class JsonReader {
  kind: JsonKind = JsonKind.Invalid;
  start: i32 = 0;
  end: i32 = 0;
  int: i64 = 0;
  float: f64 = 0;
  bool: bool = false;
  /** The string getString read, unescaped: a view of the document when it
   * has no escapes, else of the reader's buffer, valid until the next
   * getString. */
  str: Uint8Array = new Uint8Array(0);
  private buf: Uint8Array = new Uint8Array(64);

  /** Finds the value at path (an empty path is the document's value). */
  get(data: Uint8Array, path: JsonPath): bool {
    this.kind = JsonKind.Invalid;
    const n = data.length;
    let i = skipSpace(data, 0);
    let closer: u8 = 0;
    const keys = path.keys;
    for (let p = 0; p < keys.length; p++) {
      if (i >= n) return false;
      const c = at(data, i);
      if (c == 0x7b) {
        i = member(data, i, unchecked(keys[p]));
        closer = 0x7d;
      } else if (c == 0x5b) {
        i = element(data, i, unchecked(keys[p]));
        closer = 0x5d;
      } else {
        return false;
      }
      if (i == NONE) return false;
    }
    const end = valueEnd(data, i);
    if (end == NONE) return false;
    const next = skipSpace(data, end);
    if (closer == 0 ? next != n : next == n || (at(data, next) != 0x2c && at(data, next) != closer)) return false;
    this.kind = valueKind;
    this.start = i;
    this.end = end;
    return true;
  }

  /** The raw bytes of the value the last getter found (a view). */
  raw(data: Uint8Array): Uint8Array {
    return data.subarray(this.start, this.end);
  }

  /** Reads the number at path into `int`: false when there is none, or it
   * has a fraction or an exponent, or does not fit an i64. */
  getInt(data: Uint8Array, path: JsonPath): bool {
    return this.get(data, path) && this.readInt(data);
  }

  /** Finds the values of several members of the object data in one pass,
   * the first member of each name, into fields; it returns how many it
   * found. It stops as soon as it has found them all, or at malformed
   * input. Each value it finds is exactly what get finds for its key: it
   * makes the same checks on the way, in one scan instead of one per key
   * (the Go SDK's json.Lookup). Read them with intOf and stringOf. */
  lookup(data: Uint8Array, fields: JsonFields): i32 {
    const keys = fields.keys;
    const nkeys = keys.length;
    for (let k = 0; k < nkeys; k++) unchecked((fields.kinds[k] = JsonKind.Invalid));
    const n = data.length;
    let found = 0;
    let i = skipSpace(data, 0);
    if (i >= n || at(data, i) != 0x7b || nkeys == 0) return 0;
    i = skipSpace(data, i + 1);
    while (i < n && at(data, i) == 0x22) {
      let end = stringEnd(data, i);
      if (end == NONE) return found;
      let match = -1;
      for (let k = 0; k < nkeys; k++) {
        if (unchecked(fields.kinds[k]) != JsonKind.Invalid) continue;
        if (nameEquals(data, i + 1, end - 1, stringEscaped, unchecked(keys[k]))) {
          match = k;
          break;
        }
      }
      i = skipSpace(data, end);
      if (i >= n || at(data, i) != 0x3a) return found;
      i = skipSpace(data, i + 1);
      const v = i;
      end = valueEnd(data, i);
      if (end == NONE) return found;
      const kind = valueKind;
      i = skipSpace(data, end);
      if (i >= n || (at(data, i) != 0x2c && at(data, i) != 0x7d)) return found;
      if (match >= 0) {
        unchecked((fields.kinds[match] = kind));
        unchecked((fields.starts[match] = v));
        unchecked((fields.ends[match] = end));
        if (++found == nkeys) return found;
      }
      if (at(data, i) == 0x7d) return found;
      i = skipSpace(data, i + 1);
    }
    return found;
  }

  /** Makes member k of the last lookup into fields the value the reader
   * found: false when lookup found none. */
  private field(fields: JsonFields, k: i32): bool {
    this.kind = fields.kinds[k];
    this.start = fields.starts[k];
    this.end = fields.ends[k];
    return this.kind != JsonKind.Invalid;
  }

  /** Reads member k of the last lookup into fields as getInt does. */
  intOf(data: Uint8Array, fields: JsonFields, k: i32): bool {
    return this.field(fields, k) && this.readInt(data);
  }

  /** Reads member k of the last lookup into fields as getString does. */
  stringOf(data: Uint8Array, fields: JsonFields, k: i32): bool {
    return this.field(fields, k) && this.readString(data);
  }

  /** Reads the value found into `int`, as getInt. */
  private readInt(data: Uint8Array): bool {
    if (this.kind != JsonKind.Number) return false;
    let i = this.start;
    const end = this.end;
    const neg = at(data, i) == 0x2d;
    if (neg) i++;
    if (end - i > 1 && at(data, i) == 0x30) return false;
    let u: u64 = 0;
    for (; i < end; i++) {
      const c = at(data, i);
      if (c < 0x30 || c > 0x39 || u > (u64.MAX_VALUE - 9) / 10) return false;
      u = u * 10 + <u64>(c - 0x30);
    }
    if (neg) {
      if (u > (<u64>1) << 63) return false;
      this.int = <i64>(0 - u);
    } else {
      if (u > <u64>i64.MAX_VALUE) return false;
      this.int = <i64>u;
    }
    return true;
  }

  /** Reads the number at path into `float`, the nearest f64: false when
   * there is none or it is out of range. Numbers of up to 15 digits times a
   * power of ten up to 1e22 are exact; longer ones go through parseFloat. */
  getFloat(data: Uint8Array, path: JsonPath): bool {
    if (!this.get(data, path) || this.kind != JsonKind.Number) return false;
    let i = this.start;
    const end = this.end;
    const neg = at(data, i) == 0x2d;
    if (neg) i++;
    let mant: u64 = 0;
    let exp = 0;
    let digits = 0;
    for (; i < end && at(data, i) >= 0x30 && at(data, i) <= 0x39; i++) {
      if (mant != 0 || at(data, i) != 0x30) digits++;
      mant = mant * 10 + <u64>(at(data, i) - 0x30);
    }
    if (i < end && at(data, i) == 0x2e) {
      for (i++; i < end && at(data, i) >= 0x30 && at(data, i) <= 0x39; i++) {
        if (mant != 0 || at(data, i) != 0x30) digits++;
        mant = mant * 10 + <u64>(at(data, i) - 0x30);
        exp--;
      }
    }
    if (i < end) {
      let e = 0;
      let eneg = false;
      i++;
      if (at(data, i) == 0x2b || at(data, i) == 0x2d) {
        eneg = at(data, i) == 0x2d;
        i++;
      }
      for (; i < end && e < 10000; i++) e = e * 10 + <i32>(at(data, i) - 0x30);
      exp += eneg ? -e : e;
    }
    let f: f64;
    if (digits <= 15 && mant < (<u64>1) << 53 && exp >= -22 && exp <= 22) {
      f = <f64>mant;
      f = exp < 0 ? f / unchecked(POW10[-exp]) : f * unchecked(POW10[exp]);
      if (neg) f = -f;
    } else {
      f = parseFloat(String.UTF8.decodeUnsafe(data.dataStart + <usize>this.start, <usize>(end - this.start)));
      if (!isFinite(f)) return false;
    }
    this.float = f;
    return true;
  }

  /** Reads the boolean at path into `bool`. */
  getBool(data: Uint8Array, path: JsonPath): bool {
    if (!this.get(data, path) || this.kind != JsonKind.Bool) return false;
    this.bool = at(data, this.start) == 0x74;
    return true;
  }

  /** Reads the string at path into `str`, unescaped: false when there is
   * none or it has an invalid escape. Bytes that are not UTF-8 are kept as
   * they are; an escaped lone UTF-16 surrogate becomes U+FFFD. */
  getString(data: Uint8Array, path: JsonPath): bool {
    return this.get(data, path) && this.readString(data);
  }

  /** Reads the value found into `str`, as getString. */
  private readString(data: Uint8Array): bool {
    if (this.kind != JsonKind.String) return false;
    const start = this.start + 1;
    const end = this.end - 1;
    let i = start;
    while (i < end && at(data, i) != 0x5c) i++;
    if (i == end) {
      this.str = data.subarray(start, end);
      return true;
    }
    if (this.buf.length < end - start) this.buf = new Uint8Array((end - start) * 2);
    const buf = this.buf;
    let w = i - start;
    memory.copy(buf.dataStart, data.dataStart + <usize>start, <usize>w);
    while (i < end) {
      const c = at(data, i);
      if (c != 0x5c) {
        store<u8>(buf.dataStart + <usize>w, c);
        w++;
        i++;
        continue;
      }
      const l = unescape(data, i, end);
      if (l == 0) return false;
      const bl = utf8(escapeRune);
      for (let j = 0; j < bl; j++) store<u8>(buf.dataStart + <usize>(w + j), utf8Bytes[j]);
      w += bl;
      i += l;
    }
    this.str = buf.subarray(0, w);
    return true;
  }
}

const HEX = "0123456789abcdef";

/**
 * Appends a JSON value to a buffer it reuses: objects and arrays, their keys
 * and values, with the commas between members and elements. Methods chain;
 * `bytes()` is what was written. It does not check that its calls make a
 * valid value.
 */
export class JsonWriter {
  private buf: Uint8Array = new Uint8Array(256);
  private len: i32 = 0;
  private more: bool = false;

  /** Empties the buffer, keeping its memory. */
  reset(): JsonWriter {
    this.len = 0;
    this.more = false;
    return this;
  }

  /** What was written: a view, valid until the next write. */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  private reserve(n: i32): void {
    if (this.len + n <= this.buf.length) return;
    let c = this.buf.length * 2;
    while (c < this.len + n) c *= 2;
    const b = new Uint8Array(c);
    memory.copy(b.dataStart, this.buf.dataStart, <usize>this.len);
    this.buf = b;
  }

  private put(c: u8): void {
    this.reserve(1);
    store<u8>(this.buf.dataStart + <usize>this.len, c);
    this.len++;
  }

  private putAscii(s: string): void {
    const l = s.length;
    this.reserve(l);
    for (let i = 0; i < l; i++) store<u8>(this.buf.dataStart + <usize>(this.len + i), <u8>s.charCodeAt(i));
    this.len += l;
  }

  private comma(): void {
    if (this.more) this.put(0x2c);
  }

  private quoted(p: usize, n: i32): void {
    this.reserve(n + 2);
    this.put(0x22);
    let start = 0;
    for (let i = 0; i < n; i++) {
      const c = load<u8>(p + <usize>i);
      if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
      this.raw0(p + <usize>start, i - start);
      this.put(0x5c);
      if (c == 0x22 || c == 0x5c) this.put(c);
      else if (c == 8) this.put(0x62);
      else if (c == 12) this.put(0x66);
      else if (c == 10) this.put(0x6e);
      else if (c == 13) this.put(0x72);
      else if (c == 9) this.put(0x74);
      else {
        this.putAscii("u00");
        this.put(<u8>HEX.charCodeAt(c >> 4));
        this.put(<u8>HEX.charCodeAt(c & 15));
      }
      start = i + 1;
    }
    this.raw0(p + <usize>start, n - start);
    this.put(0x22);
  }

  private raw0(p: usize, n: i32): void {
    this.reserve(n);
    memory.copy(this.buf.dataStart + <usize>this.len, p, <usize>n);
    this.len += n;
  }

  /** Writes `{`. */
  beginObject(): JsonWriter {
    this.comma();
    this.put(0x7b);
    this.more = false;
    return this;
  }

  /** Writes `}`. */
  endObject(): JsonWriter {
    this.put(0x7d);
    this.more = true;
    return this;
  }

  /** Writes `[`. */
  beginArray(): JsonWriter {
    this.comma();
    this.put(0x5b);
    this.more = false;
    return this;
  }

  /** Writes `]`. */
  endArray(): JsonWriter {
    this.put(0x5d);
    this.more = true;
    return this;
  }

  /** Writes a member's key, escaped, and its colon; its value comes next. */
  key(k: string): JsonWriter {
    this.comma();
    let ascii = true;
    for (let i = 0; i < k.length; i++) {
      if (k.charCodeAt(i) >= 0x80) ascii = false;
    }
    if (ascii) {
      const l = k.length;
      const tmp = changetype<usize>(k);
      // An ASCII key is quoted from its UTF-16 code units, without encoding it.
      this.reserve(2 * l + 8);
      const startLen = this.len;
      this.put(0x22);
      let plain = true;
      for (let i = 0; i < l; i++) {
        const c = <u8>load<u16>(tmp + (<usize>i << 1));
        if (c < 0x20 || c == 0x22 || c == 0x5c) plain = false;
        this.put(c);
      }
      this.put(0x22);
      if (!plain) {
        this.len = startLen;
        const b = String.UTF8.encode(k);
        this.quoted(changetype<usize>(b), b.byteLength);
      }
    } else {
      const b = String.UTF8.encode(k);
      this.quoted(changetype<usize>(b), b.byteLength);
    }
    this.put(0x3a);
    this.more = false;
    return this;
  }

  /** Writes s as a JSON string: `"` and `\` escaped by a backslash, \b \f
   * \n \r \t by their short escapes, the other bytes below 0x20 as \u00xx
   * (lower-case hexadecimal), every other byte as it is. */
  string(s: Uint8Array): JsonWriter {
    this.comma();
    this.quoted(s.dataStart, s.length);
    this.more = true;
    return this;
  }

  /** Writes an integer. */
  int(v: i64): JsonWriter {
    this.comma();
    let u: u64 = v < 0 ? 0 - <u64>v : <u64>v;
    let digits = 1;
    for (let t = u; t >= 10; t /= 10) digits++;
    if (v < 0) this.put(0x2d);
    this.reserve(digits);
    for (let i = digits - 1; i >= 0; i--) {
      store<u8>(this.buf.dataStart + <usize>(this.len + i), <u8>(0x30 + u % 10));
      u /= 10;
    }
    this.len += digits;
    this.more = true;
    return this;
  }

  /** Writes v in the fewest digits that read back as it, without an
   * exponent (formatFloat; Go's strconv.FormatFloat(v, 'f', -1, 64)); NaN
   * and the infinities, which JSON cannot write, as null. */
  float(v: f64): JsonWriter {
    this.comma();
    if (shortDecimal(v)) {
      const l = shortLength();
      this.reserve(l);
      writeShort(this.buf.dataStart + <usize>this.len);
      this.len += l;
    } else {
      this.putAscii(isFinite(v) ? exactDecimal(v) : "null");
    }
    this.more = true;
    return this;
  }

  /** Writes true or false. */
  bool(v: bool): JsonWriter {
    this.comma();
    this.putAscii(v ? "true" : "false");
    this.more = true;
    return this;
  }

  /** Writes null. */
  null(): JsonWriter {
    this.comma();
    this.putAscii("null");
    this.more = true;
    return this;
  }

  /** Writes v, a JSON value, as it is. */
  raw(v: Uint8Array): JsonWriter {
    this.comma();
    this.raw0(v.dataStart, v.length);
    this.more = true;
    return this;
  }
}
