//! The frame codec: decoding input frames, encoding output entries.

use crate::record::{Headers, Output, Record};
use crate::window::Window;

/// Output entry tags and record flags of ABI v1.
pub(crate) const TAG_RECORD: u8 = 1;
pub(crate) const TAG_ERROR: u8 = 2;
pub(crate) const TAG_KEEP: u8 = 3;
pub(crate) const TAG_KEY: u8 = 4;
pub(crate) const TAG_TIMESTAMP: u8 = 5;
const TAG_OUTPUT: u8 = 8;
const HAS_KEY: u8 = 0x01;
const HAS_TIMESTAMP: u8 = 0x02;
const HAS_HEADERS: u8 = 0x04;

/// Group flags of grouped frames.
const GROUP_WINDOW: u8 = 0x01;
const GROUP_ACC: u8 = 0x02;
const GROUP_ACC2: u8 = 0x04;
pub(crate) const GROUP_TIMER: u8 = 0x08;
pub(crate) const GROUP_TWO_SIDED: u8 = 0x10;

/// The head of a group of a grouped frame: what keyed functions use of it.
pub(crate) struct Group<'a> {
    pub(crate) flags: u8,
    pub(crate) key: &'a [u8],
    pub(crate) window: Option<Window>,
    pub(crate) acc: Option<&'a [u8]>,
    pub(crate) acc2: Option<&'a [u8]>,
    pub(crate) timer: i64,
    pub(crate) domain: u8,
}

/// The input index of an error entry that fails the whole frame.
pub(crate) const ALL_RECORDS: u32 = u32::MAX;

/// Reads a frame with bounds checks; an error names the byte where the frame
/// is malformed.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    off: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, off: 0 }
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let left = self.buf.len() - self.off;
        if n > left {
            return Err(format!("malformed frame at byte {}: want {} bytes, have {}", self.off, n, left));
        }
        let b = &self.buf[self.off..self.off + n];
        self.off += n;
        Ok(b)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub(crate) fn i64(&mut self) -> Result<i64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }

    #[inline]
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    /// Decodes one record of an input frame.
    #[inline]
    pub(crate) fn record(&mut self) -> Result<Record<'a>, String> {
        let key = self.bytes()?;
        let value = self.bytes()?;
        let timestamp = self.i64()?;
        let count = self.u32()?;
        let start = self.off;
        for _ in 0..count {
            self.bytes()?;
            self.bytes()?;
        }
        let headers = Headers { count, raw: &self.buf[start..self.off] };
        Ok(Record { key, value, timestamp, headers })
    }

    /// Decodes the head of a group of a grouped frame, up to its records.
    pub(crate) fn group(&mut self) -> Result<Group<'a>, String> {
        let at = self.off;
        let flags = self.u8()?;
        if flags & !(GROUP_WINDOW | GROUP_ACC | GROUP_ACC2 | GROUP_TIMER | GROUP_TWO_SIDED) != 0 {
            return Err(format!("malformed frame at byte {}: unknown group flags {:#x}", at, flags));
        }
        let mut g = Group { flags, key: self.bytes()?, window: None, acc: None, acc2: None, timer: 0, domain: 0 };
        if flags & GROUP_WINDOW != 0 {
            g.window = Some(Window { start: self.i64()?, end: self.i64()? });
        }
        if flags & GROUP_ACC != 0 {
            g.acc = Some(self.bytes()?);
        }
        if flags & GROUP_ACC2 != 0 {
            g.acc2 = Some(self.bytes()?);
        }
        if flags & GROUP_TIMER != 0 {
            g.timer = self.i64()?;
            g.domain = self.u8()?;
        }
        Ok(g)
    }

    /// Fails unless the whole frame has been read.
    pub(crate) fn finish(&self, count: u32, what: &str) -> Result<(), String> {
        if self.off != self.buf.len() {
            return Err(format!(
                "malformed frame at byte {}: {} trailing bytes after {} {}",
                self.off,
                self.buf.len() - self.off,
                count,
                what
            ));
        }
        Ok(())
    }
}

#[inline]
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[inline]
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len() as u32);
    out.extend_from_slice(b);
}

/// Starts an entry: its tag and input index.
#[inline]
pub(crate) fn put_entry(out: &mut Vec<u8>, tag: u8, index: u32) {
    out.push(tag);
    put_u32(out, index);
}

/// Appends a record entry for the input `input` at `index`. It carries the
/// fields the output sets to something other than the input's; the host
/// inherits the others.
#[inline]
pub(crate) fn put_record(out: &mut Vec<u8>, index: u32, o: &Output, input: &Record) {
    put_entry(out, TAG_RECORD, index);
    put_record_body(out, o, input);
}

/// Appends a side output entry on the output `tag` for the input `input` at
/// `index`: the tag, then a record entry's body.
pub(crate) fn put_output(out: &mut Vec<u8>, index: u32, tag: &str, o: &Output, input: &Record) {
    put_entry(out, TAG_OUTPUT, index);
    put_bytes(out, tag.as_bytes());
    put_record_body(out, o, input);
}

/// Appends the body of a record entry: the flags and the fields they name.
#[inline]
fn put_record_body(out: &mut Vec<u8>, o: &Output, input: &Record) {
    let key = o.key.as_deref().filter(|&k| k != input.key);
    let timestamp = o.timestamp.filter(|&ts| ts != input.timestamp);
    let headers = o.headers.as_deref().filter(|hs| hs.len() != input.headers.len() || !hs.iter().cloned().eq(input.headers.iter()));
    let mut flags = 0;
    if key.is_some() {
        flags |= HAS_KEY;
    }
    if timestamp.is_some() {
        flags |= HAS_TIMESTAMP;
    }
    if headers.is_some() {
        flags |= HAS_HEADERS;
    }
    out.push(flags);
    if let Some(key) = key {
        put_bytes(out, key);
    }
    put_bytes(out, &o.value);
    if let Some(ts) = timestamp {
        out.extend_from_slice(&ts.to_le_bytes());
    }
    if let Some(headers) = headers {
        put_u32(out, headers.len() as u32);
        for h in headers {
            put_bytes(out, &h.name);
            put_bytes(out, &h.value);
        }
    }
}
