//! Keyed process functions: the context they see and the decoding of
//! grouped frames for them (docs/ABI.md, Keyed process functions).

use crate::frame::{self, Group, Reader, GROUP_TIMER, GROUP_TWO_SIDED, TAG_ERROR};
use crate::state::{host, StateDecl};
use crate::window_state::{self, WindowStateFn};
use crate::{Header, Output, Record, Result};

/// A keyed process function: the records of one key of a batch, in arrival
/// order, with the key's state, timers and output in the context.
pub type ProcessFn = for<'c, 'k, 'r, 'a> fn(&mut Context<'c>, &'k [u8], &'r [Record<'a>]) -> Result<()>;
/// The broadcast side of a `broadcast_process` operator (Flink's
/// `processBroadcastElement`): a batch of the broadcast input's records, in
/// arrival order. It reads and writes [`BroadcastState`](crate::BroadcastState)s;
/// there is no key (`emit_value` emits with an empty key), no keyed state
/// and no timers: those calls trap.
pub type ProcessBroadcastFn = for<'c, 'r, 'a> fn(&mut Context<'c>, &'r [Record<'a>]) -> Result<()>;
/// The function that handles a process function's timers: one timer of one
/// key at a time.
pub type OnTimerFn = for<'c, 'k> fn(&mut Context<'c>, &'k [u8], Timer) -> Result<()>;
/// A `migrate_state` function: after a restore, once for each key that
/// holds a retired state, it reads the retired states and writes the new
/// ones (docs/ABI.md, State migration). It emits nothing; an error fails
/// the restore.
pub type MigrateFn = for<'c, 'k> fn(&mut Context<'c>, &'k [u8]) -> Result<()>;

/// The clock of a timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeDomain {
    /// Event time: the timer fires when the watermark reaches it.
    EventTime = 0,
    /// Processing time: the timer fires when the platform's clock does.
    ProcessingTime = 1,
}

/// A timer that fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    /// When it was set to fire, milliseconds since the epoch.
    pub timestamp: i64,
    /// Its clock.
    pub domain: TimeDomain,
}

/// The watermark before the first one: no event time yet.
pub const NO_WATERMARK: i64 = i64::MIN;

/// What a keyed function sees of the platform during its call for one key
/// (and window): the key, time, state (through the state handles), timers
/// and output.
pub struct Context<'c> {
    pub(crate) out: &'c mut Vec<u8>,
    pub(crate) scratch: &'c mut Vec<u8>,
    pub(crate) states: &'static [&'static StateDecl],
    pub(crate) key: &'c [u8],
    pub(crate) watermark: i64,
    pub(crate) processing_time: i64,
    /// The output index of what is emitted, and the record it inherits
    /// from: the group's last record, the timer, or the window's key and
    /// end - 1.
    pub(crate) index: u32,
    pub(crate) base: Record<'c>,
    pub(crate) count: u32,
    /// Set for a window process function, which has no timers.
    pub(crate) window: bool,
}

impl<'c> Context<'c> {
    /// The current key.
    pub fn key(&self) -> &[u8] {
        self.key
    }

    /// The operator's current event time; [`NO_WATERMARK`] before the first
    /// watermark.
    pub fn watermark(&self) -> i64 {
        self.watermark
    }

    /// The platform's clock at the call, milliseconds since the epoch.
    pub fn processing_time(&self) -> i64 {
        self.processing_time
    }

    /// Emits an output; the fields it does not set are the last record's of
    /// the group (for on_timer: the timer's key and timestamp, no headers;
    /// for a window: its key and end - 1, no headers).
    pub fn emit(&mut self, o: Output) {
        frame::put_record(self.out, self.index, &o, &self.base);
        self.count += 1;
    }

    /// Emits an output on the side output `tag` (Flink's
    /// `ctx.output(tag, value)`); it inherits as `emit`'s outputs do, so it
    /// carries the event time of the record (or timer) that caused it. A
    /// tag the operator does not declare in its `side_outputs` fails the
    /// group under the job's `on_udf_error`.
    pub fn output(&mut self, tag: &str, o: Output) {
        frame::put_output(self.out, self.index, tag, &o, &self.base);
        self.count += 1;
    }

    /// Emits a value on the side output `tag` with the current key, the
    /// timestamp `emit_value` gives and no headers.
    pub fn output_value(&mut self, tag: &str, value: &[u8]) {
        let (key, ts) = (self.key, self.base.timestamp);
        self.output(tag, Output::new(value).key(key).timestamp(ts).headers(Vec::<Header>::new()));
    }

    /// Emits a record as it is: its key, value, timestamp and headers.
    pub fn emit_record(&mut self, r: &Record) {
        self.emit(Output::new(r.value).key(r.key).timestamp(r.timestamp).headers(r.headers.iter().collect()));
    }

    /// Emits a value with the current key, the last record's (or the
    /// timer's, or the window's end - 1) timestamp and no headers.
    pub fn emit_value(&mut self, value: &[u8]) {
        let (key, ts) = (self.key, self.base.timestamp);
        self.emit(Output::new(value).key(key).timestamp(ts).headers(Vec::<Header>::new()));
    }

    /// Registers a timer for the current key; registering the same timer
    /// twice registers it once. A window process function has no timers:
    /// it panics.
    pub fn register_timer(&mut self, domain: TimeDomain, timestamp: i64) {
        self.timers();
        host::timer_register(domain as u32, timestamp);
    }

    /// Deletes the current key's timer, if registered. A window process
    /// function has no timers: it panics.
    pub fn delete_timer(&mut self, domain: TimeDomain, timestamp: i64) {
        self.timers();
        host::timer_delete(domain as u32, timestamp);
    }

    /// Refuses a timer call from a window process function before the host
    /// traps it, with a message that says why.
    fn timers(&self) {
        if self.window {
            panic!("window process functions have no timers (as Flink's ProcessWindowFunction): a window fires when the watermark passes its end");
        }
    }

    /// The index of a declared state; a state the module does not list in
    /// `module!` is a bug, and panics.
    pub(crate) fn state(&self, decl: &StateDecl) -> u32 {
        match self.states.iter().position(|d| d.name == decl.name) {
            Some(i) => i as u32,
            None => panic!("state {:?} is not listed in module!", decl.name),
        }
    }
}

/// How the SDK runs a keyed function of type F. [`module!`](crate::module)
/// puts it next to each keyed function, so that a module without keyed
/// functions links neither the runner nor the state and timer imports.
#[derive(Clone, Copy)]
pub struct Runner<F>(pub(crate) RunFn<F>);

type RunFn<F> = fn(&mut Keyed, &mut Vec<u8>, &'static [&'static StateDecl], F, &[u8]) -> std::result::Result<u32, String>;

#[doc(hidden)]
pub const PROCESS: Runner<ProcessFn> = Runner(Keyed::process);
#[doc(hidden)]
pub const ON_TIMER: Runner<OnTimerFn> = Runner(Keyed::on_timer);
#[doc(hidden)]
pub const PROCESS_BROADCAST: Runner<ProcessBroadcastFn> = Runner(Keyed::process_broadcast);
#[doc(hidden)]
pub const MIGRATE_STATE: Runner<MigrateFn> = Runner(Keyed::migrate);
#[doc(hidden)]
pub const WINDOW_PROCESS_WITH_STATE: Runner<WindowStateFn> = Runner(window_state::window_process);

/// Buffers reused by every keyed call.
pub struct Keyed {
    pub(crate) scratch: Vec<u8>,
}

impl Keyed {
    pub(crate) const fn new() -> Self {
        Keyed { scratch: Vec::new() }
    }

    /// Runs a process function over a grouped frame; returns the number of
    /// entries written to out.
    pub(crate) fn process(
        &mut self,
        out: &mut Vec<u8>,
        states: &'static [&'static StateDecl],
        f: ProcessFn,
        input: &[u8],
    ) -> std::result::Result<u32, String> {
        self.groups(out, states, input, f)
    }

    /// Runs a process_broadcast function over its frame of one keyless
    /// group, as a process function.
    pub(crate) fn process_broadcast(
        &mut self,
        out: &mut Vec<u8>,
        states: &'static [&'static StateDecl],
        f: ProcessBroadcastFn,
        input: &[u8],
    ) -> std::result::Result<u32, String> {
        self.groups(out, states, input, |ctx: &mut Context, _: &[u8], recs: &[Record]| f(ctx, recs))
    }

    /// Calls f with each group of a grouped frame of records and its key.
    fn groups<F>(&mut self, out: &mut Vec<u8>, states: &'static [&'static StateDecl], input: &[u8], f: F) -> std::result::Result<u32, String>
    where
        F: for<'c, 'k, 'r, 'a> Fn(&mut Context<'c>, &'k [u8], &'r [Record<'a>]) -> Result<()>,
    {
        let mut r = Reader::new(input);
        let (watermark, processing_time, groups) = head(&mut r)?;
        let (mut index, mut count) = (0u32, 0u32);
        let mut recs = Vec::new();
        for g in 0..groups {
            let group = r.group()?;
            recs.clear();
            for _ in 0..r.u32()? {
                recs.push(r.record()?);
            }
            skip_right(&mut r, group.flags)?;
            let base = match recs.last() {
                Some(&last) => last,
                None => continue,
            };
            let first = index;
            index += recs.len() as u32;
            host::enter(g);
            let mark = out.len();
            let mut ctx = Context {
                out: &mut *out,
                scratch: &mut self.scratch,
                states,
                key: group.key,
                watermark,
                processing_time,
                index: index - 1,
                base,
                count: 0,
                window: false,
            };
            match f(&mut ctx, group.key, &recs) {
                Ok(()) => count += ctx.count,
                Err(e) => {
                    out.truncate(mark);
                    for i in first..index {
                        error_entry(out, i, e.message());
                        count += 1;
                    }
                }
            }
        }
        r.finish(groups, "groups")?;
        Ok(count)
    }

    /// Runs an on_timer function over a grouped frame of timers.
    pub(crate) fn on_timer(
        &mut self,
        out: &mut Vec<u8>,
        states: &'static [&'static StateDecl],
        f: OnTimerFn,
        input: &[u8],
    ) -> std::result::Result<u32, String> {
        self.record_less_groups(out, states, input, true, |ctx, group| {
            let domain = if group.domain == 1 { TimeDomain::ProcessingTime } else { TimeDomain::EventTime };
            f(ctx, group.key, Timer { timestamp: group.timer, domain })
        })
    }

    /// Runs a migrate_state function over a grouped frame of keys without
    /// records: an error answers its group.
    pub(crate) fn migrate(
        &mut self,
        out: &mut Vec<u8>,
        states: &'static [&'static StateDecl],
        f: MigrateFn,
        input: &[u8],
    ) -> std::result::Result<u32, String> {
        self.record_less_groups(out, states, input, false, |ctx, group| f(ctx, group.key))
    }

    /// Calls f once per group of a grouped frame whose groups answer by
    /// group (on_timer: each a timer, which timers requires; migrate_state:
    /// each a key), with the group's key entered; an error replaces what f
    /// emitted for its group.
    fn record_less_groups<F>(
        &mut self,
        out: &mut Vec<u8>,
        states: &'static [&'static StateDecl],
        input: &[u8],
        timers: bool,
        mut f: F,
    ) -> std::result::Result<u32, String>
    where
        F: for<'c, 'g> FnMut(&mut Context<'c>, &Group<'g>) -> Result<()>,
    {
        let mut r = Reader::new(input);
        let (watermark, processing_time, groups) = head(&mut r)?;
        let mut count = 0u32;
        for g in 0..groups {
            let group = r.group()?;
            if timers && group.flags & GROUP_TIMER == 0 {
                return Err(format!("udf: on_timer group {} carries no timer", g));
            }
            for _ in 0..r.u32()? {
                r.record()?;
            }
            skip_right(&mut r, group.flags)?;
            host::enter(g);
            let mark = out.len();
            let base = Record { key: group.key, value: &[], timestamp: group.timer, headers: Default::default() };
            let mut ctx = Context {
                out: &mut *out,
                scratch: &mut self.scratch,
                states,
                key: group.key,
                watermark,
                processing_time,
                index: g,
                base,
                count: 0,
                window: false,
            };
            match f(&mut ctx, &group) {
                Ok(()) => count += ctx.count,
                Err(e) => {
                    out.truncate(mark);
                    error_entry(out, g, e.message());
                    count += 1;
                }
            }
        }
        r.finish(groups, "groups")?;
        Ok(count)
    }
}

/// Reads a grouped frame's head: the watermark, the processing time and the
/// group count.
pub(crate) fn head(r: &mut Reader) -> std::result::Result<(i64, i64, u32), String> {
    r.u8()?;
    Ok((r.i64()?, r.i64()?, r.u32()?))
}

/// Skips the right side of a two-sided group.
fn skip_right(r: &mut Reader, flags: u8) -> std::result::Result<(), String> {
    if flags & GROUP_TWO_SIDED != 0 {
        for _ in 0..r.u32()? {
            r.record()?;
        }
    }
    Ok(())
}

fn error_entry(out: &mut Vec<u8>, index: u32, msg: &str) {
    frame::put_entry(out, TAG_ERROR, index);
    frame::put_bytes(out, msg.as_bytes());
}
