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

/// Native tests through the SDK's harness: `cargo test`.
#[cfg(test)]
mod tests {
    use platform_udf::{HarnessOutput, HarnessRecord};

    fn rec(value: &str, ts: i64) -> HarnessRecord {
        HarnessRecord::new(value, ts).header("h", value)
    }

    /// A key passes again once its mark expired, an hour after it was
    /// written, at the harness's processing time; each key counts alone.
    /// A keyed function's outputs belong to its group's last record
    /// (index).
    #[test]
    fn first_record_per_key_within_the_ttl() {
        let hour = 3_600_000;
        let steps: Vec<(i64, &str, Vec<HarnessRecord>, Vec<HarnessOutput>)> = vec![
            (0, "a", vec![rec("a1", 1), rec("a2", 2)], vec![pass(1, "a", "a1", 1)]),
            (10, "a", vec![rec("a3", 3)], vec![]),
            (20, "b", vec![rec("b1", 4)], vec![pass(0, "b", "b1", 4)]),
            (hour - 1, "a", vec![rec("a4", 5)], vec![]),
            (hour, "a", vec![rec("a5", 6), rec("a6", 7)], vec![pass(1, "a", "a5", 6)]),
            (hour + 19, "b", vec![rec("b2", 8)], vec![]),
            (hour + 20, "b", vec![rec("b3", 9)], vec![pass(0, "b", "b3", 9)]),
            (hour + 21, "a", vec![rec("a7", 10)], vec![]),
        ];
        let mut h = super::platform_harness();
        for (i, (now, key, recs, want)) in steps.into_iter().enumerate() {
            assert_eq!(h.set_processing_time(now), Ok(vec![]), "step {}", i);
            assert_eq!(h.process("dedup", key.as_bytes(), &recs), Ok(want), "step {}", i);
        }
        assert_eq!(h.value("seen", b"a"), Some(vec![1]));
        assert_eq!(h.timers(), vec![]);
    }

    /// The script shared with dedup-c and dedup-as gives their transcript.
    #[test]
    fn script() {
        let got = super::platform_harness().run_script(include_str!("../testdata/harness/dedup.script"));
        assert_eq!(got.as_deref(), Ok(include_str!("../testdata/harness/dedup.want")));
    }

    fn pass(index: usize, key: &str, value: &str, timestamp: i64) -> HarnessOutput {
        HarnessOutput {
            index,
            key: key.into(),
            value: value.into(),
            timestamp,
            headers: vec![(b"h".to_vec(), value.into())],
            ..Default::default()
        }
    }
}
