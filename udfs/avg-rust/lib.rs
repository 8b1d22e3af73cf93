//! avg-rust: the window functions of udfs/avg, written with the Rust SDK,
//! over JSON records with a number field "amount": an incremental average
//! (aggregate), the record with the largest amount (reduce) and a count of
//! records (aggregate). The README says exactly what each writes.

use std::borrow::Cow;

use platform_udf::{json, module, Aggregate, Record, Result, Window};

/// The accumulator of avg: how many amounts and their sum, stored in 16
/// bytes: the count, then the sum's bits, little-endian.
struct Mean;

impl Aggregate for Mean {
    type Acc = (i64, f64);

    fn create() -> Self::Acc {
        (0, 0.0)
    }

    fn add(acc: &mut Self::Acc, r: Record) -> Result<()> {
        let v = amount(r.value)?;
        acc.0 += 1;
        acc.1 += v;
        Ok(())
    }

    fn merge(acc: &mut Self::Acc, other: Self::Acc) -> Result<()> {
        acc.0 += other.0;
        acc.1 += other.1;
        Ok(())
    }

    fn result(key: &[u8], w: Window, acc: &Self::Acc) -> Result<Vec<u8>> {
        let mut b = b"{\"key\":".to_vec();
        json_string(&mut b, key);
        b.extend_from_slice(format!(",\"window_start\":{},\"window_end\":{},\"avg\":", w.start, w.end).as_bytes());
        // The SDK writes a float as Go does; Display may differ at a tie.
        json::append_float(&mut b, acc.1 / acc.0 as f64);
        b.extend_from_slice(format!(",\"count\":{}}}", acc.0).as_bytes());
        Ok(b)
    }

    fn encode(acc: &Self::Acc, out: &mut Vec<u8>) {
        out.extend_from_slice(&acc.0.to_le_bytes());
        out.extend_from_slice(&acc.1.to_bits().to_le_bytes());
    }

    fn decode(b: &[u8]) -> Result<Self::Acc> {
        if b.len() != 16 {
            return Err("avg: accumulator is not 16 bytes".into());
        }
        let word = |i: usize| u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
        Ok((word(0) as i64, f64::from_bits(word(8))))
    }
}

/// The accumulator of count: the number of records, in 8 bytes.
struct Count;

impl Aggregate for Count {
    type Acc = i64;

    fn create() -> i64 {
        0
    }

    fn add(acc: &mut i64, _: Record) -> Result<()> {
        *acc += 1;
        Ok(())
    }

    fn merge(acc: &mut i64, other: i64) -> Result<()> {
        *acc += other;
        Ok(())
    }

    fn result(_: &[u8], _: Window, acc: &i64) -> Result<Vec<u8>> {
        Ok(acc.to_string().into_bytes())
    }

    fn encode(acc: &i64, out: &mut Vec<u8>) {
        out.extend_from_slice(&acc.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Result<i64> {
        let b: [u8; 8] = b.try_into().map_err(|_| "count: accumulator is not 8 bytes")?;
        Ok(i64::from_le_bytes(b))
    }
}

/// Keeps the record value with the larger amount (the earlier one on a tie).
fn largest<'a>(acc: &'a [u8], value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
    Ok(Cow::Borrowed(if amount(value)? > amount(acc)? { value } else { acc }))
}

/// Reads the number after "amount": in a flat JSON object, as the Go module
/// does: an integer exactly, anything else as a float.
fn amount(v: &[u8]) -> Result<f64> {
    const FIELD: &[u8] = b"\"amount\":";
    let i = v.windows(FIELD.len()).position(|w| w == FIELD).ok_or(r#"no "amount" field"#)?;
    let rest = &v[i + FIELD.len()..];
    let rest = &rest[rest.iter().take_while(|&&c| c == b' ').count()..];
    let end = rest.iter().take_while(|&&c| c.is_ascii_digit() || b"-.eE+".contains(&c)).count();
    if end == 0 {
        return Err(r#""amount" is not a number"#.into());
    }
    let neg = rest[0] == b'-';
    let digits = if neg { &rest[1..end] } else { &rest[..end] };
    let mut n: i64 = 0;
    let whole = !digits.is_empty()
        && digits.iter().all(|&c| {
            let ok = c.is_ascii_digit() && n <= i64::MAX / 10 - 9;
            if ok {
                n = n * 10 + (c - b'0') as i64;
            }
            ok
        });
    if whole {
        return Ok(if neg { -n } else { n } as f64);
    }
    std::str::from_utf8(&rest[..end]).ok().and_then(|s| s.parse().ok()).ok_or_else(|| r#""amount" is not a number"#.into())
}

/// Appends s as a JSON string, escaping quotes, backslashes and control
/// characters; other bytes pass as they are.
fn json_string(b: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    b.push(b'"');
    for &c in s {
        match c {
            b'"' | b'\\' => b.extend_from_slice(&[b'\\', c]),
            0..=0x1f => b.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
            _ => b.push(c),
        }
    }
    b.push(b'"');
}

module! {
    "avg" => aggregate(Mean),
    "largest" => reduce(largest),
    "count" => aggregate(Count),
}
