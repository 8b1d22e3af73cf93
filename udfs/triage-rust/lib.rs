//! triage-rust: the keyed process function `triage` of udfs/triage, written
//! with the Rust SDK: orders with an integer "amount" below 900 go on,
//! larger ones to the side output "large", and orders without a readable
//! amount to "invalid", each as it is.

use platform_udf::{module, Context, Output, Record, Result};

/// The amount from which an order is large.
const LARGE_AMOUNT: i64 = 900;

/// Passes each order on, or sends it to "large" or "invalid", as it is.
fn triage(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
    for r in recs {
        let o = Output::new(r.value).key(r.key).timestamp(r.timestamp).headers(r.headers.iter().collect());
        match amount(r.value) {
            None => ctx.output("invalid", o),
            Some(n) if n >= LARGE_AMOUNT => ctx.output("large", o),
            Some(_) => ctx.emit(o),
        }
    }
    Ok(())
}

/// Reads the 1 to 9 digits right after the first `"amount":` of v, as the
/// Go module does.
fn amount(v: &[u8]) -> Option<i64> {
    const FIELD: &[u8] = b"\"amount\":";
    let i = v.windows(FIELD.len()).position(|w| w == FIELD)?;
    let mut n = 0i64;
    let mut digits = 0;
    for &c in &v[i + FIELD.len()..] {
        if !c.is_ascii_digit() || digits == 9 {
            break;
        }
        n = n * 10 + i64::from(c - b'0');
        digits += 1;
    }
    if digits > 0 {
        Some(n)
    } else {
        None
    }
}

module! {
    "triage" => process(triage),
}
