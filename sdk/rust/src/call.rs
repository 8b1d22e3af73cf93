use std::borrow::Cow;

use crate::frame::{self, Reader, ALL_RECORDS, TAG_ERROR, TAG_KEEP, TAG_KEY, TAG_TIMESTAMP};
use crate::join::{self, CoGroupFn, JoinFn};
use crate::keyed::{Keyed, MigrateFn, OnTimerFn, ProcessBroadcastFn, ProcessFn, Runner};
use crate::lookup::{self, AsyncRequestFn, AsyncResultFn};
use crate::state::StateDecl;
use crate::window::{self, AggregateRunner, ReduceFn, SessionGapFn, WatermarkFn, WindowProcessFn};
use crate::window_state::WindowStateFn;
use crate::{Output, Record, Result};

/// A map function: exactly one output per input record.
pub type MapFn = for<'a> fn(Record<'a>) -> Result<Output<'a>>;
/// A filter: the input record is kept, unchanged, when it returns true.
pub type FilterFn = for<'a> fn(Record<'a>) -> Result<bool>;
/// A flat map function: emits zero or more outputs per input record.
pub type FlatMapFn = for<'a, 'e> fn(Record<'a>, &mut Emitter<'e>) -> Result<()>;
/// A key selector: the record's new key.
pub type KeyFn = for<'a> fn(Record<'a>) -> Result<Cow<'a, [u8]>>;
/// A timestamp assigner: the record's event time, ms since the epoch.
pub type TimestampFn = for<'a> fn(Record<'a>) -> Result<i64>;

/// A function of the module: its name and kind and the Rust function. The
/// position of a function in the [`module!`](crate::module) list is its index
/// in the self-description.
#[derive(Clone, Copy)]
pub enum Function {
    /// A `map` function.
    Map(&'static str, MapFn),
    /// A `filter` function.
    Filter(&'static str, FilterFn),
    /// A `flat_map` function.
    FlatMap(&'static str, FlatMapFn),
    /// A `key` function.
    Key(&'static str, KeyFn),
    /// A `timestamp` function.
    Timestamp(&'static str, TimestampFn),
    /// A keyed `process` function, and how the SDK runs it.
    Process(&'static str, ProcessFn, Runner<ProcessFn>),
    /// An `on_timer` function, and how the SDK runs it.
    OnTimer(&'static str, OnTimerFn, Runner<OnTimerFn>),
    /// A `process_broadcast` function, and how the SDK runs it.
    ProcessBroadcast(&'static str, ProcessBroadcastFn, Runner<ProcessBroadcastFn>),
    /// A `migrate_state` function, and how the SDK runs it.
    MigrateState(&'static str, MigrateFn, Runner<MigrateFn>),
    /// An `aggregate`: how the SDK runs the [`Aggregate`](crate::Aggregate).
    Aggregate(&'static str, AggregateRunner),
    /// A `reduce` function.
    Reduce(&'static str, ReduceFn),
    /// A `window_process` function.
    WindowProcess(&'static str, WindowProcessFn),
    /// A `window_process` function with per-window state, and how the SDK
    /// runs it.
    WindowProcessWithState(&'static str, WindowStateFn, Runner<WindowStateFn>),
    /// A `session_gap` function.
    SessionGap(&'static str, SessionGapFn),
    /// A punctuated `watermark` function.
    Watermark(&'static str, WatermarkFn),
    /// A `join` function.
    Join(&'static str, JoinFn),
    /// A `co_group` function.
    CoGroup(&'static str, CoGroupFn),
    /// A custom window `trigger`: how the SDK runs the
    /// [`Trigger`](crate::Trigger).
    Trigger(&'static str, AggregateRunner),
    /// A `lookup_request` function: the first half of an async lookup.
    AsyncRequest(&'static str, AsyncRequestFn),
    /// A `lookup_result` function: the second half of an async lookup.
    AsyncResult(&'static str, AsyncResultFn),
}

impl Function {
    /// The name a job uses for the function.
    pub fn name(&self) -> &'static str {
        match *self {
            Function::Map(n, _)
            | Function::Filter(n, _)
            | Function::FlatMap(n, _)
            | Function::Key(n, _)
            | Function::Timestamp(n, _)
            | Function::Process(n, ..)
            | Function::OnTimer(n, ..)
            | Function::ProcessBroadcast(n, ..)
            | Function::MigrateState(n, ..)
            | Function::Aggregate(n, _)
            | Function::Reduce(n, _)
            | Function::WindowProcess(n, _)
            | Function::WindowProcessWithState(n, ..)
            | Function::SessionGap(n, _)
            | Function::Watermark(n, _)
            | Function::Join(n, _)
            | Function::CoGroup(n, _)
            | Function::AsyncRequest(n, _)
            | Function::AsyncResult(n, _)
            | Function::Trigger(n, _) => n,
        }
    }

    /// The function's kind, as the self-description names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Function::Map(..) => "map",
            Function::Filter(..) => "filter",
            Function::FlatMap(..) => "flat_map",
            Function::Key(..) => "key",
            Function::Timestamp(..) => "timestamp",
            Function::Process(..) => "process",
            Function::OnTimer(..) => "on_timer",
            Function::ProcessBroadcast(..) => "process_broadcast",
            Function::MigrateState(..) => "migrate_state",
            Function::Aggregate(..) => "aggregate",
            Function::Reduce(..) => "reduce",
            Function::WindowProcess(..) | Function::WindowProcessWithState(..) => "window_process",
            Function::SessionGap(..) => "session_gap",
            Function::Watermark(..) => "watermark",
            Function::Join(..) => "join",
            Function::CoGroup(..) => "co_group",
            Function::AsyncRequest(..) => "lookup_request",
            Function::Trigger(..) => "trigger",
            Function::AsyncResult(..) => "lookup_result",
        }
    }
}

/// Receives the records a flat map, window process, join or coGroup
/// function emits for one input or group. Each output is encoded at once,
/// so its bytes may be reused right after `emit`.
pub struct Emitter<'e> {
    out: &'e mut Vec<u8>,
    input: Record<'e>,
    index: u32,
    count: u32,
    /// The timestamp of outputs that set none, when it is not the input's:
    /// an interval join's pair's.
    pub(crate) stamp: Option<i64>,
}

impl<'e> Emitter<'e> {
    pub(crate) fn new(out: &'e mut Vec<u8>, input: Record<'e>, index: u32) -> Self {
        Emitter { out, input, index, count: 0, stamp: None }
    }

    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// Emits one record.
    #[inline]
    pub fn emit(&mut self, mut o: Output) {
        if o.timestamp.is_none() {
            o.timestamp = self.stamp;
        }
        frame::put_record(self.out, self.index, &o, &self.input);
        self.count += 1;
    }

    /// Emits one record on the side output `tag` (Flink's
    /// `ctx.output(tag, value)`), from a window process, join or co_group
    /// function; it inherits what `emit`'s records inherit. A tag the
    /// operator does not declare in its `side_outputs` fails the group.
    pub fn output(&mut self, tag: &str, mut o: Output) {
        if o.timestamp.is_none() {
            o.timestamp = self.stamp;
        }
        frame::put_output(self.out, self.index, tag, &o, &self.input);
        self.count += 1;
    }
}

/// Runs functions over input frames into a reused output buffer.
pub(crate) struct Caller {
    pub(crate) out: Vec<u8>,
    keyed: Keyed,
}

impl Caller {
    pub(crate) const fn new() -> Self {
        Caller { out: Vec::new(), keyed: Keyed::new() }
    }

    /// Runs function `f` over `input` and returns the output frame.
    pub(crate) fn call(&mut self, functions: &[Function], states: &'static [&'static StateDecl], f: u32, input: &[u8]) -> &[u8] {
        self.out.clear();
        frame::put_u32(&mut self.out, 0);
        let result = match functions.get(f as usize) {
            Some(Function::Process(_, p, run)) => (run.0)(&mut self.keyed, &mut self.out, states, *p, input),
            Some(Function::OnTimer(_, t, run)) => (run.0)(&mut self.keyed, &mut self.out, states, *t, input),
            Some(Function::ProcessBroadcast(_, p, run)) => (run.0)(&mut self.keyed, &mut self.out, states, *p, input),
            Some(Function::MigrateState(_, m, run)) => (run.0)(&mut self.keyed, &mut self.out, states, *m, input),
            Some(Function::Aggregate(_, run)) | Some(Function::Trigger(_, run)) => run(&mut self.out, input),
            Some(Function::Reduce(_, f)) => window::reduce(*f, &mut self.out, input),
            Some(Function::WindowProcess(_, f)) => window::window_process(*f, &mut self.out, input),
            Some(Function::WindowProcessWithState(_, f, run)) => (run.0)(&mut self.keyed, &mut self.out, states, *f, input),
            Some(Function::SessionGap(_, f)) => window::session_gap(*f, &mut self.out, input),
            Some(Function::Watermark(_, f)) => window::watermark(*f, &mut self.out, input),
            Some(Function::Join(_, f)) => join::join(*f, &mut self.out, input),
            Some(Function::CoGroup(_, f)) => join::co_group(*f, &mut self.out, input),
            Some(Function::AsyncRequest(_, f)) => lookup::request(*f, &mut self.out, input),
            Some(Function::AsyncResult(_, f)) => lookup::result(*f, &mut self.out, input),
            Some(func) => self.each(*func, input),
            None => Err(format!("udf: no function with index {}; the module has {}", f, functions.len())),
        };
        match result {
            Ok(count) => self.out[..4].copy_from_slice(&count.to_le_bytes()),
            Err(msg) => self.fail(&msg),
        }
        &self.out
    }

    /// Makes the output a single error that fails the whole frame.
    pub(crate) fn fail(&mut self, msg: &str) {
        self.out.clear();
        frame::put_u32(&mut self.out, 1);
        frame::put_entry(&mut self.out, TAG_ERROR, ALL_RECORDS);
        frame::put_bytes(&mut self.out, msg.as_bytes());
    }

    /// Runs func over every record and returns the number of entries.
    fn each(&mut self, func: Function, input: &[u8]) -> std::result::Result<u32, String> {
        let mut r = Reader::new(input);
        let records = r.u32()?;
        let mut count = 0u32;
        for index in 0..records {
            let rec = r.record()?;
            let mark = self.out.len();
            let out = &mut self.out;
            let written = match func {
                Function::Map(_, f) => f(rec).map(|o| frame::put_record(out, index, &o, &rec)).map(|_| 1),
                Function::Filter(_, f) => f(rec).map(|keep| {
                    if keep {
                        frame::put_entry(out, TAG_KEEP, index);
                    }
                    keep as u32
                }),
                Function::FlatMap(_, f) => {
                    let mut e = Emitter::new(out, rec, index);
                    f(rec, &mut e).map(|_| e.count)
                }
                Function::Key(_, f) => f(rec).map(|key| {
                    frame::put_entry(out, TAG_KEY, index);
                    frame::put_bytes(out, &key);
                    1
                }),
                Function::Timestamp(_, f) => f(rec).map(|ts| {
                    frame::put_entry(out, TAG_TIMESTAMP, index);
                    out.extend_from_slice(&ts.to_le_bytes());
                    1
                }),
                _ => unreachable!("grouped kinds take grouped frames"),
            };
            match written {
                Ok(n) => count += n,
                Err(e) => {
                    self.out.truncate(mark);
                    frame::put_entry(&mut self.out, TAG_ERROR, index);
                    frame::put_bytes(&mut self.out, e.message().as_bytes());
                    count += 1;
                }
            }
        }
        r.finish(records, "records")?;
        Ok(count)
    }
}

/// The self-description of a list of functions and states, as JSON.
pub(crate) fn describe(functions: &[Function], states: &[&StateDecl], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(br#"{"abi":1,"functions":["#);
    for (i, f) in functions.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"name":"#);
        json_string(out, f.name());
        out.extend_from_slice(br#","kind":""#);
        out.extend_from_slice(f.kind().as_bytes());
        out.extend_from_slice(br#""}"#);
    }
    out.push(b']');
    if !states.is_empty() {
        out.extend_from_slice(br#","states":["#);
        for (i, s) in states.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"name":"#);
            json_string(out, s.name);
            out.extend_from_slice(br#","kind":""#);
            out.extend_from_slice(s.kind.as_bytes());
            out.push(b'"');
            if let Some(ttl) = s.ttl {
                out.extend_from_slice(br#","ttl":"#);
                json_string(out, ttl);
            }
            if s.broadcast {
                out.extend_from_slice(br#","broadcast":true"#);
            }
            if s.retired {
                out.extend_from_slice(br#","retired":true"#);
            }
            out.push(b'}');
        }
        out.push(b']');
    }
    out.push(b'}');
}

/// Appends s as a JSON string.
fn json_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &c in s.as_bytes() {
        match c {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', c]),
            0..=0x1f => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
            _ => out.push(c),
        }
    }
    out.push(b'"');
}
