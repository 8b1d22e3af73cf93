//! lookup-rust: the async lookup functions of udfs/lookup, written with the
//! Rust SDK. It is one of the conformance UDFs and must produce the Go
//! module's bytes.

use std::cell::RefCell;

use platform_udf::{module, Emitter, LookupResult, Lookups, Output, Record, Result};

thread_local! {
    /// The result being built; emit copies it.
    static OUT: RefCell<Vec<u8>> = RefCell::new(Vec::new());
}

/// Asks for the order's user in the KV bucket "users".
fn ask_kv(r: Record, ask: &mut Lookups) -> Result<()> {
    let user = string_field(r.value, br#""user":""#).ok_or("lookup: order without user")?;
    ask.kv("users", user);
    Ok(())
}

/// Asks for the URL the order names.
fn ask_http(r: Record, ask: &mut Lookups) -> Result<()> {
    let url = string_field(r.value, br#""url":""#).ok_or("lookup: order without url")?;
    ask.http_get(std::str::from_utf8(url)?);
    Ok(())
}

/// Emits {"order":<order>,"profile":<profile or null>} with the order's key
/// and timestamp.
fn join(r: Record, results: &[LookupResult], out: &mut Emitter) -> Result<()> {
    OUT.with(|buf| {
        let buf = &mut *buf.borrow_mut();
        buf.clear();
        buf.extend_from_slice(br#"{"order":"#);
        buf.extend_from_slice(r.value);
        buf.extend_from_slice(br#","profile":"#);
        match results {
            [one] if one.found => buf.extend_from_slice(one.value),
            _ => buf.extend_from_slice(b"null"),
        }
        buf.push(b'}');
        out.emit(Output::new(&buf[..]));
    });
    Ok(())
}

/// The bytes after the first field in v up to the next quote.
fn string_field<'a>(v: &'a [u8], field: &[u8]) -> Option<&'a [u8]> {
    let start = v.windows(field.len()).position(|w| w == field)? + field.len();
    let end = v[start..].iter().position(|&c| c == b'"')?;
    Some(&v[start..start + end])
}

module! {
    "ask_kv" => async_request(ask_kv),
    "ask_http" => async_request(ask_http),
    "join" => async_result(join),
}
