//! Reading fields of JSON values and building JSON values without
//! allocating: the Rust twin of the Go SDK's `sdk/go/json`, which reads and
//! writes exactly the same bytes.
//!
//! [`get`] and the typed getters scan the document from its start to the
//! value a path names and stop there, decoding nothing they do not return.
//! They check the syntax of what they walk through: the objects and arrays
//! on the path up to the value, the keys, the value they return and the
//! comma or bracket after it; a value they skip over is only checked to be
//! a string, number or literal that ends, or an object or array whose
//! brackets balance. Malformed input makes them return `None`; they never
//! panic.
//!
//! A [`Writer`] appends JSON to a buffer it reuses from record to record.
//!
//! ```ignore
//! use platform_udf::json::{self, Writer};
//!
//! let bid = br#"{"auction":1000,"price":12345,"channel":"Google"}"#;
//! let price = json::get_int(bid, &["price"]).ok_or("no price")?;
//! let mut channel = Vec::new();
//! json::get_str(&mut channel, bid, &["channel"]).ok_or("no channel")?;
//! let mut w = Writer::new();
//! w.begin_object().key("price_eur").float(price as f64 * 0.908).key("channel").string(&channel).end_object();
//! assert_eq!(w.as_bytes(), br#"{"price_eur":11209.26,"channel":"Google"}"#);
//! ```

use std::io::Write as _;

/// The kind of a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// The raw bytes of the value at `path` in `data` (a string with its quotes
/// and escapes, as written) and its kind. Each element of `path` is the key
/// of a member of an object or, where the value is an array, the decimal
/// index of an element (`"0"` is the first); an empty path is `data`'s value
/// itself. A key is compared with the member's name after unescaping; of
/// several members with that name, the first counts. `None` when a key or
/// index is missing, a value on the path is not an object or array, or the
/// input is malformed.
pub fn get<'a>(data: &'a [u8], path: &[&str]) -> Option<(&'a [u8], Kind)> {
    let mut i = skip_space(data, 0);
    let mut closer = 0u8;
    for key in path {
        match data.get(i) {
            Some(b'{') => {
                i = member(data, i, key.as_bytes())?;
                closer = b'}';
            }
            Some(b'[') => {
                i = element(data, i, key.as_bytes())?;
                closer = b']';
            }
            _ => return None,
        }
    }
    let (end, kind) = value_end(data, i)?;
    let next = skip_space(data, end);
    let fits = if closer == 0 {
        next == data.len()
    } else {
        matches!(data.get(next), Some(&c) if c == b',' || c == closer)
    };
    if fits {
        Some((&data[i..end], kind))
    } else {
        None
    }
}

/// The number at `path` as an `i64`: `None` when there is none, or it has a
/// fraction or an exponent, or does not fit.
pub fn get_int(data: &[u8], path: &[&str]) -> Option<i64> {
    match get(data, path)? {
        (v, Kind::Number) => parse_int(v),
        _ => None,
    }
}

/// The number at `path` as the nearest `f64`: `None` when there is none or
/// it is out of an `f64`'s range.
pub fn get_float(data: &[u8], path: &[&str]) -> Option<f64> {
    match get(data, path)? {
        (v, Kind::Number) => parse_float(v),
        _ => None,
    }
}

/// The boolean at `path`.
pub fn get_bool(data: &[u8], path: &[&str]) -> Option<bool> {
    match get(data, path)? {
        (v, Kind::Bool) => Some(v[0] == b't'),
        _ => None,
    }
}

/// The string at `path`, unescaped into `buf`, which is cleared first and
/// keeps its memory for the next record. `None` when there is none or it
/// has an invalid escape. Bytes that are not UTF-8 are returned as they
/// are; an escaped lone UTF-16 surrogate becomes U+FFFD.
pub fn get_str<'b>(buf: &'b mut Vec<u8>, data: &[u8], path: &[&str]) -> Option<&'b [u8]> {
    buf.clear();
    match get(data, path)? {
        (v, Kind::String) if unescape_into(buf, &v[1..v.len() - 1]) => Some(&buf[..]),
        _ => None,
    }
}

/// Appends the string whose contents, between its quotes, are `raw` to
/// `dst`, with its escapes decoded; false when `raw` has an invalid escape
/// or an unescaped quote or control character.
pub fn unescape_into(dst: &mut Vec<u8>, raw: &[u8]) -> bool {
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            if c < 0x20 || c == b'"' {
                return false;
            }
            let start = i;
            while i < raw.len() && raw[i] != b'\\' && raw[i] >= 0x20 && raw[i] != b'"' {
                i += 1;
            }
            dst.extend_from_slice(&raw[start..i]);
            continue;
        }
        match unescape(raw, i) {
            Some((ch, n)) => {
                let mut b = [0u8; 4];
                dst.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                i += n;
            }
            None => return false,
        }
    }
    true
}

/// The character of the escape at `raw[i]` (a backslash) and its length.
fn unescape(raw: &[u8], i: usize) -> Option<(char, usize)> {
    let c = match *raw.get(i + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = hex4(raw, i + 2)?;
            if !(0xd800..0xe000).contains(&hi) {
                return Some((char::from_u32(hi)?, 6));
            }
            if hi < 0xdc00 && raw.get(i + 6) == Some(&b'\\') && raw.get(i + 7) == Some(&b'u') {
                if let Some(lo) = hex4(raw, i + 8) {
                    if (0xdc00..0xe000).contains(&lo) {
                        let c = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                        return Some((char::from_u32(c)?, 12));
                    }
                }
            }
            return Some(('\u{fffd}', 6));
        }
        _ => return None,
    };
    Some((c, 2))
}

fn hex4(raw: &[u8], i: usize) -> Option<u32> {
    let digits = raw.get(i..i + 4)?;
    let mut r = 0u32;
    for &c in digits {
        r = r << 4 | (c as char).to_digit(16)?;
    }
    Some(r)
}

/// Reads a JSON number with neither fraction nor exponent as an `i64`.
pub fn parse_int(v: &[u8]) -> Option<i64> {
    let neg = v.first() == Some(&b'-');
    let digits = if neg { &v[1..] } else { v };
    if digits.is_empty() || digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    let mut n: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() || n > (u64::MAX - 9) / 10 {
            return None;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    if neg {
        if n > 1 << 63 {
            return None;
        }
        Some((n as i64).wrapping_neg())
    } else if n > i64::MAX as u64 {
        None
    } else {
        Some(n as i64)
    }
}

/// Reads a JSON number as the nearest `f64`: `None` when `v` is not a JSON
/// number or it is out of range.
pub fn parse_float(v: &[u8]) -> Option<f64> {
    if number_end(v, 0)? != v.len() {
        return None;
    }
    let f: f64 = std::str::from_utf8(v).ok()?.parse().ok()?;
    if f.is_finite() {
        Some(f)
    } else {
        None
    }
}

fn skip_space(data: &[u8], mut i: usize) -> usize {
    while i < data.len() && matches!(data[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// The offset of the value of the first member named `key` of the object
/// at `data[i]`.
fn member(data: &[u8], i: usize, key: &[u8]) -> Option<usize> {
    let mut i = skip_space(data, i + 1);
    while data.get(i) == Some(&b'"') {
        let (end, escaped) = string_end(data, i)?;
        let name = &data[i + 1..end - 1];
        let matched = if escaped { escaped_equal(name, key) } else { name == key };
        i = skip_space(data, end);
        if data.get(i) != Some(&b':') {
            return None;
        }
        i = skip_space(data, i + 1);
        if matched {
            return Some(i);
        }
        let (end, _) = value_end(data, i)?;
        i = skip_space(data, end);
        if data.get(i) != Some(&b',') {
            return None;
        }
        i = skip_space(data, i + 1);
    }
    None
}

/// The offset of element `index` (decimal) of the array at `data[i]`.
fn element(data: &[u8], i: usize, index: &[u8]) -> Option<usize> {
    if index.is_empty() || index.len() > 9 || index.len() > 1 && index[0] == b'0' {
        return None;
    }
    let mut n = 0usize;
    for &c in index {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as usize;
    }
    let mut i = skip_space(data, i + 1);
    if data.get(i) == Some(&b']') {
        return None;
    }
    while n > 0 {
        let (end, _) = value_end(data, i)?;
        i = skip_space(data, end);
        if data.get(i) != Some(&b',') {
            return None;
        }
        i = skip_space(data, i + 1);
        n -= 1;
    }
    if i < data.len() {
        Some(i)
    } else {
        None
    }
}

/// Whether the string contents `name`, which has escapes, unescape to `key`.
fn escaped_equal(name: &[u8], key: &[u8]) -> bool {
    let (mut i, mut k) = (0, 0);
    while i < name.len() {
        if name[i] != b'\\' {
            if key.get(k) != Some(&name[i]) {
                return false;
            }
            i += 1;
            k += 1;
            continue;
        }
        match unescape(name, i) {
            Some((c, n)) => {
                let mut b = [0u8; 4];
                let s = c.encode_utf8(&mut b).as_bytes();
                if key.get(k..k + s.len()) != Some(s) {
                    return false;
                }
                i += n;
                k += s.len();
            }
            None => return false,
        }
    }
    k == key.len()
}

/// The offset after the closing quote of the string at `data[i]` and
/// whether it has escapes.
fn string_end(data: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    i += 1;
    loop {
        i = plain_until(data, i);
        match *data.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
}

/// The offset of the first byte from `i` on that may be a quote, a backslash
/// or a control character, looking at eight bytes at a time (a byte loop in
/// WebAssembly costs a bounds check and a branch per byte); or of the last
/// few bytes, which the caller looks at one by one.
#[inline]
fn plain_until(data: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = data.get(i..i + 8) {
        let x = u64::from_le_bytes(word.try_into().unwrap());
        let q = x ^ (b'"' as u64 * ONES);
        let b = x ^ (b'\\' as u64 * ONES);
        // A byte is flagged when it is zero in q or b, or below 0x20 in x;
        // the lowest flag is exact (a borrow only flags bytes above it).
        let special = (q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b | x.wrapping_sub(0x20 * ONES) & !x) & HIGHS;
        if special != 0 {
            return i + special.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i
}

fn digits_end(data: &[u8], mut i: usize) -> usize {
    while i < data.len() && data[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// The offset after the JSON number at `data[i]`.
fn number_end(data: &[u8], mut i: usize) -> Option<usize> {
    if data.get(i) == Some(&b'-') {
        i += 1;
    }
    match *data.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits_end(data, i),
        _ => return None,
    }
    if data.get(i) == Some(&b'.') {
        let j = digits_end(data, i + 1);
        if j == i + 1 {
            return None;
        }
        i = j;
    }
    if matches!(data.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(data.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits_end(data, i);
        if j == i {
            return None;
        }
        i = j;
    }
    Some(i)
}

/// The offset after the value at `data[i]` and its kind.
fn value_end(data: &[u8], i: usize) -> Option<(usize, Kind)> {
    let literal = |lit: &[u8], kind| {
        if data.get(i..i + lit.len()) == Some(lit) {
            Some((i + lit.len(), kind))
        } else {
            None
        }
    };
    match *data.get(i)? {
        b'"' => Some((string_end(data, i)?.0, Kind::String)),
        b'{' => Some((container_end(data, i)?, Kind::Object)),
        b'[' => Some((container_end(data, i)?, Kind::Array)),
        b't' => literal(b"true", Kind::Bool),
        b'f' => literal(b"false", Kind::Bool),
        b'n' => literal(b"null", Kind::Null),
        _ => Some((number_end(data, i)?, Kind::Number)),
    }
}

/// The offset after the object or array at `data[i]`, whose brackets must
/// balance.
fn container_end(data: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < data.len() {
        match data[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => i = string_end(data, i)?.0 - 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Appends `s` as a JSON string: between quotes, with `"` and `\` escaped by
/// a backslash, the control characters `\b`, `\f`, `\n`, `\r`, `\t` by
/// their short escapes and the others below U+0020 as `\u00xx` (lower-case
/// hexadecimal); every other byte, UTF-8 or not, as it is.
pub fn append_quoted(dst: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    dst.push(b'"');
    let mut start = 0;
    for (i, &c) in s.iter().enumerate() {
        if c >= 0x20 && c != b'"' && c != b'\\' {
            continue;
        }
        dst.extend_from_slice(&s[start..i]);
        match c {
            b'"' | b'\\' => dst.extend_from_slice(&[b'\\', c]),
            0x08 => dst.extend_from_slice(b"\\b"),
            0x0c => dst.extend_from_slice(b"\\f"),
            b'\n' => dst.extend_from_slice(b"\\n"),
            b'\r' => dst.extend_from_slice(b"\\r"),
            b'\t' => dst.extend_from_slice(b"\\t"),
            _ => dst.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
        }
        start = i + 1;
    }
    dst.extend_from_slice(&s[start..]);
    dst.push(b'"');
}

/// Appends `v` in the fewest digits that read back as it, without an
/// exponent (Go's `strconv.FormatFloat(v, 'f', -1, 64)`); NaN and the
/// infinities, which JSON cannot write, as `null`.
pub fn append_float(dst: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        dst.extend_from_slice(b"null");
        return;
    }
    if let Some((m, k)) = short_decimal(v) {
        // v is m / 10^k: the integer's digits with a point k from the end.
        if m < 0 {
            dst.push(b'-');
        }
        let mut u = m.unsigned_abs();
        let mut digits = [0u8; 24];
        let mut p = digits.len();
        let mut i = 0;
        while u > 0 || i <= k {
            if i == k && k > 0 {
                p -= 1;
                digits[p] = b'.';
            }
            p -= 1;
            digits[p] = b'0' + (u % 10) as u8;
            u /= 10;
            i += 1;
        }
        dst.extend_from_slice(&digits[p..]);
        return;
    }
    // Display writes the fewest digits, but where two of them are as near
    // as each other to v it may take the upper one where Go takes the even
    // one: round v exactly, half to even, to as many digits, and take that
    // when it reads back as v.
    let mut shortest = [0u8; 400];
    let n = {
        let mut c = std::io::Cursor::new(&mut shortest[..]);
        let _ = write!(c, "{}", v);
        c.position() as usize
    };
    let shortest = &shortest[..n];
    let mut digits = shortest.iter().filter(|c| c.is_ascii_digit()).skip_while(|&&c| c == b'0').count();
    if !shortest.contains(&b'.') {
        digits -= shortest.iter().rev().take_while(|&&c| c == b'0').count();
    }
    if v == 0.0 || digits == 0 {
        dst.extend_from_slice(shortest);
        return;
    }
    let mut exact = [0u8; 40];
    let n = {
        let mut c = std::io::Cursor::new(&mut exact[..]);
        let _ = write!(c, "{:.*e}", digits - 1, v);
        c.position() as usize
    };
    let exact = &mut exact[..n];
    // Rust's formatting may round a tie up (1.63 does): take the even one.
    if halfway(v, digits) {
        let e = exact.iter().position(|&c| c == b'e').unwrap_or(exact.len());
        if let Some(last) = exact[..e].iter().rposition(|c| c.is_ascii_digit()) {
            if (exact[last] - b'0') % 2 == 1 {
                exact[last] -= 1;
            }
        }
    }
    let exact: &[u8] = exact;
    let reads_back = std::str::from_utf8(exact).ok().and_then(|s| s.parse::<f64>().ok()) == Some(v);
    if !reads_back {
        dst.extend_from_slice(shortest);
        return;
    }
    // exact is [-]d[.ddd]e[-]x: write it without the exponent.
    let (sign, rest) = match exact.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, exact),
    };
    let e = rest.iter().position(|&c| c == b'e').unwrap_or(rest.len());
    let mut mant = [0u8; 20];
    let mut nd = 0;
    for &c in &rest[..e] {
        if c != b'.' && nd < mant.len() {
            mant[nd] = c;
            nd += 1;
        }
    }
    let exp: i32 = std::str::from_utf8(&rest[(e + 1).min(rest.len())..]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    if sign {
        dst.push(b'-');
    }
    if exp < 0 {
        dst.extend_from_slice(b"0.");
        for _ in 0..(-exp - 1) {
            dst.push(b'0');
        }
        dst.extend_from_slice(&mant[..nd]);
        return;
    }
    let exp = exp as usize;
    for i in 0..=exp {
        dst.push(if i < nd { mant[i] } else { b'0' });
    }
    if nd > exp + 1 {
        dst.push(b'.');
        dst.extend_from_slice(&mant[exp + 1..nd]);
    }
}

/// The powers of ten an f64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `v` as m / 10^k with at most 15 digits in m and k as small as it can
/// be, the case of most numbers a UDF writes, much faster than formatting
/// it twice. Every decimal of at most 15 significant digits reads back as a
/// double of its own (DBL_DIG), so when m / 10^k reads back as v it is the
/// shortest decimal that does (the Go SDK's writer takes the same steps).
fn short_decimal(v: f64) -> Option<(i64, usize)> {
    const LIMIT: f64 = 1e15;
    if v == 0.0 || v >= LIMIT || v <= -LIMIT {
        return None;
    }
    for (k, &p) in POW10.iter().enumerate() {
        let t = v * p;
        if t >= LIMIT || t <= -LIMIT {
            return None;
        }
        // t rounded half to even.
        let mut r = t.round();
        if (r - t).abs() == 0.5 {
            r = 2.0 * (t / 2.0).round();
        }
        let m = r as i64;
        if m as f64 / p == v {
            return Some((m, k));
        }
    }
    None
}

/// Whether `v`, exactly, lies halfway between two decimals of `digits`
/// significant digits: its exact expansion has `digits + 1` significant
/// digits, the last a 5.
fn halfway(v: f64, digits: usize) -> bool {
    let mut one_more = [0u8; 40];
    let n = {
        let mut c = std::io::Cursor::new(&mut one_more[..]);
        let _ = write!(c, "{:.*e}", digits, v);
        c.position() as usize
    };
    let e = one_more[..n].iter().position(|&c| c == b'e').unwrap_or(n);
    if e == 0 || one_more[e - 1] != b'5' {
        return false;
    }
    // A double's exact expansion has at most 767 significant digits.
    let mut all = [0u8; 800];
    let n = {
        let mut c = std::io::Cursor::new(&mut all[..]);
        let _ = write!(c, "{:.*e}", 780, v);
        c.position() as usize
    };
    let e = all[..n].iter().position(|&c| c == b'e').unwrap_or(n);
    let mant = all[..e].iter().filter(|c| c.is_ascii_digit());
    mant.skip(digits + 1).all(|&c| c == b'0')
}

/// Appends the decimal digits of `v`.
pub fn append_int(dst: &mut Vec<u8>, v: i64) {
    if v < 0 {
        dst.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut p = digits.len();
    let mut u = v.unsigned_abs();
    // WebAssembly has no 64-bit multiply-high, so dividing a u64 by a
    // constant is a division instruction (tens of cycles) where dividing a
    // u32 is a multiplication: one u64 division takes eight digits, and u32
    // arithmetic writes them two at a time.
    while u >= 100_000_000 {
        let low = (u % 100_000_000) as u32;
        u /= 100_000_000;
        p -= 8;
        put_pairs(&mut digits[p..p + 8], low);
    }
    let mut n = u as u32;
    while n >= 100 {
        p -= 2;
        put_pairs(&mut digits[p..p + 2], n % 100);
        n /= 100;
    }
    if n >= 10 {
        p -= 2;
        put_pairs(&mut digits[p..p + 2], n);
    } else {
        p -= 1;
        digits[p] = b'0' + n as u8;
    }
    dst.extend_from_slice(&digits[p..]);
}

/// The two digits of every number below 100.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes the last `out.len()` (even) digits of `n` into `out`, zero-padded.
fn put_pairs(out: &mut [u8], mut n: u32) {
    let mut i = out.len();
    while i > 0 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
}

/// Appends a JSON value: objects and arrays, their keys and values, with the
/// commas between members and elements. Methods chain. It allocates only
/// when its buffer must grow, so one `Writer` reset for every record
/// allocates nothing once the buffer is large enough. It does not check
/// that its calls make a valid value.
#[derive(Default)]
pub struct Writer {
    buf: Vec<u8>,
    more: bool,
}

impl Writer {
    /// An empty writer.
    pub const fn new() -> Writer {
        Writer { buf: Vec::new(), more: false }
    }

    /// Empties the buffer, keeping its memory.
    pub fn reset(&mut self) -> &mut Self {
        self.buf.clear();
        self.more = false;
        self
    }

    /// What was written.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    fn comma(&mut self) {
        if self.more {
            self.buf.push(b',');
        }
    }

    fn value(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.comma();
        f(&mut self.buf);
        self.more = true;
        self
    }

    /// Writes `{`.
    pub fn begin_object(&mut self) -> &mut Self {
        self.comma();
        self.buf.push(b'{');
        self.more = false;
        self
    }

    /// Writes `}`.
    pub fn end_object(&mut self) -> &mut Self {
        self.buf.push(b'}');
        self.more = true;
        self
    }

    /// Writes `[`.
    pub fn begin_array(&mut self) -> &mut Self {
        self.comma();
        self.buf.push(b'[');
        self.more = false;
        self
    }

    /// Writes `]`.
    pub fn end_array(&mut self) -> &mut Self {
        self.buf.push(b']');
        self.more = true;
        self
    }

    /// Writes a member's key, escaped, and its colon; its value comes next.
    pub fn key(&mut self, k: &str) -> &mut Self {
        self.comma();
        append_quoted(&mut self.buf, k.as_bytes());
        self.buf.push(b':');
        self.more = false;
        self
    }

    /// Writes `s` as a JSON string, escaped as [`append_quoted`] does.
    pub fn string(&mut self, s: &[u8]) -> &mut Self {
        self.value(|b| append_quoted(b, s))
    }

    /// Writes an integer.
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.value(|b| append_int(b, v))
    }

    /// Writes a number as [`append_float`] does.
    pub fn float(&mut self, v: f64) -> &mut Self {
        self.value(|b| append_float(b, v))
    }

    /// Writes `true` or `false`.
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.value(|b| b.extend_from_slice(if v { b"true" } else { b"false" }))
    }

    /// Writes `null`.
    pub fn null(&mut self) -> &mut Self {
        self.value(|b| b.extend_from_slice(b"null"))
    }

    /// Writes `v`, a JSON value, as it is: what [`get`] returned, say.
    pub fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.value(|b| b.extend_from_slice(v))
    }
}

#[cfg(test)]
mod tests {
    use super::{append_int, plain_until};

    /// plain_until stops at the first quote, backslash or control
    /// character, or short of it in the last eight bytes, never past it.
    #[test]
    fn plain_until_stops_at_special_bytes() {
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for filler in [b'a', b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff, 0x21] {
                for n in 0..20 {
                    for at in 0..=n {
                        let mut data = vec![filler; n];
                        if at < n {
                            data[at] = special;
                        }
                        for from in 0..=n {
                            let want = (from..n).find(|&i| data[i] == special).unwrap_or(n);
                            let got = plain_until(&data, from);
                            assert!(
                                got == want || got < want && n - got < 8,
                                "plain_until({data:?}, {from}) = {got}, want {want}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// append_int writes what Rust's formatting writes, at every number of
    /// digits and at the ends of i64.
    #[test]
    fn append_int_writes_decimal() {
        let mut vs = vec![0, i64::MAX, i64::MIN, i64::MIN + 1];
        let mut p: i64 = 1;
        for _ in 0..19 {
            vs.extend_from_slice(&[p - 1, p, p + 1, 7 * p, -p, -(p - 1)]);
            p = p.saturating_mul(10);
        }
        vs.extend_from_slice(&[1_700_000_000_000, 123_456_789_012, 100_000_000, 99_999_999]);
        let mut buf = Vec::new();
        for v in vs {
            buf.clear();
            append_int(&mut buf, v);
            assert_eq!(std::str::from_utf8(&buf).unwrap(), v.to_string(), "append_int({v})");
        }
    }

    /// append_float writes what Go's strconv writes: short decimals on the
    /// fast path, the others exactly, and of two shortest decimals as near
    /// to the value as each other the even one.
    #[test]
    fn append_float_writes_as_go() {
        for (v, want) in [
            (922912862521546.25, "922912862521546.2"),
            (922912862521546.75, "922912862521546.8"),
            (-922912862521546.25, "-922912862521546.2"),
            (0.3, "0.3"),
            (2.5, "2.5"),
            (1e21, "1000000000000000000000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123.456, "123.456"),
            (1.5e-23, "0.000000000000000000000015"),
            (999999999999999.0, "999999999999999"),
            (-0.000123, "-0.000123"),
            (1e15, "1000000000000000"),
        ] {
            let mut buf = Vec::new();
            super::append_float(&mut buf, v);
            assert_eq!(std::str::from_utf8(&buf).unwrap(), want, "append_float({v})");
        }
    }
}
