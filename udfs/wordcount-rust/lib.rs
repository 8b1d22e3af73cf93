//! wordcount-rust: the flat map function `split` of udfs/wordcount, written
//! with the Rust SDK. It splits a record's text into lower-cased words by
//! exactly the rule of the Go module (README.md), with the Unicode tables in
//! tables.rs.

mod tables;

use std::cell::RefCell;

use platform_udf::{module, Emitter, Output, Record, Result};
use tables::{LOWERS, WORDS};

thread_local! {
    /// The word being built; emit copies it, so one buffer serves every word.
    static WORD: RefCell<Vec<u8>> = RefCell::new(Vec::new());
}

/// Emits one record per word of the value, with the word as its key and its
/// value and the input's timestamp and headers.
fn split(r: Record, out: &mut Emitter) -> Result<()> {
    WORD.with(|word| {
        let word = &mut *word.borrow_mut();
        word.clear();
        let mut text = r.value;
        while !text.is_empty() {
            let (c, size) = decode(text);
            text = &text[size..];
            match c.filter(|&c| is_word(c)).and_then(|c| char::from_u32(lower(c))) {
                Some(c) => word.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                None => emit(word, out),
            }
        }
        emit(word, out);
    });
    Ok(())
}

fn emit(word: &mut Vec<u8>, out: &mut Emitter) {
    if !word.is_empty() {
        out.emit(Output::new(&word[..]).key(&word[..]));
        word.clear();
    }
}

/// Decodes the code point at the start of s as Go's utf8.DecodeRune does:
/// None and 1 for a byte that does not start a valid, shortest-form
/// encoding of a scalar value.
fn decode(s: &[u8]) -> (Option<u32>, usize) {
    let b0 = s[0];
    if b0 < 0x80 {
        return (Some(b0 as u32), 1);
    }
    let (n, lo, hi) = match b0 {
        0xc2..=0xdf => (2, 0x80, 0xbf),
        0xe0 => (3, 0xa0, 0xbf),
        0xe1..=0xec | 0xee..=0xef => (3, 0x80, 0xbf),
        0xed => (3, 0x80, 0x9f),
        0xf0 => (4, 0x90, 0xbf),
        0xf1..=0xf3 => (4, 0x80, 0xbf),
        0xf4 => (4, 0x80, 0x8f),
        _ => return (None, 1),
    };
    if s.len() < n || s[1] < lo || s[1] > hi || s[2..n].iter().any(|&b| b & 0xc0 != 0x80) {
        return (None, 1);
    }
    let c = s[1..n].iter().fold((b0 & (0x7f >> n)) as u32, |c, &b| c << 6 | (b & 0x3f) as u32);
    (Some(c), n)
}

/// Whether c is a letter or a decimal digit.
fn is_word(c: u32) -> bool {
    if c < 0x80 {
        return (c as u8).is_ascii_alphanumeric();
    }
    let i = WORDS.partition_point(|&(_, hi)| hi < c);
    i < WORDS.len() && WORDS[i].0 <= c
}

/// The simple lower-case mapping of the word code point c.
fn lower(c: u32) -> u32 {
    if c < 0x80 {
        return (c as u8).to_ascii_lowercase() as u32;
    }
    let i = LOWERS.partition_point(|&(_, hi, _, _)| hi < c);
    match LOWERS.get(i) {
        Some(&(lo, _, delta, stride)) if lo <= c && (c - lo) % stride == 0 => (c as i32 + delta) as u32,
        _ => c,
    }
}

module! {
    "split" => flat_map(split),
}
