//! Window and watermark functions: the decoding of their frames and the
//! encoding of their answers (docs/ABI.md, Window functions, Watermark
//! functions).

use std::borrow::Cow;

use crate::call::Emitter;
use crate::frame::{self, Reader, TAG_ERROR, TAG_TIMESTAMP};
use crate::{Output, Record, Result};

/// A window's bounds in milliseconds since the epoch: it holds the records
/// with `start <= timestamp < end`; its results are stamped `end - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The first millisecond in the window.
    pub start: i64,
    /// The first millisecond after the window.
    pub end: i64,
}

/// An incremental window aggregate, as Flink's `AggregateFunction`: the
/// platform stores each window's accumulator between calls as the bytes
/// `encode` writes, and gives them back. The accumulator of a window may be
/// built in pieces and merged, so the result must not depend on how.
pub trait Aggregate {
    /// The accumulator.
    type Acc;
    /// A new, empty accumulator.
    fn create() -> Self::Acc;
    /// Folds a record into the accumulator.
    fn add(acc: &mut Self::Acc, r: Record) -> Result<()>;
    /// Folds `other`, later in time, into `acc`.
    fn merge(acc: &mut Self::Acc, other: Self::Acc) -> Result<()>;
    /// The window's result value.
    fn result(key: &[u8], w: Window, acc: &Self::Acc) -> Result<Vec<u8>>;
    /// Appends the accumulator's bytes to out.
    fn encode(acc: &Self::Acc, out: &mut Vec<u8>);
    /// Reads an accumulator from the bytes encode wrote.
    fn decode(b: &[u8]) -> Result<Self::Acc>;
}

/// A window reduce function: folds a value into the accumulated value, which
/// starts as the first record's value and is the window's result. It must be
/// associative.
pub type ReduceFn = for<'a> fn(&'a [u8], &'a [u8]) -> Result<Cow<'a, [u8]>>;
/// A window process function: called once per window that fires, with the
/// window's key, bounds and records; what it emits inherits the window's key
/// and the timestamp `end - 1`, and no headers.
pub type WindowProcessFn = for<'k, 'r, 'a, 'e> fn(&'k [u8], Window, &'r [Record<'a>], &mut Emitter<'e>) -> Result<()>;
/// A dynamic session gap: the session of a record lasts until its timestamp
/// plus the returned gap in milliseconds, which must be positive.
pub type SessionGapFn = for<'a> fn(Record<'a>) -> Result<i64>;
/// A punctuated watermark function: for each record, in order, it may return
/// a watermark that the platform emits right after the record.
pub type WatermarkFn = for<'a> fn(Record<'a>) -> Result<Option<i64>>;

const OP_ADD: u8 = 1;
const OP_MERGE: u8 = 2;
const OP_RESULT: u8 = 3;
const TAG_ACCUMULATOR: u8 = 6;
const TAG_WATERMARK: u8 = 7;

/// A grouped frame being read: its op and the group loop's state.
struct Groups<'a> {
    r: Reader<'a>,
    op: u8,
    count: u32,
}

impl<'a> Groups<'a> {
    fn new(input: &'a [u8]) -> std::result::Result<Self, String> {
        let mut r = Reader::new(input);
        let op = r.u8()?;
        r.i64()?;
        r.i64()?;
        let count = r.u32()?;
        Ok(Groups { r, op, count })
    }
}

/// Runs one answer per group: each fills out for group g and returns the
/// entries it wrote, or an error that replaces them with an error entry.
pub(crate) fn each_group<'a>(
    input: &'a [u8],
    out: &mut Vec<u8>,
    mut one: impl FnMut(u8, u32, &frame::Group<'a>, &mut Reader<'a>, &mut Vec<u8>) -> std::result::Result<Result<u32>, String>,
) -> std::result::Result<u32, String> {
    let mut gs = Groups::new(input)?;
    let mut entries = 0;
    for g in 0..gs.count {
        let group = gs.r.group()?;
        let mark = out.len();
        match one(gs.op, g, &group, &mut gs.r, out)? {
            Ok(n) => entries += n,
            Err(e) => {
                out.truncate(mark);
                frame::put_entry(out, TAG_ERROR, g);
                frame::put_bytes(out, e.message().as_bytes());
                entries += 1;
            }
        }
    }
    gs.r.finish(gs.count, "groups")?;
    Ok(entries)
}

/// Reads a side of a group: its count and records, into recs.
pub(crate) fn read_side<'a>(r: &mut Reader<'a>, recs: &mut Vec<Record<'a>>) -> std::result::Result<(), String> {
    recs.clear();
    for _ in 0..r.u32()? {
        recs.push(r.record()?);
    }
    Ok(())
}

/// Reads a group's records and skips its right side, if any.
pub(crate) fn read_group<'a>(r: &mut Reader<'a>, flags: u8, recs: &mut Vec<Record<'a>>) -> std::result::Result<(), String> {
    read_side(r, recs)?;
    if flags & frame::GROUP_TWO_SIDED != 0 {
        let mut right = Vec::new();
        read_side(r, &mut right)?;
    }
    Ok(())
}

fn put_acc(out: &mut Vec<u8>, g: u32, acc: &[u8]) {
    frame::put_entry(out, TAG_ACCUMULATOR, g);
    frame::put_bytes(out, acc);
}

/// How the SDK runs an aggregate: [`module!`](crate::module) makes one for
/// each aggregate type.
#[doc(hidden)]
pub type AggregateRunner = fn(&mut Vec<u8>, &[u8]) -> std::result::Result<u32, String>;

/// Runs an aggregate of type A over a grouped frame.
pub fn aggregate<A: Aggregate>(out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut buf = Vec::new();
    let mut recs = Vec::new();
    each_group(input, out, |op, g, group, r, out| {
        read_group(r, group.flags, &mut recs)?;
        let answer = match op {
            OP_ADD => (|| -> Result<u32> {
                let mut acc = match group.acc {
                    Some(b) => A::decode(b)?,
                    None => A::create(),
                };
                for rec in &recs {
                    A::add(&mut acc, *rec)?;
                }
                buf.clear();
                A::encode(&acc, &mut buf);
                put_acc(out, g, &buf);
                Ok(1)
            })(),
            OP_MERGE => (|| -> Result<u32> {
                let mut acc = A::decode(group.acc.unwrap_or_default())?;
                A::merge(&mut acc, A::decode(group.acc2.unwrap_or_default())?)?;
                buf.clear();
                A::encode(&acc, &mut buf);
                put_acc(out, g, &buf);
                Ok(1)
            })(),
            OP_RESULT => (|| -> Result<u32> {
                let acc = A::decode(group.acc.unwrap_or_default())?;
                let w = group.window.unwrap_or(Window { start: 0, end: 0 });
                let value = A::result(group.key, w, &acc)?;
                let base = window_base(group.key, w);
                frame::put_record(out, g, &Output::new(value), &base);
                Ok(1)
            })(),
            op => Err(format!("udf: aggregate called with op {}", op).into()),
        };
        Ok(answer)
    })
}

/// Runs a reduce function over a grouped frame.
pub(crate) fn reduce(f: ReduceFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut recs = Vec::new();
    each_group(input, out, |op, g, group, r, out| {
        read_group(r, group.flags, &mut recs)?;
        let answer = match op {
            OP_ADD => {
                let mut acc: Option<Cow<[u8]>> = group.acc.map(Cow::Borrowed);
                let mut failed = None;
                for rec in &recs {
                    acc = Some(match acc.take() {
                        None => Cow::Borrowed(rec.value),
                        Some(a) => match f(&a, rec.value) {
                            Ok(v) => Cow::Owned(v.into_owned()),
                            Err(e) => {
                                failed = Some(e);
                                break;
                            }
                        },
                    });
                }
                match (failed, acc) {
                    (Some(e), _) => Err(e),
                    (None, None) => Err("udf: reduce called without a value".into()),
                    (None, Some(a)) => {
                        put_acc(out, g, &a);
                        Ok(1)
                    }
                }
            }
            OP_MERGE => f(group.acc.unwrap_or_default(), group.acc2.unwrap_or_default()).map(|a| {
                put_acc(out, g, &a);
                1
            }),
            op => Err(format!("udf: reduce called with op {}", op).into()),
        };
        Ok(answer)
    })
}

/// Runs a window process function over a grouped frame.
pub(crate) fn window_process(f: WindowProcessFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut recs = Vec::new();
    each_group(input, out, |_, g, group, r, out| {
        read_group(r, group.flags, &mut recs)?;
        let w = group.window.unwrap_or(Window { start: 0, end: 0 });
        let mut e = Emitter::new(out, window_base(group.key, w), g);
        let answer = f(group.key, w, &recs, &mut e).map(|_| e.count());
        Ok(answer)
    })
}

/// Runs a session gap function over a grouped frame: one timestamp entry
/// (or error) per record, named by its position among the frame's records.
pub(crate) fn session_gap(f: SessionGapFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut gs = Groups::new(input)?;
    let (mut index, mut entries) = (0u32, 0u32);
    let mut recs = Vec::new();
    for _ in 0..gs.count {
        let group = gs.r.group()?;
        read_group(&mut gs.r, group.flags, &mut recs)?;
        for rec in &recs {
            match f(*rec) {
                Ok(gap) => {
                    frame::put_entry(out, TAG_TIMESTAMP, index);
                    out.extend_from_slice(&gap.to_le_bytes());
                }
                Err(e) => {
                    frame::put_entry(out, TAG_ERROR, index);
                    frame::put_bytes(out, e.message().as_bytes());
                }
            }
            index += 1;
            entries += 1;
        }
    }
    gs.r.finish(gs.count, "groups")?;
    Ok(entries)
}

/// Runs a watermark function over an input frame of records.
pub(crate) fn watermark(f: WatermarkFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut r = Reader::new(input);
    let records = r.u32()?;
    let mut entries = 0;
    for index in 0..records {
        match f(r.record()?) {
            Ok(None) => continue,
            Ok(Some(wm)) => {
                frame::put_entry(out, TAG_WATERMARK, index);
                out.extend_from_slice(&wm.to_le_bytes());
            }
            Err(e) => {
                frame::put_entry(out, TAG_ERROR, index);
                frame::put_bytes(out, e.message().as_bytes());
            }
        }
        entries += 1;
    }
    r.finish(records, "records")?;
    Ok(entries)
}

/// The record a window function's outputs inherit from: the window's key,
/// the timestamp end - 1, no headers.
pub(crate) fn window_base(key: &[u8], w: Window) -> Record {
    Record { key, value: &[], timestamp: w.end - 1, headers: Default::default() }
}
