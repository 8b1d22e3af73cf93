// wordcount-as: the flat map function split of udfs/wordcount, written with
// the AssemblyScript SDK. It splits a record's text into lower-cased words by
// exactly the rule of the Go module (README.md), with the Unicode tables in
// tables.ts.

import { Emitter, Output, Record, flatMap } from "../../sdk/assemblyscript/assembly/index";
import { LOWERS, WORDS } from "./tables";

export * from "../../sdk/assemblyscript/assembly/exports";

/** The word being built, and one Output for every word: emit copies both. */
let word = new Uint8Array(256);
let wordLength = 0;
const output = new Output(word);

function append(c: u32): void {
  if (wordLength + 4 > word.length) {
    const bigger = new Uint8Array(word.length << 1);
    bigger.set(word);
    word = bigger;
  }
  const p = word.dataStart + <usize>wordLength;
  if (c < 0x80) {
    store<u8>(p, <u8>c);
    wordLength += 1;
  } else if (c < 0x800) {
    store<u8>(p, <u8>(0xc0 | (c >> 6)));
    store<u8>(p, <u8>(0x80 | (c & 0x3f)), 1);
    wordLength += 2;
  } else if (c < 0x10000) {
    store<u8>(p, <u8>(0xe0 | (c >> 12)));
    store<u8>(p, <u8>(0x80 | ((c >> 6) & 0x3f)), 1);
    store<u8>(p, <u8>(0x80 | (c & 0x3f)), 2);
    wordLength += 3;
  } else {
    store<u8>(p, <u8>(0xf0 | (c >> 18)));
    store<u8>(p, <u8>(0x80 | ((c >> 12) & 0x3f)), 1);
    store<u8>(p, <u8>(0x80 | ((c >> 6) & 0x3f)), 2);
    store<u8>(p, <u8>(0x80 | (c & 0x3f)), 3);
    wordLength += 4;
  }
}

function emitWord(out: Emitter): void {
  if (wordLength == 0) return;
  const w = word.subarray(0, wordLength);
  output.value = w;
  output.key = w;
  out.emit(output);
  wordLength = 0;
}

/** The code point decode read, and its length: 0 for a byte that does not
 * start a valid, shortest-form encoding of a scalar value (Go's
 * utf8.DecodeRune). */
let decoded: u32 = 0;

function decode(p: usize, left: usize): usize {
  const b0 = <u32>load<u8>(p);
  if (b0 < 0x80) {
    decoded = b0;
    return 1;
  }
  let n: usize = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) n = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) n = 3;
  else if (b0 >= 0xf0 && b0 <= 0xf4) n = 4;
  else return 0;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (b0 == 0xe0) lo = 0xa0;
  else if (b0 == 0xed) hi = 0x9f;
  else if (b0 == 0xf0) lo = 0x90;
  else if (b0 == 0xf4) hi = 0x8f;
  if (left < n) return 0;
  const b1 = <u32>load<u8>(p, 1);
  if (b1 < lo || b1 > hi) return 0;
  let c = b0 & (0x7f >> <u32>n);
  for (let i: usize = 1; i < n; i++) {
    const b = <u32>load<u8>(p + i);
    if ((b & 0xc0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3f);
  }
  decoded = c;
  return n;
}

/** isWord reports whether c is a letter or a decimal digit. */
function isWord(c: u32): bool {
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
  let lo = 0;
  let hi = WORDS.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (unchecked(WORDS[2 * mid + 1]) < c) lo = mid + 1;
    else hi = mid;
  }
  return lo < WORDS.length >> 1 && unchecked(WORDS[2 * lo]) <= c;
}

/** lower is the simple lower-case mapping of the word code point c. */
function lower(c: u32): u32 {
  if (c < 0x80) return c >= 0x41 && c <= 0x5a ? c + 32 : c;
  let lo = 0;
  let hi = LOWERS.length >> 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (<u32>unchecked(LOWERS[4 * mid + 1]) < c) lo = mid + 1;
    else hi = mid;
  }
  if (lo < LOWERS.length >> 2) {
    const first = <u32>unchecked(LOWERS[4 * lo]);
    if (first <= c && (c - first) % <u32>unchecked(LOWERS[4 * lo + 3]) == 0) {
      return <u32>(<i32>c + unchecked(LOWERS[4 * lo + 2]));
    }
  }
  return c;
}

/** split emits one record per word of the value, with the word as its key
 * and its value and the input's timestamp and headers. */
function split(r: Record, out: Emitter): void {
  const v = r.value;
  let p = v.dataStart;
  let left = <usize>v.length;
  wordLength = 0;
  while (left > 0) {
    let n = decode(p, left);
    if (n > 0 && isWord(decoded)) {
      append(lower(decoded));
    } else {
      emitWord(out);
      if (n == 0) n = 1;
    }
    p += n;
    left -= n;
  }
  emitWord(out);
}

flatMap("split", split);
