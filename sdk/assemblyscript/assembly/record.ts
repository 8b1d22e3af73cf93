// Records as functions receive them, and the records they output.

/** One header of a record; a name may repeat. */
export class Header {
  constructor(public name: Uint8Array, public value: Uint8Array) {}
}

/**
 * One input record: a key (empty until the stream is keyed), a value, an
 * event timestamp in milliseconds since the Unix epoch, and headers. The
 * SDK reuses one Record for every input: its bytes are views into the batch,
 * valid only during the call; copy what you keep.
 */
export class Record {
  /** The input frame the views point into. */
  frame: ArrayBuffer = new ArrayBuffer(0);
  keyOffset: i32 = 0;
  keyLength: i32 = 0;
  valueOffset: i32 = 0;
  valueLength: i32 = 0;
  /** Event time, milliseconds since the Unix epoch. */
  timestamp: i64 = 0;
  headersOffset: i32 = 0;
  headerCount: i32 = 0;
  private keyView: Uint8Array | null = null;
  private valueView: Uint8Array | null = null;

  /** Points the record at the next input. */
  reset(): void {
    this.keyView = null;
    this.valueView = null;
  }

  /** The key, a view into the batch. */
  get key(): Uint8Array {
    let v = this.keyView;
    if (!v) this.keyView = v = Uint8Array.wrap(this.frame, this.keyOffset, this.keyLength);
    return v;
  }

  /** The value, a view into the batch. */
  get value(): Uint8Array {
    let v = this.valueView;
    if (!v) this.valueView = v = Uint8Array.wrap(this.frame, this.valueOffset, this.valueLength);
    return v;
  }

  /** The value decoded as UTF-8. */
  valueString(): string {
    return String.UTF8.decodeUnsafe(changetype<usize>(this.frame) + <usize>this.valueOffset, <usize>this.valueLength);
  }

  /** The headers, in order. */
  get headers(): Header[] {
    const hs = new Array<Header>(this.headerCount);
    let p = this.headersOffset;
    const base = changetype<usize>(this.frame);
    for (let i = 0; i < this.headerCount; i++) {
      const n = <i32>load<u32>(base + <usize>p);
      const name = Uint8Array.wrap(this.frame, p + 4, n);
      p += 4 + n;
      const m = <i32>load<u32>(base + <usize>p);
      hs[i] = new Header(name, Uint8Array.wrap(this.frame, p + 4, m));
      p += 4 + m;
    }
    return hs;
  }
}

/**
 * A record a map function returns or a flat map function emits. Its value is
 * always set; the key, timestamp and headers are the input record's unless
 * set. Outputs are copied when the function returns (or when emit is
 * called), so one Output may be reused.
 */
export class Output {
  key: Uint8Array | null = null;
  timestamp: i64 = 0;
  hasTimestamp: bool = false;
  headers: Header[] | null = null;

  constructor(public value: Uint8Array) {}

  /** Sets the key. */
  withKey(key: Uint8Array): Output {
    this.key = key;
    return this;
  }

  /** Sets the timestamp. */
  withTimestamp(timestamp: i64): Output {
    this.timestamp = timestamp;
    this.hasTimestamp = true;
    return this;
  }

  /** Replaces the headers; an empty array gives a record without headers. */
  withHeaders(headers: Header[]): Output {
    this.headers = headers;
    return this;
  }
}

/** The UTF-8 bytes of a string. */
export function bytes(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s));
}
