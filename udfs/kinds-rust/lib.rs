//! kinds-rust: a function of every record kind, written with the Rust SDK,
//! for the platform's tests and as a reference of the SDK. The README says
//! what each function does.

use std::borrow::Cow;

use platform_udf::{log, module, Header, Level, Output, Record, Result};

/// Exchanges the key and the value.
fn swap(r: Record) -> Result<Output> {
    Ok(Output::new(r.key).key(r.value))
}

/// Moves the timestamp one second later.
fn delay(r: Record) -> Result<Output> {
    Ok(Output::new(r.value).timestamp(r.timestamp + 1000))
}

/// Appends a header "length" holding the value's length in decimal.
fn annotate(r: Record) -> Result<Output> {
    let mut headers: Vec<Header> = r.headers.iter().collect();
    headers.push(Header::new(&b"length"[..], r.value.len().to_string().into_bytes()));
    Ok(Output::new(r.value).headers(headers))
}

/// Panics on the value "crash", which traps the call; passes other records
/// through.
fn crash(r: Record) -> Result<Output> {
    if r.value == b"crash" {
        panic!("crash requested");
    }
    Ok(Output::new(r.value))
}

/// Writes the value to the platform's logs at info level and passes the
/// record through.
fn log_value(r: Record) -> Result<Output> {
    log(Level::Info, &String::from_utf8_lossy(r.value));
    Ok(Output::new(r.value))
}

/// Keeps the records whose value is not empty.
fn nonempty(r: Record) -> Result<bool> {
    Ok(!r.value.is_empty())
}

/// Emits one record per comma-separated field of the value, keeping the key,
/// timestamp and headers. A field "!" fails the record, and none of its
/// fields are emitted.
fn fields(r: Record, out: &mut platform_udf::Emitter) -> Result<()> {
    for f in r.value.split(|&c| c == b',') {
        if f == b"!" {
            return Err(r#"field "!" is not allowed"#.into());
        }
        out.emit(Output::new(f));
    }
    Ok(())
}

/// Makes the value the key.
fn by_value(r: Record) -> Result<Cow<[u8]>> {
    Ok(r.value.into())
}

/// Reads the timestamp from the value, decimal milliseconds since the epoch;
/// a value that is not a number fails the record.
fn parse_time(r: Record) -> Result<i64> {
    let text = std::str::from_utf8(r.value).map_err(|_| NOT_A_NUMBER)?;
    text.parse().map_err(|_| NOT_A_NUMBER.into())
}

/// The error of parse_time.
const NOT_A_NUMBER: &str = "not a decimal number";

module! {
    "swap" => map(swap),
    "delay" => map(delay),
    "annotate" => map(annotate),
    "crash" => map(crash),
    "log" => map(log_value),
    "nonempty" => filter(nonempty),
    "fields" => flat_map(fields),
    "by_value" => key(by_value),
    "parse_time" => timestamp(parse_time),
}
