//! firings-rust: the window process function `count` of udfs/firings,
//! written with the Rust SDK: it counts how often each window of each key
//! fired, in per-window state, so that a record late within the allowed
//! lateness, which fires the window again, is reported as its second firing.

use platform_udf::{module, Context, Record, Result, ValueState, Window};

/// The number of times a window of a key has fired, 8 bytes little-endian.
static FIRED: ValueState = ValueState::new("fired");

/// Emits "<key> [<start>,<end>) firing <n>: <m> records" for the n-th firing
/// of a window holding m records.
fn count(ctx: &mut Context, key: &[u8], w: Window, recs: &[Record]) -> Result<()> {
    let n = match FIRED.get(ctx) {
        None => 1,
        Some(v) => match <[u8; 8]>::try_from(v) {
            Ok(b) => u64::from_le_bytes(b) + 1,
            Err(_) => {
                let msg = format!("state fired of key {:?}: {} bytes, want 8", String::from_utf8_lossy(key), v.len());
                return Err(msg.into());
            }
        },
    };
    FIRED.set(ctx, &n.to_le_bytes());
    let mut out = key.to_vec();
    out.extend_from_slice(format!(" [{},{}) firing {}: {} records", w.start, w.end, n, recs.len()).as_bytes());
    ctx.emit_value(&out);
    Ok(())
}

module! {
    states: [FIRED],
    "count" => window_process_with_state(count),
}
