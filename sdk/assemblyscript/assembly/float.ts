// formatFloat: the shortest decimal that reads back as a double, without an
// exponent, as Go's strconv.FormatFloat(x, 'f', -1, 64) writes it (of two
// as near as each other, the even one). AssemblyScript's own f64.toString may give more digits, or
// other ones, so JSON a UDF writes would differ from the other languages'.
//
// The double x = m * 2^e has the rounding interval (m - 1/2, m + 1/2) * 2^e
// (the lower half gap is a quarter when m is a power of two): the decimals
// inside it read back as x. Scaled by 4 and, for e < 2, by 5^(2 - e), its
// ends and x are integers, held here exactly as little-endian decimal
// digits; the answer is the decimal with the fewest significant digits
// inside the interval, nearest to x.

/** Digits multiplied by a factor below 2^32, in place. */
function mulSmall(d: Array<u8>, k: u64): void {
  let carry: u64 = 0;
  for (let i = 0; i < d.length; i++) {
    const v = <u64>d[i] * k + carry;
    d[i] = <u8>(v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    d.push(<u8>(carry % 10));
    carry /= 10;
  }
}

function fromU64(n: u64): Array<u8> {
  const d = new Array<u8>();
  do {
    d.push(<u8>(n % 10));
    n /= 10;
  } while (n > 0);
  return d;
}

/** compare is -1, 0 or 1 as a < b, a == b, a > b. */
function compare(a: Array<u8>, b: Array<u8>): i32 {
  let n = max(a.length, b.length);
  while (n-- > 0) {
    const x = n < a.length ? a[n] : 0;
    const y = n < b.length ? b[n] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/** a - b for a >= b. */
function sub(a: Array<u8>, b: Array<u8>): Array<u8> {
  const d = a.slice(0);
  let borrow = 0;
  for (let i = 0; i < d.length; i++) {
    let v = <i32>d[i] - (i < b.length ? <i32>b[i] : 0) - borrow;
    borrow = v < 0 ? 1 : 0;
    d[i] = <u8>(v + 10 * borrow);
  }
  return d;
}

/** d rounded down to a multiple of 10^q, and that plus 10^q. */
function truncate(d: Array<u8>, q: i32): Array<u8> {
  const t = d.slice(0);
  for (let i = 0; i < q && i < t.length; i++) t[i] = 0;
  return t;
}

function addPow10(d: Array<u8>, q: i32): Array<u8> {
  const t = d.slice(0);
  while (t.length <= q) t.push(0);
  let i = q;
  while (i < t.length && t[i] == 9) t[i++] = 0;
  if (i == t.length) t.push(1);
  else t[i]++;
  return t;
}

/** The powers of ten an f64 holds exactly. */
const POW10: StaticArray<f64> = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** The decimal shortDecimal found: shortMantissa / 10^shortScale. */
export let shortMantissa: i64 = 0;
export let shortScale: i32 = 0;
/** Set by shortDecimal when it found none because every decimal that
 * reads back as x has more than 15 significant digits. */
let shortTooLong = false;

/**
 * Finds x as m / 10^k with at most 15 digits in m and k as small as it can
 * be, into shortMantissa and shortScale; false when there is none. It is
 * the case of most numbers a UDF writes, and much faster than the search
 * below. Every decimal of at most 15 significant digits reads back as an
 * f64 of its own (DBL_DIG), so when m / 10^k reads back as x it is the
 * shortest decimal that does (the Go SDK's writer takes the same steps).
 */
export function shortDecimal(x: f64): bool {
  const limit: f64 = 1e15;
  shortTooLong = false;
  if (x == 0 || x >= limit || x <= -limit) return false;
  for (let k = 0; k < POW10.length; k++) {
    const t = x * unchecked(POW10[k]);
    if (t >= limit || t <= -limit) {
      // Each decimal of at most 15 digits is m / 10^k for a k tried.
      shortTooLong = true;
      return false;
    }
    const m = <i64>nearest(t); // to even
    if (<f64>m / unchecked(POW10[k]) == x) {
      shortMantissa = m;
      shortScale = k;
      return true;
    }
  }
  return false;
}

/** The number of characters shortDecimal's decimal takes. */
export function shortLength(): i32 {
  let m = shortMantissa < 0 ? 0 - shortMantissa : shortMantissa;
  let digits = 0;
  for (; m > 0; m /= 10) digits++;
  const k = shortScale;
  return (shortMantissa < 0 ? 1 : 0) + max(digits, k + 1) + (k > 0 ? 1 : 0);
}

/** Writes shortDecimal's decimal, of shortLength() bytes, at p. */
export function writeShort(p: usize): void {
  let m = shortMantissa;
  const k = shortScale;
  let q = p + <usize>shortLength();
  if (m < 0) {
    store<u8>(p, 0x2d);
    m = -m;
  }
  // The integer's digits with a point k from the end.
  for (let i = 0; m > 0 || i <= k; i++) {
    if (i == k && k > 0) store<u8>(--q, 0x2e);
    store<u8>(--q, <u8>(0x30 + m % 10));
    m /= 10;
  }
}

export function formatFloat(x: f64): string {
  if (isNaN(x)) return "NaN";
  if (!isFinite(x)) return x > 0 ? "+Inf" : "-Inf";
  if (shortDecimal(x)) {
    const b = new Uint8Array(shortLength());
    writeShort(b.dataStart);
    return String.UTF8.decodeUnsafe(b.dataStart, <usize>b.length);
  }
  return exactDecimal(x);
}

/** formatFloat of a finite x for which shortDecimal(x), just before,
 * found none: the exact search, from 16 digits where shortDecimal says so. */
export function exactDecimal(x: f64): string {
  const bits = reinterpret<u64>(x);
  const sign = bits >> 63 != 0 ? "-" : "";
  const biased = <i32>((bits >> 52) & 0x7ff);
  let m = bits & 0xfffffffffffff;
  if (m == 0 && biased == 0) return sign + "0";
  let e: i32;
  if (biased == 0) {
    e = -1074;
  } else {
    m |= <u64>1 << 52;
    e = biased - 1075;
  }
  const lowerQuarter = m == <u64>1 << 52 && biased > 1;
  // Ends and x, times 4 (the scale 2^(e-2)).
  let lo = fromU64(lowerQuarter ? 4 * m - 1 : 4 * m - 2);
  let mid = fromU64(4 * m);
  let hi = fromU64(4 * m + 2);
  // The value of the digits is them times 10^point.
  let point = 0;
  // Times 2^s: 2^30 or 5^13 (with the point 13 places left) a pass.
  let s = e - 2;
  for (; s > 0; s -= min(s, 30)) {
    const k = <u64>1 << <u64>min(s, 30);
    mulSmall(lo, k);
    mulSmall(mid, k);
    mulSmall(hi, k);
  }
  for (; s < 0; s += min(-s, 13)) {
    const n = min(-s, 13);
    let k: u64 = 1;
    for (let i = 0; i < n; i++) k *= 5;
    mulSmall(lo, k);
    mulSmall(mid, k);
    mulSmall(hi, k);
    point -= n;
  }
  const inclusive = (m & 1) == 0;
  let best = mid;
  // shortDecimal has ruled out 15 digits or fewer where it says so.
  for (let p = shortTooLong ? 16 : 1; p <= mid.length; p++) {
    const q = mid.length - p;
    const down = truncate(mid, q);
    const up = addPow10(down, q);
    const downOK = inclusive ? compare(down, lo) >= 0 : compare(down, lo) > 0;
    const upOK = inclusive ? compare(up, hi) <= 0 : compare(up, hi) < 0;
    if (!downOK && !upOK) continue;
    if (downOK && upOK) {
      const c = compare(sub(mid, down), sub(up, mid));
      best = c < 0 || (c == 0 && (q < down.length ? down[q] : 0) % 2 == 0) ? down : up;
    } else {
      best = downOK ? down : up;
    }
    break;
  }
  // best without trailing zeros, as a decimal with the point at point.
  let first = 0;
  while (first < best.length - 1 && best[first] == 0) {
    first++;
    point++;
  }
  let last = best.length - 1;
  while (last > first && best[last] == 0) last--;
  // Written into one buffer: sign, digits and point, then zeros.
  const n = last - first + 1;
  const neg = sign.length > 0;
  let size = (neg ? 1 : 0) + (point >= 0 ? n + point : -point < n ? n + 1 : 2 - point);
  const b = new Uint8Array(size);
  let w = 0;
  if (neg) b[w++] = 0x2d;
  if (point >= 0) {
    for (let i = last; i >= first; i--) b[w++] = 0x30 + best[i];
    for (let i = 0; i < point; i++) b[w++] = 0x30;
  } else if (-point < n) {
    for (let i = last; i >= first; i--) {
      if (i - first + 1 == -point) b[w++] = 0x2e;
      b[w++] = 0x30 + best[i];
    }
  } else {
    b[w++] = 0x30;
    b[w++] = 0x2e;
    for (let i = 0; i < -point - n; i++) b[w++] = 0x30;
    for (let i = last; i >= first; i--) b[w++] = 0x30 + best[i];
  }
  return String.UTF8.decodeUnsafe(b.dataStart, <usize>size);
}
