//! enrich-rust: the join function `enrich` of udfs/enrich, written with the
//! Rust SDK. It is one of the conformance UDFs: run through the platform
//! with an interval join, its output must be the Go module's, byte for
//! byte.

use std::cell::RefCell;

use platform_udf::{module, Emitter, Output, Record, Result, Window};

thread_local! {
    /// The result being built; emit copies it, so one buffer serves every
    /// pair.
    static OUT: RefCell<Vec<u8>> = RefCell::new(Vec::new());
}

/// Starts the value of a profile's tier.
const TIER_FIELD: &[u8] = br#""tier":""#;

/// Emits {"order":<order>,"tier":"<tier>"} for an order (left) and a
/// profile (right) of the same user: the order's JSON unchanged and the
/// profile's tier, the bytes between "tier":" and the next quote. The result
/// keeps the user as key and the later of both timestamps.
fn enrich(_key: &[u8], _w: Window, order: Record, profile: Record, out: &mut Emitter) -> Result<()> {
    let tier = string_field(profile.value, TIER_FIELD).ok_or("enrich: profile without tier")?;
    OUT.with(|buf| {
        let buf = &mut *buf.borrow_mut();
        buf.clear();
        buf.extend_from_slice(br#"{"order":"#);
        buf.extend_from_slice(order.value);
        buf.extend_from_slice(br#","tier":""#);
        buf.extend_from_slice(tier);
        buf.extend_from_slice(br#""}"#);
        out.emit(Output::new(&buf[..]));
    });
    Ok(())
}

/// The bytes after the first field in v up to the next quote.
fn string_field<'a>(v: &'a [u8], field: &[u8]) -> Option<&'a [u8]> {
    let start = v.windows(field.len()).position(|w| w == field)? + field.len();
    let rest = &v[start..];
    let end = rest.iter().position(|&c| c == b'"')?;
    Some(&rest[..end])
}

module! {
    "enrich" => join(enrich),
}
