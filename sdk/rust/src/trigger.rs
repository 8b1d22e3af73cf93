//! Custom window triggers (kind `trigger`, Flink's `Trigger`): the decoding
//! of their grouped frames and the encoding of their answers (docs/ABI.md,
//! Custom triggers).

use crate::frame::{self, Reader, TAG_ERROR};
use crate::window::{read_group, Window};
use crate::{Record, Result, TimeDomain};

/// What a trigger answers a record or a timer with, as Flink's
/// `TriggerResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerResult {
    /// Nothing happens.
    Continue = 0,
    /// The window is emitted; its contents stay (later firings accumulate).
    Fire = 1,
    /// The window's contents are dropped.
    Purge = 2,
    /// The window is emitted, then its contents are dropped.
    FireAndPurge = 3,
}

/// The bound of a window's trigger state in bytes.
pub const MAX_TRIGGER_STATE: usize = 4096;

const OP_ELEMENT: u8 = 4;
const OP_TIMER: u8 = 5;
const OP_MERGE: u8 = 6;
const OP_CLEAR: u8 = 7;
const TAG_ACCUMULATOR: u8 = 6;
const TAG_TRIGGER: u8 = 9;
const TAG_TIMER: u8 = 10;

/// What a trigger method sees and may change: its key and window, the
/// times, the window's trigger state (a few bytes the platform keeps per
/// key and window) and the window's timers.
pub struct TriggerContext<'a, 'o> {
    key: &'a [u8],
    window: Window,
    watermark: i64,
    processing_time: i64,
    state: Option<&'a [u8]>,
    new_state: Option<Vec<u8>>,
    out: &'o mut Vec<u8>,
    group: u32,
    entries: u32,
}

impl<'a, 'o> TriggerContext<'a, 'o> {
    /// The window's key.
    pub fn key(&self) -> &[u8] {
        self.key
    }

    /// The window's bounds; a global window's are the whole i64 range.
    pub fn window(&self) -> Window {
        self.window
    }

    /// The current event-time watermark (`i64::MIN` before the first).
    pub fn watermark(&self) -> i64 {
        self.watermark
    }

    /// The current processing time in milliseconds.
    pub fn processing_time(&self) -> i64 {
        self.processing_time
    }

    /// The window's trigger state, if it has one; in `on_merge`, the state
    /// merged so far.
    pub fn state(&self) -> Option<&[u8]> {
        match &self.new_state {
            Some(s) if s.is_empty() => None,
            Some(s) => Some(s),
            None => self.state,
        }
    }

    /// Replaces the window's trigger state (at most [`MAX_TRIGGER_STATE`]
    /// bytes); an empty one clears it.
    pub fn set_state(&mut self, b: &[u8]) {
        self.new_state = Some(b.to_vec());
    }

    /// Asks for `on_event_time` when the watermark reaches `ts`; timers of a
    /// window are de-duplicated.
    pub fn register_event_time_timer(&mut self, ts: i64) {
        self.timer(false, TimeDomain::EventTime, ts)
    }

    /// Deletes an event-time timer of the window.
    pub fn delete_event_time_timer(&mut self, ts: i64) {
        self.timer(true, TimeDomain::EventTime, ts)
    }

    /// Asks for `on_processing_time` when the clock reaches `ts`.
    pub fn register_processing_time_timer(&mut self, ts: i64) {
        self.timer(false, TimeDomain::ProcessingTime, ts)
    }

    /// Deletes a processing-time timer of the window.
    pub fn delete_processing_time_timer(&mut self, ts: i64) {
        self.timer(true, TimeDomain::ProcessingTime, ts)
    }

    fn timer(&mut self, delete: bool, d: TimeDomain, ts: i64) {
        frame::put_entry(self.out, TAG_TIMER, self.group);
        self.out.push(delete as u8);
        self.out.push(d as u8);
        self.out.extend_from_slice(&ts.to_le_bytes());
        self.entries += 1;
    }
}

/// A custom window trigger, named by a window's `trigger: {type: custom,
/// module, function}` in the job spec. `on_element` is required; the other
/// methods answer `Continue` and change nothing unless implemented.
pub trait Trigger {
    /// Called for each record added to a window.
    fn on_element(t: &mut TriggerContext, r: Record) -> Result<TriggerResult>;
    /// Called for the window's event-time timers (its cleanup timer too, at
    /// the window's end plus the allowed lateness).
    fn on_event_time(_t: &mut TriggerContext, _time: i64) -> Result<TriggerResult> {
        Ok(TriggerResult::Continue)
    }
    /// Called for the window's processing-time timers.
    fn on_processing_time(_t: &mut TriggerContext, _time: i64) -> Result<TriggerResult> {
        Ok(TriggerResult::Continue)
    }
    /// Called when sessions merge into the context's window: once per
    /// session merged in, with its state (`None` when it has none), and once
    /// with `None` when a session only grows. It merges `other` into the
    /// state and registers the timers the merged window needs.
    fn on_merge(_t: &mut TriggerContext, _other: Option<&[u8]>) -> Result<()> {
        Ok(())
    }
    /// Called when the window goes away (or is merged into another): it
    /// deletes the timers it registered. The state is dropped after it.
    fn clear(_t: &mut TriggerContext) -> Result<()> {
        Ok(())
    }
}

/// Runs a trigger of type T over a grouped frame: one method call per group.
pub fn trigger<T: Trigger>(out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut r = Reader::new(input);
    let op = r.u8()?;
    let watermark = r.i64()?;
    let processing_time = r.i64()?;
    let count = r.u32()?;
    let mut recs = Vec::new();
    let mut entries = 0;
    for g in 0..count {
        let group = r.group()?;
        read_group(&mut r, group.flags, &mut recs)?;
        let mark = out.len();
        let mut t = TriggerContext {
            key: group.key,
            window: group.window.unwrap_or(Window { start: 0, end: 0 }),
            watermark,
            processing_time,
            state: group.acc,
            new_state: None,
            out: &mut *out,
            group: g,
            entries: 0,
        };
        let answer = match op {
            OP_ELEMENT => match recs.first() {
                Some(rec) => T::on_element(&mut t, *rec),
                None => Err(format!("udf: trigger element group {} without a record", g).into()),
            },
            OP_TIMER if group.domain == TimeDomain::ProcessingTime as u8 => T::on_processing_time(&mut t, group.timer),
            OP_TIMER => T::on_event_time(&mut t, group.timer),
            OP_MERGE => {
                T::on_merge(&mut t, group.acc2).map(|_| TriggerResult::Continue)
            }
            OP_CLEAR => T::clear(&mut t).map(|_| TriggerResult::Continue),
            op => Err(format!("udf: trigger called with op {}", op).into()),
        };
        let answer = answer.and_then(|res| {
            if let Some(s) = t.new_state.take() {
                if s.len() > MAX_TRIGGER_STATE {
                    return Err(format!("udf: trigger state of {} bytes, more than {}", s.len(), MAX_TRIGGER_STATE).into());
                }
                frame::put_entry(t.out, TAG_ACCUMULATOR, g);
                frame::put_bytes(t.out, &s);
                t.entries += 1;
            }
            if res != TriggerResult::Continue {
                frame::put_entry(t.out, TAG_TRIGGER, g);
                t.out.push(res as u8);
                t.entries += 1;
            }
            Ok(t.entries)
        });
        match answer {
            Ok(n) => entries += n,
            Err(e) => {
                out.truncate(mark);
                frame::put_entry(out, TAG_ERROR, g);
                frame::put_bytes(out, e.message().as_bytes());
                entries += 1;
            }
        }
    }
    r.finish(count, "groups")?;
    Ok(entries)
}
