//! trigger-rust: the custom window triggers `early` and `pairs` of
//! udfs/trigger, written with the Rust SDK. `early` fires a window at once
//! for a record with `"urgent": true` and again at the window's end; `pairs`
//! fires and purges every second record, and fires a lone record 10 ms of
//! processing time after it came.

use platform_udf::{json, module, Record, Result, Trigger, TriggerContext, TriggerResult};

struct Early;

impl Trigger for Early {
    fn on_element(t: &mut TriggerContext, r: Record) -> Result<TriggerResult> {
        let last = t.window().end - 1;
        if last <= t.watermark() {
            return Ok(TriggerResult::Fire);
        }
        t.register_event_time_timer(last);
        if json::get_bool(r.value, &["urgent"]) == Some(true) {
            return Ok(TriggerResult::Fire);
        }
        Ok(TriggerResult::Continue)
    }

    fn on_event_time(t: &mut TriggerContext, time: i64) -> Result<TriggerResult> {
        if time == t.window().end - 1 {
            return Ok(TriggerResult::Fire);
        }
        Ok(TriggerResult::Continue)
    }

    fn on_merge(t: &mut TriggerContext, _other: Option<&[u8]>) -> Result<()> {
        let last = t.window().end - 1;
        t.register_event_time_timer(last);
        Ok(())
    }

    fn clear(t: &mut TriggerContext) -> Result<()> {
        let last = t.window().end - 1;
        t.delete_event_time_timer(last);
        Ok(())
    }
}

/// The state of pairs: the records of the pair so far and the
/// processing-time timer it set (0: none), 16 bytes little-endian.
#[derive(Default)]
struct Pair {
    count: u64,
    timer: i64,
}

impl Pair {
    fn decode(b: Option<&[u8]>) -> Result<Pair> {
        let b = match b {
            None => return Ok(Pair::default()),
            Some(b) => b,
        };
        if b.len() != 16 {
            return Err(format!("pairs state of {} bytes, want 16", b.len()).into());
        }
        let mut c = [0u8; 8];
        let mut t = [0u8; 8];
        c.copy_from_slice(&b[..8]);
        t.copy_from_slice(&b[8..]);
        Ok(Pair { count: u64::from_le_bytes(c), timer: i64::from_le_bytes(t) })
    }

    fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.count.to_le_bytes());
        b[8..].copy_from_slice(&self.timer.to_le_bytes());
        b
    }
}

struct Pairs;

impl Trigger for Pairs {
    fn on_element(t: &mut TriggerContext, _r: Record) -> Result<TriggerResult> {
        let mut p = Pair::decode(t.state())?;
        p.count += 1;
        if p.count >= 2 {
            if p.timer != 0 {
                t.delete_processing_time_timer(p.timer);
            }
            t.set_state(&[]);
            return Ok(TriggerResult::FireAndPurge);
        }
        if p.timer == 0 {
            p.timer = t.processing_time() + 10;
            t.register_processing_time_timer(p.timer);
        }
        t.set_state(&p.encode());
        Ok(TriggerResult::Continue)
    }

    fn on_processing_time(t: &mut TriggerContext, _time: i64) -> Result<TriggerResult> {
        let mut p = Pair::decode(t.state())?;
        p.timer = 0;
        t.set_state(&p.encode());
        Ok(TriggerResult::Fire)
    }

    fn on_merge(t: &mut TriggerContext, other: Option<&[u8]>) -> Result<()> {
        let mut p = Pair::decode(t.state())?;
        let o = Pair::decode(other)?;
        p.count += o.count;
        if p.timer == 0 || (o.timer != 0 && o.timer < p.timer) {
            p.timer = o.timer;
        }
        if p.timer != 0 {
            t.register_processing_time_timer(p.timer);
        }
        if p.count == 0 {
            return Ok(());
        }
        t.set_state(&p.encode());
        Ok(())
    }

    fn clear(t: &mut TriggerContext) -> Result<()> {
        let p = Pair::decode(t.state())?;
        if p.timer != 0 {
            t.delete_processing_time_timer(p.timer);
        }
        Ok(())
    }
}

module! {
    "early" => trigger(Early),
    "pairs" => trigger(Pairs),
}
