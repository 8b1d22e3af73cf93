//! A UDF module with one map function, shout. Build it with make.

use platform_udf::{module, Output, Record, Result};

/// Upper-cases the ASCII letters of the value and appends "!"; an empty
/// value fails the record.
fn shout(r: Record) -> Result<Output> {
    if r.value.is_empty() {
        return Err("empty value".into());
    }
    let mut value = r.value.to_ascii_uppercase();
    value.push(b'!');
    Ok(Output::new(value))
}

module! {
    "shout" => map(shout),
}
