//! timeout-rust: Flink's KeyedProcessFunction example
//! (CountWithTimeoutFunction) written with the Rust SDK: it counts each
//! key's records and emits the count once a key has had no record for a
//! minute of event time, with a value state and an event-time timer per
//! record. The state has a TTL of an hour of processing time: a key quiet
//! for that long is forgotten, and its timer then emits nothing.

use platform_udf::{module, Context, Record, Result, TimeDomain, Timer, ValueState};

/// A minute of event time, in milliseconds.
const QUIET: i64 = 60_000;

/// A key's count and the timestamp of its last record, two 8-byte
/// little-endian integers.
static COUNTS: ValueState = ValueState::new("counts").ttl("1h");

/// Reads a key's count and last timestamp, if it has them.
fn counts(ctx: &mut Context) -> Result<Option<(u64, i64)>> {
    match COUNTS.get(ctx) {
        None => Ok(None),
        Some(v) if v.len() == 16 => {
            let (mut c, mut last) = ([0u8; 8], [0u8; 8]);
            c.copy_from_slice(&v[..8]);
            last.copy_from_slice(&v[8..]);
            Ok(Some((u64::from_le_bytes(c), i64::from_le_bytes(last))))
        }
        Some(_) => Err("state counts: want 16 bytes".into()),
    }
}

/// Adds a key's records to its count and sets a timer a minute after each
/// one; only the last one's timer will report.
fn count(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
    let (mut c, mut last) = counts(ctx)?.unwrap_or((0, 0));
    for r in recs {
        c += 1;
        last = r.timestamp;
        ctx.register_timer(TimeDomain::EventTime, last + QUIET);
    }
    let mut v = [0u8; 16];
    v[..8].copy_from_slice(&c.to_le_bytes());
    v[8..].copy_from_slice(&last.to_le_bytes());
    COUNTS.set(ctx, &v);
    Ok(())
}

/// Emits the key's count, as decimal text, when the timer is the last
/// record's, and forgets the key.
fn timeout(ctx: &mut Context, _key: &[u8], t: Timer) -> Result<()> {
    if let Some((c, last)) = counts(ctx)? {
        if t.timestamp == last + QUIET {
            ctx.emit_value(c.to_string().as_bytes());
            COUNTS.clear(ctx);
        }
    }
    Ok(())
}

module! {
    states: [COUNTS],
    "count" => process(count),
    "timeout" => on_timer(timeout),
}

/// Native tests through the SDK's harness: `cargo test`.
#[cfg(test)]
mod tests {
    /// The script shared with timeout-c and timeout-as gives their
    /// transcript.
    #[test]
    fn script() {
        let got = super::platform_harness().run_script(include_str!("../testdata/harness/timeout.script"));
        assert_eq!(got.as_deref(), Ok(include_str!("../testdata/harness/timeout.want")));
    }
}
