//! Async lookups (`docs/ABI.md`, Async lookups): an `async_request`
//! function asks for each record's lookups and returns at once; the host
//! issues them concurrently and, once a record's lookups have all
//! completed, calls the `async_result` function with the record and their
//! results, in the order asked.

use crate::call::Emitter;
use crate::frame::{self, Reader, TAG_ERROR, TAG_RECORD};
use crate::{Record, Result};

/// The result of one lookup.
#[derive(Clone, Copy, Debug)]
pub struct LookupResult<'a> {
    /// The KV key exists, or the HTTP GET answered 2xx.
    pub found: bool,
    /// The KV entry's value or the HTTP response body.
    pub value: &'a [u8],
}

/// Collects the lookups an `async_request` function asks for one record.
pub struct Lookups<'e> {
    out: &'e mut Vec<u8>,
    index: u32,
    count: u32,
}

impl Lookups<'_> {
    /// Asks for `key` of NATS KV bucket `bucket`.
    pub fn kv(&mut self, bucket: &str, key: &[u8]) {
        self.ask(1, bucket.as_bytes(), key);
    }

    /// Asks for the body of an HTTP GET of `url`, whose host must be on the
    /// job's `lookups.http.allow` list.
    pub fn http_get(&mut self, url: &str) {
        self.ask(2, url.as_bytes(), &[]);
    }

    fn ask(&mut self, kind: u8, target: &[u8], key: &[u8]) {
        frame::put_entry(self.out, TAG_RECORD, self.index);
        self.out.push(0);
        frame::put_u32(self.out, (1 + 4 + target.len() + 4 + key.len()) as u32);
        self.out.push(kind);
        frame::put_bytes(self.out, target);
        frame::put_bytes(self.out, key);
        self.count += 1;
    }
}

/// An `async_request` function: asks for the record's lookups.
pub type AsyncRequestFn = for<'a, 'e> fn(Record<'a>, &mut Lookups<'e>) -> Result<()>;
/// An `async_result` function: emits outputs for a record and its lookups'
/// results, as a flat map function does.
pub type AsyncResultFn = for<'a, 'e> fn(Record<'a>, &[LookupResult<'a>], &mut Emitter<'e>) -> Result<()>;

/// Runs an `async_request` function over an input frame.
pub(crate) fn request(f: AsyncRequestFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut r = Reader::new(input);
    let records = r.u32()?;
    let mut count = 0u32;
    for index in 0..records {
        let rec = r.record()?;
        let mark = out.len();
        let mut ask = Lookups { out, index, count: 0 };
        match f(rec, &mut ask) {
            Ok(()) => count += ask.count,
            Err(e) => {
                out.truncate(mark);
                frame::put_entry(out, TAG_ERROR, index);
                frame::put_bytes(out, e.message().as_bytes());
                count += 1;
            }
        }
    }
    r.finish(records, "records")?;
    Ok(count)
}

/// Runs an `async_result` function over a lookup result frame.
pub(crate) fn result(f: AsyncResultFn, out: &mut Vec<u8>, input: &[u8]) -> std::result::Result<u32, String> {
    let mut r = Reader::new(input);
    let records = r.u32()?;
    let mut count = 0u32;
    let mut results = Vec::new();
    for index in 0..records {
        let rec = r.record()?;
        let n = r.u32()?;
        results.clear();
        for _ in 0..n {
            let status = r.u8()?;
            let value = r.bytes()?;
            if status > 1 {
                return Err(format!("malformed frame: lookup status {status}"));
            }
            results.push(LookupResult { found: status == 0, value });
        }
        let mark = out.len();
        let mut e = Emitter::new(out, rec, index);
        match f(rec, &results, &mut e) {
            Ok(()) => count += e.count(),
            Err(err) => {
                out.truncate(mark);
                frame::put_entry(out, TAG_ERROR, index);
                frame::put_bytes(out, err.message().as_bytes());
                count += 1;
            }
        }
    }
    r.finish(records, "records")?;
    Ok(count)
}
