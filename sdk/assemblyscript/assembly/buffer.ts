// A grow-only output buffer in unmanaged memory, reused from call to call,
// and the little-endian writes of the frame codec.

let base: usize = 0;
let cap: usize = 0;
let len: usize = 0;

/** The buffer's address. */
export function bufferStart(): usize {
  return base;
}

/** The number of bytes written. */
export function bufferLength(): usize {
  return len;
}

/** Drops what was written after n bytes. */
export function truncate(n: usize): void {
  len = n;
}

function reserve(n: usize): void {
  if (len + n <= cap) return;
  let c = cap ? cap << 1 : 4096;
  while (c < len + n) c <<= 1;
  base = base ? heap.realloc(base, c) : heap.alloc(c);
  cap = c;
}

export function putU8(v: u8): void {
  reserve(1);
  store<u8>(base + len, v);
  len += 1;
}

export function putU32(v: u32): void {
  reserve(4);
  store<u32>(base + len, v);
  len += 4;
}

export function setU32(at: usize, v: u32): void {
  store<u32>(base + at, v);
}

export function putI64(v: i64): void {
  reserve(8);
  store<i64>(base + len, v);
  len += 8;
}

/** Writes n bytes at p, without a length. */
export function putRaw(p: usize, n: usize): void {
  reserve(n);
  memory.copy(base + len, p, n);
  len += n;
}

/** Writes a u32 length and the n bytes at p. */
export function putBytes(p: usize, n: usize): void {
  putU32(<u32>n);
  putRaw(p, n);
}

export function putArray(a: Uint8Array): void {
  putBytes(a.dataStart, <usize>a.byteLength);
}

/** Writes s as UTF-8 without a length. */
export function putString(s: string): void {
  const b = String.UTF8.encode(s);
  putRaw(changetype<usize>(b), <usize>b.byteLength);
}
