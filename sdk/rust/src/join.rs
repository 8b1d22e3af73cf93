//! Join and coGroup functions: the decoding of their two-sided groups and
//! the pairing of a join's records (docs/ABI.md, Join functions).

use crate::call::Emitter;
use crate::frame::{Reader, GROUP_TWO_SIDED};
use crate::window::{each_group, read_side, window_base};
use crate::{Record, Result, Window};

/// A join function, as Flink's `JoinFunction`: called once per pair of a
/// left and a right record with the same key, in the same window (or, for
/// an interval join, within its bounds, with the window `0..0`). What it
/// emits inherits the key and, for a window join, the timestamp `end - 1`,
/// for an interval join the later of the pair's two timestamps.
pub type JoinFn = for<'k, 'a, 'e> fn(&'k [u8], Window, Record<'a>, Record<'a>, &mut Emitter<'e>) -> Result<()>;
/// A coGroup function, as Flink's `CoGroupFunction`: called once per key
/// and window with both sides' records, either side possibly empty; what it
/// emits inherits as a window join's results do.
pub type CoGroupFn = for<'k, 'r, 'a, 'e> fn(&'k [u8], Window, &'r [Record<'a>], &'r [Record<'a>], &mut Emitter<'e>) -> Result<()>;

/// The error of a group of a two-sided kind that has no right side.
const ONE_SIDED: &str = "udf: join group without a right side";

/// Runs a join function over a grouped frame: every left record of a group
/// with every right record, in order. An error fails the whole group.
pub(crate) fn join(f: JoinFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    two_sided(out, input, |key, w, left, right, e| {
        let interval = w.is_none();
        let w = w.unwrap_or(Window { start: 0, end: 0 });
        for l in left {
            for r in right {
                if interval {
                    e.stamp = Some(l.timestamp.max(r.timestamp));
                }
                f(key, w, *l, *r, e)?;
            }
        }
        Ok(())
    })
}

/// Runs a coGroup function over a grouped frame, once per group.
pub(crate) fn co_group(f: CoGroupFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    two_sided(out, input, |key, w, left, right, e| f(key, w.unwrap_or(Window { start: 0, end: 0 }), left, right, e))
}

/// Runs one for every two-sided group of a frame with the group's key,
/// window (none for an interval join), left and right records, and an
/// emitter whose records inherit the group's key and `end - 1`.
fn two_sided<'a>(
    out: &mut Vec<u8>,
    input: &'a [u8],
    mut one: impl FnMut(&'a [u8], Option<Window>, &[Record<'a>], &[Record<'a>], &mut Emitter) -> Result<()>,
) -> std::result::Result<u32, String> {
    let (mut left, mut right) = (Vec::new(), Vec::new());
    each_group(input, out, |_, g, group, r: &mut Reader<'a>, out| {
        read_side(r, &mut left)?;
        if group.flags & GROUP_TWO_SIDED == 0 {
            return Ok(Err(ONE_SIDED.into()));
        }
        read_side(r, &mut right)?;
        let base = window_base(group.key, group.window.unwrap_or(Window { start: 0, end: 0 }));
        let mut e = Emitter::new(out, base, g);
        Ok(one(group.key, group.window, &left, &right, &mut e).map(|_| e.count()))
    })
}
