//! Window process functions with per-window state, as Flink's
//! `ProcessWindowFunction` with its context's `windowState()` (docs/ABI.md,
//! Keyed state and timers, Window functions).

use crate::frame::Reader;
use crate::keyed::{head, Context, Keyed};
use crate::state::{host, StateDecl};
use crate::window::{each_group, read_group, window_base, Window};
use crate::{Record, Result};

/// A window process function with state: called once per window that fires
/// (again when a record late within the allowed lateness fires it again),
/// with the window's key, bounds and records; the state handles act on that
/// key's state in that window, which the platform clears when it drops the
/// window. What it emits inherits the window's key and the timestamp
/// `end - 1`, and no headers.
pub type WindowStateFn = for<'c, 'k, 'r, 'a> fn(&mut Context<'c>, &'k [u8], Window, &'r [Record<'a>]) -> Result<()>;

/// Runs a window process function with state over a grouped frame; returns
/// the number of entries written to out. An error discards what the
/// function emitted for its window; the state it changed stays changed.
pub(crate) fn window_process(
    keyed: &mut Keyed,
    out: &mut Vec<u8>,
    states: &'static [&'static StateDecl],
    f: WindowStateFn,
    input: &[u8],
) -> std::result::Result<u32, String> {
    let (watermark, processing_time, _) = head(&mut Reader::new(input))?;
    let mut recs = Vec::new();
    each_group(input, out, |_, g, group, r, out| {
        read_group(r, group.flags, &mut recs)?;
        let w = group.window.unwrap_or(Window { start: 0, end: 0 });
        // The platform gives state only to a module that declares some;
        // entering without it would trap.
        if !states.is_empty() {
            host::enter(g);
        }
        let mut ctx = Context {
            out,
            scratch: &mut keyed.scratch,
            states,
            key: group.key,
            watermark,
            processing_time,
            index: g,
            base: window_base(group.key, w),
            count: 0,
            window: true,
        };
        Ok(f(&mut ctx, group.key, w, &recs).map(|_| ctx.count))
    })
}
