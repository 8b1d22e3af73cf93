//! dedup-rust: the keyed process function `dedup` of udfs/dedup, written
//! with the Rust SDK: it emits a record only the first time its key is seen
//! within an hour, keeping one value state with a TTL per key.

use platform_udf::{module, Context, Record, Result, ValueState};

/// Marks a key as seen; the platform forgets the mark an hour after it was
/// written (or as the job's state_ttl says).
static SEEN: ValueState = ValueState::new("seen").ttl("1h");

/// Passes on the first record of a key not seen within the TTL and drops
/// the others.
fn dedup(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
    if SEEN.get(ctx).is_some() {
        return Ok(());
    }
    SEEN.set(ctx, &[1]);
    ctx.emit_record(&recs[0]);
    Ok(())
}

module! {
    states: [SEEN],
    "dedup" => process(dedup),
}
