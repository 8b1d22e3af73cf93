//! Tests of the native harness with a module of its own: list, value and
//! map state with TTL, event and processing-time timers, timers registered
//! by on_timer, side outputs, errors and broadcast state.

use crate::{
    module, BroadcastState, Context, Harness, HarnessOutput, HarnessRecord, HarnessTimer, ListState, MapState, Record, Result, TimeDomain,
    Timer, ValueState,
};

static COUNT: ValueState = ValueState::new("count").ttl("10s");
static SEEN: ListState = ListState::new("seen").ttl("10s");
static LAST: MapState = MapState::new("last");
static RULES: BroadcastState = BroadcastState::new("rules");

/// Counts a key's records, keeps their values and its last one, and sets an
/// event-time timer 100 ms after each record and a processing-time timer a
/// second after now.
fn track(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
    if recs[0].value == b"bad" {
        return Err("bad record".into());
    }
    for r in recs {
        SEEN.append(ctx, r.value);
        ctx.register_timer(TimeDomain::EventTime, r.timestamp + 100);
    }
    let n = COUNT.get(ctx).map_or(0, |v| v[0]) + recs.len() as u8;
    COUNT.set(ctx, &[n]);
    LAST.put(ctx, b"value", recs[recs.len() - 1].value);
    let now = ctx.processing_time();
    ctx.register_timer(TimeDomain::ProcessingTime, now + 1000);
    let rule = RULES.get(ctx, b"prefix").map(|v| v.to_vec()).unwrap_or_default();
    let out = format!("{}count {}", String::from_utf8_lossy(&rule), n);
    ctx.emit_value(out.as_bytes());
    Ok(())
}

/// Reports an event-time timer with the key's values, and chains a timer a
/// millisecond later to each one at x10; reports a processing-time timer on
/// the side output "proc".
fn fire(ctx: &mut Context, _key: &[u8], t: Timer) -> Result<()> {
    let seen: Vec<String> = SEEN.get(ctx).map(|v| String::from_utf8_lossy(v).into_owned()).collect();
    match t.domain {
        TimeDomain::EventTime => {
            ctx.emit_value(format!("event {} seen {}", t.timestamp, seen.join(",")).as_bytes());
            if t.timestamp % 100 == 10 {
                ctx.register_timer(TimeDomain::EventTime, t.timestamp + 1);
            }
        }
        TimeDomain::ProcessingTime => ctx.output_value("proc", format!("proc {}", t.timestamp).as_bytes()),
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

/// Writes the broadcast state from the keyed side, which the platform
/// refuses.
fn write_rules(ctx: &mut Context, _key: &[u8], _recs: &[Record]) -> Result<()> {
    RULES.put(ctx, b"prefix", b"x");
    Ok(())
}

module! {
    states: [COUNT, SEEN, LAST, RULES],
    "track" => process(track),
    "fire" => on_timer(fire),
    "rules" => process_broadcast(rules),
    "write_rules" => process(write_rules),
}

fn out(index: usize, key: &str, value: &str, timestamp: i64) -> HarnessOutput {
    HarnessOutput { index, key: key.into(), value: value.into(), timestamp, ..Default::default() }
}

fn side(index: usize, key: &str, value: &str, timestamp: i64, tag: &str) -> HarnessOutput {
    HarnessOutput { side: Some(tag.into()), ..out(index, key, value, timestamp) }
}

fn rec(value: &str, ts: i64) -> HarnessRecord {
    HarnessRecord::new(value, ts)
}

enum Step {
    Process(&'static str, Vec<HarnessRecord>),
    Watermark(i64),
    Now(i64),
}

/// A scripted run: each step's outputs, exactly.
#[test]
fn time_state_and_timers() {
    use Step::*;
    let steps: Vec<(Step, Vec<HarnessOutput>)> = vec![
        (Process("a", vec![rec("x", 10), rec("y", 20)]), vec![out(1, "a", "count 2", 20)]),
        (Now(500), vec![]),
        (Process("b", vec![rec("z", 15)]), vec![out(0, "b", "count 1", 15)]),
        // The timer at 110 fires and registers one at 111, due in the same move.
        (Watermark(112), vec![out(0, "a", "event 110 seen x,y", 110), out(1, "a", "event 111 seen x,y", 111)]),
        // The watermark does not go back.
        (Watermark(100), vec![]),
        // Timers fire in timestamp order across keys.
        (Watermark(120), vec![out(0, "b", "event 115 seen z", 115), out(1, "a", "event 120 seen x,y", 120)]),
        (Now(999), vec![]),
        (Now(1000), vec![side(0, "a", "proc 1000", 1000, "proc")]),
        (Now(9_999), vec![side(0, "b", "proc 1500", 1500, "proc")]),
        // a's count and values, written at 0, expire at 10s; its map has no TTL.
        (Now(10_000), vec![]),
        (Process("a", vec![rec("w", 30)]), vec![out(0, "a", "count 1", 30)]),
        (Process("c", vec![rec("bad", 1)]), vec![HarnessOutput { index: 0, error: Some("bad record".into()), ..Default::default() }]),
    ];
    let mut h = platform_harness().on_timer("fire");
    for (i, (step, want)) in steps.into_iter().enumerate() {
        let got = match step {
            Process(key, recs) => h.process("track", key.as_bytes(), &recs),
            Watermark(wm) => h.advance_watermark(wm),
            Now(ms) => h.set_processing_time(ms),
        };
        assert_eq!(got, Ok(want), "step {}", i);
        if i == 9 {
            assert_eq!(h.value("count", b"a"), None);
            assert_eq!(h.list("seen", b"a"), Vec::<Vec<u8>>::new());
            assert_eq!(h.map("last", b"a"), vec![(b"value".to_vec(), b"y".to_vec())]);
            assert_eq!(h.value("count", b"b"), Some(vec![1]));
            assert_eq!(h.list("seen", b"b"), vec![b"z".to_vec()]);
        }
    }
    assert_eq!((h.watermark(), h.processing_time()), (120, 10_000));
    assert_eq!(
        h.timers(),
        vec![
            HarnessTimer { key: b"a".to_vec(), timestamp: 130, domain: TimeDomain::EventTime },
            HarnessTimer { key: b"a".to_vec(), timestamp: 11_000, domain: TimeDomain::ProcessingTime },
        ]
    );
}

/// The broadcast side writes the rules the keyed side reads; the keyed side
/// may not write them.
#[test]
fn broadcast_state() {
    let mut h = platform_harness();
    assert_eq!(h.process_broadcast("rules", &[rec("r1: ", 1), rec("r2: ", 2)]), Ok(vec![]));
    assert_eq!(h.map("rules", b"any key"), vec![(b"prefix".to_vec(), b"r2: ".to_vec())]);
    assert_eq!(h.process("track", b"k", &[rec("v", 5)]), Ok(vec![out(0, "k", "r2: count 1", 5)]));
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut h = platform_harness();
        let _ = h.process("write_rules", b"k", &[rec("v", 5)]);
    }));
    assert!(refused.is_err(), "a keyed write to broadcast state passed");
}

/// Misuse is an error that says what is wrong.
#[test]
fn errors() {
    let mut h = platform_harness();
    assert_eq!(h.process("nope", b"k", &[]), Err("udf: no function \"nope\" is registered".into()));
    assert_eq!(h.process("fire", b"k", &[]), Err("udf: \"fire\" is a on_timer function, not process".into()));
    assert_eq!(h.process("track", b"k", &[rec("v", 5)]).map(|o| o.len()), Ok(1));
    assert_eq!(h.advance_watermark(105), Err("udf: 1 timers fired and the harness has no on_timer function".into()));
    let mut h: Harness = platform_harness().on_timer("track");
    assert_eq!(h.process("track", b"k", &[rec("v", 5)]).map(|o| o.len()), Ok(1));
    assert_eq!(h.advance_watermark(105), Err("udf: \"track\" is a process function, not on_timer".into()));
}

/// The output decoder answers every malformed frame with an error, not a
/// panic: each prefix and each one-byte change of a frame with a record,
/// a side output and an error entry, and pseudo-random frames.
#[test]
fn malformed_output_frames() {
    use super::{resolve, Base};
    use crate::frame::{put_bytes, put_entry, put_u32, TAG_ERROR, TAG_RECORD};
    let mut f = Vec::new();
    put_u32(&mut f, 3);
    put_entry(&mut f, TAG_RECORD, 1);
    f.push(0x07);
    put_bytes(&mut f, b"key");
    put_bytes(&mut f, b"value");
    f.extend_from_slice(&42i64.to_le_bytes());
    put_u32(&mut f, 1);
    put_bytes(&mut f, b"h");
    put_bytes(&mut f, b"v");
    put_entry(&mut f, 8, 0);
    put_bytes(&mut f, b"tag");
    f.push(0);
    put_bytes(&mut f, b"side");
    put_entry(&mut f, TAG_ERROR, 1);
    put_bytes(&mut f, b"failed");
    let inputs = [Base { key: b"k".to_vec(), timestamp: 7, headers: vec![] }, Base { key: b"k".to_vec(), timestamp: 8, headers: vec![] }];
    let got = resolve(&f, &inputs).expect("the well-formed frame");
    assert_eq!(
        got,
        vec![
            HarnessOutput {
                index: 1,
                key: b"key".to_vec(),
                value: b"value".to_vec(),
                timestamp: 42,
                headers: vec![(b"h".to_vec(), b"v".to_vec())],
                ..Default::default()
            },
            side(0, "k", "side", 7, "tag"),
            HarnessOutput { index: 1, error: Some("failed".into()), ..Default::default() },
        ]
    );
    for n in 0..f.len() {
        assert!(resolve(&f[..n], &inputs).is_err(), "prefix of {} bytes decoded", n);
    }
    for i in 0..f.len() {
        for b in [0x00, 0x01, 0x7f, 0xff] {
            let mut g = f.clone();
            g[i] = b;
            let _ = resolve(&g, &inputs);
        }
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 64) as usize;
        let g: Vec<u8> = (0..len).map(|i| (seed >> (i % 8 * 8)) as u8 % 12).collect();
        let _ = resolve(&g, &inputs);
    }
}
