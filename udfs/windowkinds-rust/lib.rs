//! windowkinds-rust: a window_process, a session_gap and a watermark
//! function written with the Rust SDK, for the SDK tests; the README says
//! what each writes, the same in every language.

use platform_udf::{module, Emitter, Output, Record, Result, Window};

/// Emits "<key>:<start>:<end>:<records>" for the window, then each
/// record's value with the key "v" and the timestamp 7.
fn summary(key: &[u8], w: Window, recs: &[Record], out: &mut Emitter) -> Result<()> {
    let mut head = key.to_vec();
    head.extend_from_slice(format!(":{}:{}:{}", w.start, w.end, recs.len()).as_bytes());
    out.emit(Output::new(head));
    for r in recs {
        if r.value == b"!" {
            return Err("bad record".into());
        }
        out.emit(Output::new(r.value).key(&b"v"[..]).timestamp(7));
    }
    Ok(())
}

/// The gap is 1000 ms per byte of the value; "!" fails.
fn gap(r: Record) -> Result<i64> {
    if r.value == b"!" {
        return Err("bad gap".into());
    }
    Ok(1000 * r.value.len() as i64)
}

/// A record "beat" emits a watermark at its timestamp; "!" fails.
fn beat(r: Record) -> Result<Option<i64>> {
    match r.value {
        b"!" => Err("bad beat".into()),
        b"beat" => Ok(Some(r.timestamp)),
        _ => Ok(None),
    }
}

module! {
    "summary" => window_process(summary),
    "gap" => session_gap(gap),
    "beat" => watermark(beat),
}
