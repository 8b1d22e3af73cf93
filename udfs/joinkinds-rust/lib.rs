//! joinkinds-rust: the join function `pairs` and the coGroup function
//! `sides` of udfs/joinkinds, written with the Rust SDK; their outputs show
//! everything the platform gives them, and udfs/joinkinds_test.go checks
//! that they are the Go module's, entry by entry.

use std::cell::RefCell;
use std::io::Write;

use platform_udf::{module, Emitter, Output, Record, Result, Window};

thread_local! {
    /// The line being built; emit copies it, so one buffer serves every
    /// output.
    static LINE: RefCell<Vec<u8>> = RefCell::new(Vec::new());
}

/// Emits "key|start|end|left|left ts|right|right ts" for the pair; nothing
/// when the right value is "skip"; the line twice, the second time with the
/// key "k2" and the timestamp 7, when the left value is "two"; and fails the
/// group when the left value is "fail".
fn pairs(key: &[u8], w: Window, left: Record, right: Record, out: &mut Emitter) -> Result<()> {
    match (left.value, right.value) {
        (b"fail", _) => return Err("pairs: fail".into()),
        (_, b"skip") => return Ok(()),
        _ => {}
    }
    LINE.with(|line| {
        let line = &mut *line.borrow_mut();
        line.clear();
        line.extend_from_slice(key);
        put_window(line, w)?;
        put_record(line, left)?;
        put_record(line, right)?;
        out.emit(Output::new(&line[..]));
        if left.value == b"two" {
            out.emit(Output::new(&line[..]).key(&b"k2"[..]).timestamp(7));
        }
        Ok(())
    })
}

/// Emits one record per group, "key|start|end|L=n:v,v|R=m:v,v", the values
/// of each side in order.
fn sides(key: &[u8], w: Window, left: &[Record], right: &[Record], out: &mut Emitter) -> Result<()> {
    LINE.with(|line| {
        let line = &mut *line.borrow_mut();
        line.clear();
        line.extend_from_slice(key);
        put_window(line, w)?;
        put_side(line, "|L=", left)?;
        put_side(line, "|R=", right)?;
        out.emit(Output::new(&line[..]));
        Ok(())
    })
}

fn put_window(line: &mut Vec<u8>, w: Window) -> Result<()> {
    write!(line, "|{}|{}", w.start, w.end)?;
    Ok(())
}

fn put_record(line: &mut Vec<u8>, r: Record) -> Result<()> {
    line.push(b'|');
    line.extend_from_slice(r.value);
    write!(line, "|{}", r.timestamp)?;
    Ok(())
}

fn put_side(line: &mut Vec<u8>, label: &str, recs: &[Record]) -> Result<()> {
    write!(line, "{}{}:", label, recs.len())?;
    for (i, r) in recs.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(r.value);
    }
    Ok(())
}

module! {
    "pairs" => join(pairs),
    "sides" => co_group(sides),
}
