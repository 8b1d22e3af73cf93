//! timers-rust: a module for the tests of the Rust SDK's native harness
//! (sdk/rust/src/harness.rs), the twin of timers-c and timers-as: value,
//! list and map state with and without a TTL, event and processing-time
//! timers, a timer that on_timer registers, a side output, an error and a
//! broadcast state. udfs/testdata/harness/timers.script drives it.

use platform_udf::{module, BroadcastState, Context, ListState, MapState, Record, Result, TimeDomain, Timer, ValueState};

static COUNT: ValueState = ValueState::new("count").ttl("10s");
static SEEN: ListState = ListState::new("seen").ttl("10s");
static LAST: MapState = MapState::new("last");
static RULES: BroadcastState = BroadcastState::new("rules");

/// Counts a key's records (count, 10s TTL), keeps their values (seen, 10s
/// TTL) and its last one (last, no TTL), sets an event-time timer 100 ms
/// after each record and a processing-time timer a second after now, and
/// emits "<rule>count=<n>" with the broadcast rule "prefix". A first record
/// "bad" fails the group.
fn track(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
    if recs[0].value == b"bad" {
        return Err("bad record".into());
    }
    for r in recs {
        SEEN.append(ctx, r.value);
        ctx.register_timer(TimeDomain::EventTime, r.timestamp + 100);
    }
    let c = COUNT.get(ctx).filter(|v| v.len() == 1).map_or(0, |v| v[0]).wrapping_add(recs.len() as u8);
    COUNT.set(ctx, &[c]);
    LAST.put(ctx, b"value", recs[recs.len() - 1].value);
    let now = ctx.processing_time();
    ctx.register_timer(TimeDomain::ProcessingTime, now + 1000);
    let mut out = RULES.get(ctx, b"prefix").map(|r| r.to_vec()).unwrap_or_default();
    out.extend_from_slice(format!("count={}", c).as_bytes());
    ctx.emit_value(&out);
    Ok(())
}

/// Emits "event=<ts>,seen=<values>" for an event-time timer, and sets one a
/// millisecond later for each at x10; emits "proc=<ts>" on the side output
/// proc for a processing-time timer.
fn fire(ctx: &mut Context, _key: &[u8], t: Timer) -> Result<()> {
    if t.domain == TimeDomain::ProcessingTime {
        ctx.output_value("proc", format!("proc={}", t.timestamp).as_bytes());
        return Ok(());
    }
    let seen: Vec<Vec<u8>> = SEEN.get(ctx).map(|v| v.to_vec()).collect();
    let mut out = format!("event={},seen=", t.timestamp).into_bytes();
    out.extend_from_slice(&seen.join(&b","[..]));
    ctx.emit_value(&out);
    if t.timestamp % 100 == 10 {
        ctx.register_timer(TimeDomain::EventTime, t.timestamp + 1);
    }
    Ok(())
}

/// Sets the broadcast rule "prefix" to each record's value.
fn rules(ctx: &mut Context, recs: &[Record]) -> Result<()> {
    for r in recs {
        RULES.put(ctx, b"prefix", r.value);
    }
    Ok(())
}

module! {
    states: [COUNT, SEEN, LAST, RULES],
    "track" => process(track),
    "fire" => on_timer(fire),
    "rules" => process_broadcast(rules),
}

/// Native tests through the SDK's harness: `cargo test`.
#[cfg(test)]
mod tests {
    /// The script shared with timers-c and timers-as gives their
    /// transcript.
    #[test]
    fn script() {
        let got = super::platform_harness().run_script(include_str!("../testdata/harness/timers.script"));
        assert_eq!(got.as_deref(), Ok(include_str!("../testdata/harness/timers.want")));
    }
}
