//! nexmark-rust: the functions of Nexmark's queries 0, 1, 2, 5 and 7 of
//! udfs/nexmark (`q0`, `q1`, `q2`, `q5_hot`, `q7`) and its `bids`, written
//! with the Rust SDK: the same output entries, byte for byte, for the same
//! input. Bids and the built-in aggregates' results in the platform's
//! layout are read in one pass; other JSON through the SDK's JSON reader.

use std::cell::RefCell;

use platform_udf::json::{self, Kind};
use platform_udf::{module, Emitter, Output, Record, Result, Window};

thread_local! {
    /// The output, reused for every record (emit copies it).
    static OUT: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(512));
}

/// A bid's members: the integers, and the strings as written (with their
/// quotes); `obj` is the whole bid object.
struct Bid<'a> {
    auction: i64,
    bidder: i64,
    price: i64,
    date_time: i64,
    extra: &'a [u8],
    obj: &'a [u8],
    /// Where the price's digits, `,"channel":` and `,"dateTime":` start in
    /// `obj` when it is in the generator's layout, whose integers are
    /// written as `json::append_int` writes them: the output of q0 and q1 is
    /// then copied from it rather than written anew.
    layout: Option<Layout>,
}

#[derive(Clone, Copy)]
struct Layout {
    price: usize,
    channel: usize,
    date_time: usize,
}

const BID_EVENT: &[u8] = br#"{"event_type":2,"person":null,"auction":null,"bid":"#;

/// The bid of a bid event, `None` for another event. Inlined, so that a
/// function's values that its fast path does not use are not computed.
#[inline(always)]
fn read_bid(v: &[u8]) -> Result<Option<Bid<'_>>> {
    if let Some(b) = fast_bid(v) {
        return Ok(Some(b));
    }
    read_bid_slow(v)
}

/// read_bid for an event in another layout, or another event.
#[inline(never)]
fn read_bid_slow(v: &[u8]) -> Result<Option<Bid<'_>>> {
    if event_type(v)? != 2 {
        return Ok(None);
    }
    match json::get(v, &["bid"]) {
        Some((obj, Kind::Object)) => read_bid_object(obj),
        _ => Err("an event of event_type 2 without a bid object".into()),
    }
    .map(Some)
}

/// A bid object, as `bids` emits it or as any JSON.
fn read_bid_object(obj: &[u8]) -> Result<Bid<'_>> {
    let mut p = Scan { v: obj, i: 0 };
    if let Some(b) = p.bid_object() {
        if p.i == obj.len() {
            return Ok(b);
        }
    }
    let int = |name: &'static str| json::get_int(obj, &[name]).ok_or_else(|| format!("bid without an integer {name}"));
    let string = |name: &'static str| match json::get(obj, &[name]) {
        Some((s, Kind::String)) => Ok(s),
        _ => Err(format!("bid without a string {name}")),
    };
    let (auction, bidder, price) = (int("auction")?, int("bidder")?, int("price")?);
    string("channel")?;
    string("url")?;
    let date_time = int("dateTime")?;
    Ok(Bid { auction, bidder, price, date_time, extra: string("extra")?, obj, layout: None })
}

/// The event_type of an event: at once when the event starts with it.
fn event_type(v: &[u8]) -> Result<i64> {
    const PREFIX: &[u8] = br#"{"event_type":"#;
    if v.len() > PREFIX.len() + 1 && v.starts_with(PREFIX) && v[PREFIX.len() + 1] == b',' {
        let c = v[PREFIX.len()];
        if (b'0'..=b'2').contains(&c) {
            return Ok((c - b'0') as i64);
        }
    }
    match json::get_int(v, &["event_type"]) {
        Some(n) if (0..=2).contains(&n) => Ok(n),
        _ => Err("not a Nexmark event: no event_type 0, 1 or 2".into()),
    }
}

/// Reads a bid event in the generator's layout.
#[inline(always)]
fn fast_bid(v: &[u8]) -> Option<Bid<'_>> {
    let mut p = Scan { v, i: 0 };
    p.lit(BID_EVENT)?;
    let b = p.bid_object()?;
    p.lit(br#","dateTime":"#)?;
    p.int()?;
    p.lit(b"}")?;
    if p.i != v.len() {
        return None;
    }
    Some(b)
}

/// A scan of the generator's layout. Its methods, and the functions that
/// read and write a bid, are inlined: a scan passed to a call lives in linear
/// memory, where every step of its position is a bounds-checked load and
/// store; inlined, the position stays in a WebAssembly local (q0 about 1.5
/// times faster, docs/NEXMARK.md).
struct Scan<'a> {
    v: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    /// A bid object in the generator's layout.
    #[inline(always)]
    fn bid_object(&mut self) -> Option<Bid<'a>> {
        let start = self.i;
        self.lit(br#"{"auction":"#)?;
        let auction = self.int()?;
        self.lit(br#","bidder":"#)?;
        let bidder = self.int()?;
        self.lit(br#","price":"#)?;
        let price_at = self.i - start;
        let price = self.int()?;
        let channel_at = self.i - start;
        self.lit(br#","channel":"#)?;
        self.string()?;
        self.lit(br#","url":"#)?;
        self.string()?;
        let date_time_at = self.i - start;
        self.lit(br#","dateTime":"#)?;
        let date_time = self.int()?;
        self.lit(br#","extra":"#)?;
        let extra = self.string()?;
        self.lit(b"}")?;
        let layout = Layout { price: price_at, channel: channel_at, date_time: date_time_at };
        Some(Bid { auction, bidder, price, date_time, extra, obj: &self.v[start..self.i], layout: Some(layout) })
    }

    /// Skips `s`, which must come next. It compares eight bytes at a time:
    /// memcmp is a byte loop in WebAssembly.
    #[inline(always)]
    fn lit(&mut self, s: &[u8]) -> Option<()> {
        let v = self.v.get(self.i..self.i + s.len())?;
        let mut k = 0;
        while k + 8 <= s.len() {
            if word(v, k) != word(s, k) {
                return None;
            }
            k += 8;
        }
        while k < s.len() {
            if v[k] != s[k] {
                return None;
            }
            k += 1;
        }
        self.i += s.len();
        Some(())
    }

    /// An integer of at most 18 digits, without leading zeros and not -0,
    /// so that its text is the one `json::append_int` writes. Its digits
    /// are read eight at a time.
    #[inline(always)]
    fn int(&mut self) -> Option<i64> {
        let neg = self.v.get(self.i) == Some(&b'-');
        if neg {
            self.i += 1;
        }
        let start = self.i;
        let mut n: u64 = 0;
        while self.i + 8 <= self.v.len() {
            let x = word(self.v, self.i);
            let k = leading_digits(x);
            if k > 0 {
                n = n.wrapping_mul(POW10[k]).wrapping_add(digits_value(x, k));
                self.i += k;
            }
            if k < 8 {
                break;
            }
        }
        if self.i + 8 > self.v.len() {
            while let Some(&c) = self.v.get(self.i) {
                if !c.is_ascii_digit() {
                    break;
                }
                n = n.wrapping_mul(10).wrapping_add((c - b'0') as u64);
                self.i += 1;
            }
        }
        let digits = self.i - start;
        if digits == 0 || digits > 18 || digits > 1 && self.v[start] == b'0' || neg && n == 0 {
            return None;
        }
        Some(if neg { -(n as i64) } else { n as i64 })
    }

    /// A string without escapes or control characters, with its quotes.
    #[inline(always)]
    fn string(&mut self) -> Option<&'a [u8]> {
        if self.v.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i;
        let j = skip_plain(self.v, start + 1);
        let end = self.v[j..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        if self.v[j + end] != b'"' {
            return None;
        }
        self.i = j + end + 1;
        Some(&self.v[start..self.i])
    }
}

/// The index of the first byte of `v` from `j` on that may be a quote, a
/// backslash or a control character, or of a last few bytes to look at one
/// by one: sixteen bytes at a time with WebAssembly SIMD.
#[cfg(target_feature = "simd128")]
#[inline(always)]
fn skip_plain(v: &[u8], mut j: usize) -> usize {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128, v128_load, v128_or};
    while j + 16 <= v.len() {
        // SAFETY: the sixteen bytes at j are in v; WebAssembly loads need
        // no alignment.
        let x = unsafe { v128_load(v.as_ptr().add(j) as *const v128) };
        let hit = v128_or(
            v128_or(u8x16_eq(x, u8x16_splat(b'"')), u8x16_eq(x, u8x16_splat(b'\\'))),
            u8x16_lt(x, u8x16_splat(0x20)),
        );
        let bits = u8x16_bitmask(hit);
        if bits != 0 {
            return j + bits.trailing_zeros() as usize;
        }
        j += 16;
    }
    j
}

/// The index of the first byte of `v` from `j` on that may be a quote, a
/// backslash or a control character, or of a last few bytes to look at one
/// by one: eight bytes at a time.
#[cfg(not(target_feature = "simd128"))]
#[inline(always)]
fn skip_plain(v: &[u8], mut j: usize) -> usize {
    while j + 8 <= v.len() && !special(word(v, j)) {
        j += 8;
    }
    j
}

/// The eight bytes of `v` at `i` as a little-endian word.
#[inline(always)]
fn word(v: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(v[i..i + 8].try_into().unwrap())
}

/// Words with 0x01 and 0x80 in each byte, for eight bytes at a time.
const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;

/// Powers of ten up to 10^8.
const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// How many of the eight bytes of `x` (a little-endian word) are decimal
/// digits before the first one that is not.
#[inline(always)]
fn leading_digits(x: u64) -> usize {
    // A byte's high bit is set when it is below '0', above '9' (0x46 added
    // carries no byte below 0x80 past its own), or 0x80 and over.
    let not_digit = (x.wrapping_sub(b'0' as u64 * ONES) | x.wrapping_add(0x46 * ONES) | x) & HIGHS;
    (not_digit.trailing_zeros() / 8) as usize
}

/// The value of the first `k` bytes of `x`, 1 to 8 decimal digits: moved
/// to the top of the word behind zeros, then combined pairwise in three
/// multiplications.
#[inline(always)]
fn digits_value(x: u64, k: usize) -> u64 {
    let d = (x.wrapping_sub(0x3030303030303030)) << (8 * (8 - k) as u32);
    let d = (d.wrapping_mul(10) + (d >> 8)) & 0x00ff00ff00ff00ff;
    let d = (d.wrapping_mul(100) + (d >> 16)) & 0x0000ffff0000ffff;
    (d.wrapping_mul(10000) + (d >> 32)) & 0xffffffff
}


/// Whether one of the eight bytes of `x` may be a quote, a backslash or a
/// control character (never false when one is).
#[cfg(not(target_feature = "simd128"))]
fn special(x: u64) -> bool {
    let q = x ^ (b'"' as u64 * ONES);
    let b = x ^ (b'\\' as u64 * ONES);
    (x.wrapping_sub(0x20 * ONES) & !x | q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b) & HIGHS != 0
}

/// Calls `f` with the bid of a bid event and the output buffer, and emits
/// what `f` wrote unless it wrote nothing.
#[inline(always)]
fn each_bid(r: &Record, out: &mut Emitter, f: impl FnOnce(&Bid, &mut Vec<u8>)) -> Result<()> {
    let b = match read_bid(r.value)? {
        Some(b) => b,
        None => return Ok(()),
    };
    OUT.with(|buf| {
        let buf = &mut *buf.borrow_mut();
        buf.clear();
        f(&b, buf);
        if !buf.is_empty() {
            out.emit(Output::new(&buf[..]));
        }
    });
    Ok(())
}

#[inline(always)]
fn begin(b: &Bid, buf: &mut Vec<u8>, euros: bool) {
    buf.extend_from_slice(br#"{"auction":"#);
    json::append_int(buf, b.auction);
    buf.extend_from_slice(br#","bidder":"#);
    json::append_int(buf, b.bidder);
    buf.extend_from_slice(br#","price":"#);
    if euros {
        append_decimal3(buf, b.price.wrapping_mul(908));
    } else {
        json::append_int(buf, b.price);
    }
}

#[inline(always)]
fn end_bid(b: &Bid, buf: &mut Vec<u8>) {
    buf.extend_from_slice(br#","dateTime":"#);
    json::append_int(buf, b.date_time);
    buf.extend_from_slice(br#","extra":"#);
    buf.extend_from_slice(b.extra);
    buf.push(b'}');
}

/// Appends thousandths with three digits after the point.
#[inline(always)]
fn append_decimal3(buf: &mut Vec<u8>, thousandths: i64) {
    if thousandths < 0 {
        buf.push(b'-');
    }
    let u = thousandths.unsigned_abs();
    json::append_int(buf, (u / 1000) as i64);
    let f = (u % 1000) as u32;
    buf.extend_from_slice(&[b'.', b'0' + (f / 100) as u8, b'0' + (f / 10 % 10) as u8, b'0' + (f % 10) as u8]);
}

fn bids(r: Record, out: &mut Emitter) -> Result<()> {
    if let Some(b) = read_bid(r.value)? {
        out.emit(Output::new(b.obj));
    }
    Ok(())
}

fn q0(r: Record, out: &mut Emitter) -> Result<()> {
    each_bid(&r, out, |b, buf| match b.layout {
        Some(at) => {
            buf.extend_from_slice(&b.obj[..at.channel]);
            buf.extend_from_slice(&b.obj[at.date_time..]);
        }
        None => {
            begin(b, buf, false);
            end_bid(b, buf);
        }
    })
}

fn q1(r: Record, out: &mut Emitter) -> Result<()> {
    each_bid(&r, out, |b, buf| match b.layout {
        Some(at) => {
            buf.extend_from_slice(&b.obj[..at.price]);
            append_decimal3(buf, b.price.wrapping_mul(908));
            buf.extend_from_slice(&b.obj[at.date_time..]);
        }
        None => {
            begin(b, buf, true);
            end_bid(b, buf);
        }
    })
}

fn q2(r: Record, out: &mut Emitter) -> Result<()> {
    each_bid(&r, out, |b, buf| {
        if b.auction % 123 == 0 {
            buf.extend_from_slice(br#"{"auction":"#);
            json::append_int(buf, b.auction);
            buf.extend_from_slice(br#","price":"#);
            json::append_int(buf, b.price);
            buf.push(b'}');
        }
    })
}

/// A built-in count's result: the auction (its key), the count and the
/// window's bounds.
struct Count {
    auction: i64,
    n: i64,
    start: i64,
    end: i64,
}

/// Reads a built-in aggregate's result, {"key":"K","window_start":S,
/// "window_end":E,"value":N}, as the platform writes it or as any JSON.
fn read_count(v: &[u8]) -> Result<Count> {
    let fast = || {
        let mut p = Scan { v, i: 0 };
        p.lit(br#"{"key":""#)?;
        let auction = p.int()?;
        p.lit(br#"","window_start":"#)?;
        let start = p.int()?;
        p.lit(br#","window_end":"#)?;
        let end = p.int()?;
        p.lit(br#","value":"#)?;
        let n = p.int()?;
        p.lit(b"}")?;
        (p.i == v.len()).then_some(Count { auction, n, start, end })
    };
    if let Some(c) = fast() {
        return Ok(c);
    }
    let mut buf = Vec::new();
    let key = json::get_str(&mut buf, v, &["key"]).ok_or("count result without a string key")?;
    let int = |name: &'static str| json::get_int(v, &[name]).ok_or_else(|| format!("count result without an integer {name}"));
    let (start, end, n) = (int("window_start")?, int("window_end")?, int("value")?);
    let auction = json::parse_int(key).ok_or("count result whose key is not an auction id")?;
    Ok(Count { auction, n, start, end })
}

thread_local! {
    /// q5's counts of one window, reused.
    static COUNTS: RefCell<Vec<Count>> = RefCell::new(Vec::new());
}

/// q5_hot gets the bid counts of every auction of one sliding window (the
/// results of the built-in count, keyed by window_start) and emits the
/// auctions with the most bids: {"auction","num","window_start","window_end"}.
fn q5_hot(_key: &[u8], _w: Window, recs: &[Record], out: &mut Emitter) -> Result<()> {
    COUNTS.with(|counts| {
        let counts = &mut *counts.borrow_mut();
        counts.clear();
        let mut most = 0;
        for r in recs {
            let c = read_count(r.value)?;
            most = most.max(c.n);
            counts.push(c);
        }
        let (start, end) = counts.last().map_or((0, 0), |c| (c.start, c.end));
        OUT.with(|buf| {
            let buf = &mut *buf.borrow_mut();
            for c in counts.iter().filter(|c| c.n >= most) {
                buf.clear();
                buf.extend_from_slice(br#"{"auction":"#);
                json::append_int(buf, c.auction);
                buf.extend_from_slice(br#","num":"#);
                json::append_int(buf, most);
                buf.extend_from_slice(br#","window_start":"#);
                json::append_int(buf, start);
                buf.extend_from_slice(br#","window_end":"#);
                json::append_int(buf, end);
                buf.push(b'}');
                out.emit(Output::new(&buf[..]));
            }
        });
        Ok(())
    })
}

/// q7 emits the bid that matched a window's highest price, with the
/// window's end: {"auction","bidder","price","dateTime","extra","window_end"}.
/// The interval join pairs the window's result (left) with the bids of its
/// price (right) from the window's end minus its size to its end.
fn q7(_key: &[u8], _w: Window, max: Record, b: Record, out: &mut Emitter) -> Result<()> {
    let end = json::get_int(max.value, &["window_end"]).ok_or("result without an integer window_end")?;
    let b = read_bid_object(b.value)?;
    OUT.with(|buf| {
        let buf = &mut *buf.borrow_mut();
        buf.clear();
        begin(&b, buf, false);
        end_bid(&b, buf);
        buf.pop();
        buf.extend_from_slice(br#","window_end":"#);
        json::append_int(buf, end);
        buf.push(b'}');
        out.emit(Output::new(&buf[..]));
    });
    Ok(())
}

module! {
    "bids" => flat_map(bids),
    "q0" => flat_map(q0),
    "q1" => flat_map(q1),
    "q2" => flat_map(q2),
    "q5_hot" => window_process(q5_hot),
    "q7" => join(q7),
}
