//! dedup-migrate-rust: udfs/dedup-migrate written with the Rust SDK, the
//! next version of dedup: it keeps a key's mark in a map state instead of a
//! value state, and converts the running version's marks when it takes a
//! job over.

use platform_udf::{module, Context, MapState, Record, Result, ValueState};

/// The value state of the version before: retired, restored only for
/// `migrate` to convert.
static SEEN: ValueState = ValueState::new("seen").ttl("1h").retired();

/// A key's marks by what they mark; "first" says its first record passed.
static MARKS: MapState = MapState::new("marks").ttl("1h");

const FIRST: &[u8] = b"first";
const MARK: &[u8] = &[1];

/// Passes on the first record of a key not seen within the TTL and drops
/// the others.
fn dedup(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
    if MARKS.get(ctx, FIRST).is_some() {
        return Ok(());
    }
    MARKS.put(ctx, FIRST, MARK);
    ctx.emit_record(&recs[0]);
    Ok(())
}

/// Moves a key's mark from SEEN into MARKS; a mark it does not know fails
/// the upgrade rather than guess.
fn migrate(ctx: &mut Context, _key: &[u8]) -> Result<()> {
    let v = match SEEN.get(ctx) {
        Some(v) => v.to_vec(),
        None => return Ok(()),
    };
    if v != MARK {
        return Err(format!("seen holds {}, not the mark 01", hex(&v)).into());
    }
    MARKS.put(ctx, FIRST, MARK);
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{:02x}", x)).collect()
}

module! {
    states: [SEEN, MARKS],
    "dedup" => process(dedup),
    "migrate" => migrate_state(migrate),
}
