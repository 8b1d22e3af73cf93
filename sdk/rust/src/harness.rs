//! A native test harness for keyed functions (Flink's operator test
//! harnesses): it runs a module's `process`, `on_timer` and
//! `process_broadcast` functions outside WebAssembly, against an in-memory
//! stand-in for the platform's keyed state and timers (harness_state.rs),
//! with explicit processing time and watermarks. The frames and dispatch are
//! the ones the platform drives inside WebAssembly.

use crate::call::{Caller, Function};
use crate::frame::{self, Reader};
use crate::harness_state::{self, Store};
use crate::state::StateDecl;
use crate::{TimeDomain, NO_WATERMARK};

/// Frame and group constants of ABI v1 the harness writes.
const OP_PROCESS: u8 = 0;
const GROUP_TIMER: u8 = 0x08;
const TAG_OUTPUT: u8 = 8;
const HAS_KEY: u8 = 0x01;
const HAS_TIMESTAMP: u8 = 0x02;
const HAS_HEADERS: u8 = 0x04;

/// An input record for the harness; the key is the group's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarnessRecord {
    /// The record's value.
    pub value: Vec<u8>,
    /// Event time, milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// The record's headers, in order, as (name, value).
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
}

impl HarnessRecord {
    /// A record with this value and timestamp and no headers.
    pub fn new(value: impl Into<Vec<u8>>, timestamp: i64) -> Self {
        HarnessRecord { value: value.into(), timestamp, headers: Vec::new() }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// What a function emitted for one input (record or fired timer), with the
/// fields it did not set inherited as the platform inherits them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarnessOutput {
    /// The position of the input it belongs to: in the records passed to
    /// `process`, or among the timers a time move fired.
    pub index: usize,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    pub timestamp: i64,
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// The side output tag, for `ctx.output`; None for the main output.
    pub side: Option<String>,
    /// The error the function returned for this input; the other fields
    /// are empty then.
    pub error: Option<String>,
}

/// A registered timer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HarnessTimer {
    pub key: Vec<u8>,
    pub timestamp: i64,
    pub domain: TimeDomain,
}

/// Runs a module's keyed functions natively. Make one with the
/// `platform_harness()` function that [`module!`](crate::module) generates
/// outside WebAssembly, in the UDF crate's tests:
///
/// ```
/// use platform_udf::{module, Context, HarnessOutput, HarnessRecord, Record, Result, TimeDomain, Timer, ValueState};
///
/// /// The first record of a key in an hour (of processing time) passes.
/// static SEEN: ValueState = ValueState::new("seen").ttl("1h");
///
/// /// Passes a key's first record and reminds of it a second (of event
/// /// time) later.
/// fn first(ctx: &mut Context, _key: &[u8], recs: &[Record]) -> Result<()> {
///     if SEEN.get(ctx).is_none() {
///         SEEN.set(ctx, &[1]);
///         ctx.emit_record(&recs[0]);
///         ctx.register_timer(TimeDomain::EventTime, recs[0].timestamp + 1000);
///     }
///     Ok(())
/// }
///
/// fn remind(ctx: &mut Context, _key: &[u8], _t: Timer) -> Result<()> {
///     ctx.emit_value(b"reminder");
///     Ok(())
/// }
///
/// module! {
///     states: [SEEN],
///     "first" => process(first),
///     "remind" => on_timer(remind),
/// }
///
/// let out = |index, value: &str, timestamp| HarnessOutput {
///     index, key: b"k".to_vec(), value: value.into(), timestamp, ..Default::default()
/// };
/// let mut h = platform_harness().on_timer("remind");
/// let recs = [HarnessRecord::new("a", 5), HarnessRecord::new("b", 6)];
/// assert_eq!(h.process("first", b"k", &recs), Ok(vec![out(1, "a", 5)]));
/// assert_eq!(h.advance_watermark(1004), Ok(vec![]));
/// assert_eq!(h.advance_watermark(1005), Ok(vec![out(0, "reminder", 1005)]));
/// assert_eq!(h.process("first", b"k", &recs), Ok(vec![]));
/// assert_eq!(h.set_processing_time(3_600_000), Ok(vec![]));
/// assert_eq!(h.process("first", b"k", &recs[1..]), Ok(vec![out(0, "b", 6)]));
/// ```
///
/// State follows the declared TTL (entries expire TTL after they were last
/// written and are never returned once expired) against the harness's
/// processing time; a job's TTL overrides do not apply. Timers fire in
/// timestamp and key order when their clock reaches them, and timers that
/// `on_timer` registers fire in the same move when they are due too.
pub struct Harness {
    functions: &'static [Function],
    states: &'static [&'static StateDecl],
    on_timer: Option<String>,
    caller: Caller,
    store: Option<Store>,
    watermark: i64,
}

impl Harness {
    /// A harness over a module's functions and states, with empty state, no
    /// timers, processing time 0 and no watermark.
    pub fn new(functions: &'static [Function], states: &'static [&'static StateDecl]) -> Harness {
        Harness { functions, states, on_timer: None, caller: Caller::new(), store: Some(Store::new(states)), watermark: NO_WATERMARK }
    }

    /// Names the `on_timer` function that handles fired timers.
    pub fn on_timer(mut self, name: &str) -> Harness {
        self.set_on_timer(name);
        self
    }

    /// Names the `on_timer` function from now on, keeping state, timers
    /// and time.
    pub fn set_on_timer(&mut self, name: &str) {
        self.on_timer = Some(name.to_string());
    }

    /// The harness's watermark; [`NO_WATERMARK`] before the first.
    pub fn watermark(&self) -> i64 {
        self.watermark
    }

    /// The harness's processing time.
    pub fn processing_time(&self) -> i64 {
        self.store().now
    }

    /// Calls the process function `name` once with `records`, all of `key`,
    /// and returns its outputs; an output's index is its record's position
    /// in `records`.
    pub fn process(&mut self, name: &str, key: &[u8], records: &[HarnessRecord]) -> Result<Vec<HarnessOutput>, String> {
        let f = self.function(name, "process")?;
        let mut input = self.head(1);
        input.push(0);
        frame::put_bytes(&mut input, key);
        frame::put_u32(&mut input, records.len() as u32);
        for r in records {
            put_record(&mut input, key, r);
        }
        let inherit: Vec<Base> =
            records.iter().map(|r| Base { key: key.to_vec(), timestamp: r.timestamp, headers: r.headers.clone() }).collect();
        let out = self.call(f, &input, vec![key.to_vec()], false);
        resolve(&out, &inherit)
    }

    /// Calls the `process_broadcast` function `name` once with `records`
    /// of the broadcast input: it may write the broadcast states, which the
    /// keyed functions then read.
    pub fn process_broadcast(&mut self, name: &str, records: &[HarnessRecord]) -> Result<Vec<HarnessOutput>, String> {
        let f = self.function(name, "process_broadcast")?;
        let mut input = self.head(1);
        input.push(0);
        frame::put_bytes(&mut input, &[]);
        frame::put_u32(&mut input, records.len() as u32);
        for r in records {
            put_record(&mut input, &[], r);
        }
        let inherit: Vec<Base> =
            records.iter().map(|r| Base { key: Vec::new(), timestamp: r.timestamp, headers: r.headers.clone() }).collect();
        let out = self.call(f, &input, vec![Vec::new()], true);
        resolve(&out, &inherit)
    }

    /// Moves the watermark to `watermark` (it never goes back) and fires the
    /// event-time timers due, through the `on_timer` function; an output's
    /// index is its timer's position among those fired.
    pub fn advance_watermark(&mut self, watermark: i64) -> Result<Vec<HarnessOutput>, String> {
        self.watermark = self.watermark.max(watermark);
        self.fire(TimeDomain::EventTime, self.watermark)
    }

    /// Moves processing time to `ms` (it never goes back) and fires the
    /// processing-time timers due; state written before expires against it.
    pub fn set_processing_time(&mut self, ms: i64) -> Result<Vec<HarnessOutput>, String> {
        let now = {
            let s = self.store_mut();
            s.now = s.now.max(ms);
            s.now
        };
        self.fire(TimeDomain::ProcessingTime, now)
    }

    /// The registered timers, in domain, timestamp and key order.
    pub fn timers(&self) -> Vec<HarnessTimer> {
        self.store().timers()
    }

    /// The value state `state` of `key` as the platform holds it: None when
    /// unset or expired.
    pub fn value(&self, state: &str, key: &[u8]) -> Option<Vec<u8>> {
        self.store().value(state, key)
    }

    /// The list state `state` of `key`: its unexpired values in append order.
    pub fn list(&self, state: &str, key: &[u8]) -> Vec<Vec<u8>> {
        self.store().list(state, key)
    }

    /// The map state `state` of `key`: its unexpired entries in bytewise key
    /// order.
    pub fn map(&self, state: &str, key: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.store().map(state, key)
    }

    fn store(&self) -> &Store {
        self.store.as_ref().expect("the harness's state is lost: a call it made panicked")
    }

    fn store_mut(&mut self) -> &mut Store {
        self.store.as_mut().expect("the harness's state is lost: a call it made panicked")
    }

    /// The index of function `name`, which must be of `kind`.
    fn function(&self, name: &str, kind: &str) -> Result<u32, String> {
        let i = self.functions.iter().position(|f| f.name() == name).ok_or_else(|| format!("udf: no function {:?} is registered", name))?;
        let k = self.functions[i].kind();
        if k != kind {
            return Err(format!("udf: {:?} is a {} function, not {}", name, k, kind));
        }
        Ok(i as u32)
    }

    /// A grouped frame's head for `groups` groups at the harness's times.
    fn head(&self, groups: u32) -> Vec<u8> {
        let mut b = vec![OP_PROCESS];
        b.extend_from_slice(&self.watermark.to_le_bytes());
        b.extend_from_slice(&self.store().now.to_le_bytes());
        frame::put_u32(&mut b, groups);
        b
    }

    /// Runs function f over a grouped frame whose groups have the keys
    /// `groups`, with the store standing in for the imports during the call.
    fn call(&mut self, f: u32, input: &[u8], groups: Vec<Vec<u8>>, broadcasting: bool) -> Vec<u8> {
        let mut store = self.store.take().expect("the harness's state is lost: a call it made panicked");
        store.enter_call(groups, broadcasting);
        harness_state::activate(store);
        let out = self.caller.call(self.functions, self.states, f, input).to_vec();
        let mut store = harness_state::deactivate();
        store.leave_call();
        self.store = Some(store);
        out
    }

    /// Fires the domain's timers due at `up_to` through the on_timer
    /// function, again for timers it registers that are due too.
    fn fire(&mut self, domain: TimeDomain, up_to: i64) -> Result<Vec<HarnessOutput>, String> {
        let mut outs = Vec::new();
        let mut fired = 0;
        loop {
            let due = self.store().due(domain, up_to);
            if due.is_empty() {
                return Ok(outs);
            }
            let name = self
                .on_timer
                .as_deref()
                .ok_or_else(|| format!("udf: {} timers fired and the harness has no on_timer function", due.len()))?;
            let f = self.function(name, "on_timer")?;
            self.store_mut().remove_timers(domain, &due);
            let mut input = self.head(due.len() as u32);
            for (ts, key) in &due {
                input.push(GROUP_TIMER);
                frame::put_bytes(&mut input, key);
                input.extend_from_slice(&ts.to_le_bytes());
                input.push(domain as u8);
                frame::put_u32(&mut input, 0);
            }
            let inherit: Vec<Base> = due.iter().map(|(ts, key)| Base { key: key.clone(), timestamp: *ts, headers: Vec::new() }).collect();
            let keys = due.into_iter().map(|(_, key)| key).collect();
            let out = self.call(f, &input, keys, false);
            for mut o in resolve(&out, &inherit)? {
                o.index += fired;
                outs.push(o);
            }
            fired += inherit.len();
        }
    }
}

/// What an output inherits from its input.
struct Base {
    key: Vec<u8>,
    timestamp: i64,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
}

fn put_record(b: &mut Vec<u8>, key: &[u8], r: &HarnessRecord) {
    frame::put_bytes(b, key);
    frame::put_bytes(b, &r.value);
    b.extend_from_slice(&r.timestamp.to_le_bytes());
    frame::put_u32(b, r.headers.len() as u32);
    for (n, v) in &r.headers {
        frame::put_bytes(b, n);
        frame::put_bytes(b, v);
    }
}

/// Decodes an output frame, filling in what each entry inherits from its
/// input in `inputs`.
fn resolve(out: &[u8], inputs: &[Base]) -> Result<Vec<HarnessOutput>, String> {
    let mut r = Reader::new(out);
    let n = r.u32()?;
    let mut outs = Vec::new();
    for _ in 0..n {
        let tag = r.u8()?;
        let index = r.u32()?;
        if tag == frame::TAG_ERROR {
            let msg = String::from_utf8_lossy(r.bytes()?).into_owned();
            if index == frame::ALL_RECORDS {
                return Err(format!("udf: the whole batch failed: {}", msg));
            }
            check_index(index, inputs.len())?;
            outs.push(HarnessOutput { index: index as usize, error: Some(msg), ..Default::default() });
            continue;
        }
        let side = match tag {
            frame::TAG_RECORD => None,
            TAG_OUTPUT => Some(String::from_utf8_lossy(r.bytes()?).into_owned()),
            _ => return Err(format!("udf: output entry {} has tag {}, which keyed functions do not emit", outs.len(), tag)),
        };
        check_index(index, inputs.len())?;
        let base = &inputs[index as usize];
        let flags = r.u8()?;
        let key = if flags & HAS_KEY != 0 { r.bytes()?.to_vec() } else { base.key.clone() };
        let value = r.bytes()?.to_vec();
        let timestamp = if flags & HAS_TIMESTAMP != 0 { r.i64()? } else { base.timestamp };
        let headers = if flags & HAS_HEADERS != 0 {
            let mut hs = Vec::new();
            for _ in 0..r.u32()? {
                hs.push((r.bytes()?.to_vec(), r.bytes()?.to_vec()));
            }
            hs
        } else {
            base.headers.clone()
        };
        outs.push(HarnessOutput { index: index as usize, key, value, timestamp, headers, side, error: None });
    }
    r.finish(n, "entries")?;
    Ok(outs)
}

fn check_index(index: u32, inputs: usize) -> Result<(), String> {
    if index as usize >= inputs {
        return Err(format!("udf: output entry for input {} of {}", index, inputs));
    }
    Ok(())
}

#[path = "harness_script.rs"]
mod script;

#[cfg(test)]
#[path = "harness_tests.rs"]
mod tests;
