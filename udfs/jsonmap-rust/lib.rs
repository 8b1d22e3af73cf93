//! jsonmap-rust: udfs/jsonmap's bid_eur written with the Rust SDK's JSON
//! helpers (platform_udf::json): the map of Nexmark's query 1 over bids in
//! JSON. The README of udfs/jsonmap says exactly what it writes.

use std::cell::RefCell;

use platform_udf::json::{self, Writer};
use platform_udf::{module, Output, Record, Result};

thread_local! {
    /// The channel, unescaped, and the output, reused for every record.
    static BUFS: RefCell<(Vec<u8>, Writer)> = RefCell::new((Vec::new(), Writer::new()));
}

fn int(v: &[u8], field: &'static str, err: &'static str) -> Result<i64> {
    json::get_int(v, &[field]).ok_or_else(|| err.into())
}

fn bid_eur(r: Record) -> Result<Output> {
    let v = r.value;
    let auction = int(v, "auction", "no integer \"auction\"")?;
    let bidder = int(v, "bidder", "no integer \"bidder\"")?;
    let price = int(v, "price", "no integer \"price\"")?;
    BUFS.with(|b| {
        let (channel, out) = &mut *b.borrow_mut();
        if json::get_str(channel, v, &["channel"]).is_none() {
            return Err("no string \"channel\"".into());
        }
        let date_time = int(v, "dateTime", "no integer \"dateTime\"")?;
        out.reset()
            .begin_object()
            .key("auction")
            .int(auction)
            .key("bidder")
            .int(bidder)
            .key("price_eur")
            .float(price as f64 * 0.908)
            .key("channel")
            .string(channel)
            .key("dateTime")
            .int(date_time)
            .end_object();
        Ok(Output::new(out.as_bytes().to_vec()))
    })
}

module! {
    "bid_eur" => map(bid_eur),
}
