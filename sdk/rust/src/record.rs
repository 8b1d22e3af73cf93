use std::borrow::Cow;

use crate::frame::Reader;

/// One input record: a key, a value, an event timestamp in milliseconds since
/// the Unix epoch, and headers. Its slices point into the batch and are valid
/// only during the call; copy what you keep.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// The record's key; empty until the stream is keyed.
    pub key: &'a [u8],
    /// The record's value.
    pub value: &'a [u8],
    /// Event time, milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// The record's headers, in order; a name may repeat.
    pub headers: Headers<'a>,
}

/// One header of a record: a name and a value. Input headers borrow from the
/// batch; output headers may own their bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    /// The header's name.
    pub name: Cow<'a, [u8]>,
    /// The header's value.
    pub value: Cow<'a, [u8]>,
}

impl<'a> Header<'a> {
    /// A header from a name and a value.
    pub fn new(name: impl Into<Cow<'a, [u8]>>, value: impl Into<Cow<'a, [u8]>>) -> Self {
        Header { name: name.into(), value: value.into() }
    }
}

/// The headers of an input record, decoded as they are read, without
/// allocating.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headers<'a> {
    pub(crate) count: u32,
    pub(crate) raw: &'a [u8],
}

impl<'a> Headers<'a> {
    /// The number of headers.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The headers in order.
    pub fn iter(&self) -> impl Iterator<Item = Header<'a>> {
        let mut r = Reader::new(self.raw);
        (0..self.count).map(move |_| {
            let name = r.bytes().unwrap_or_default();
            let value = r.bytes().unwrap_or_default();
            Header::new(name, value)
        })
    }

    /// The value of the first header with this name.
    pub fn get(&self, name: &[u8]) -> Option<&'a [u8]> {
        let mut r = Reader::new(self.raw);
        for _ in 0..self.count {
            let (n, v) = (r.bytes().ok()?, r.bytes().ok()?);
            if n == name {
                return Some(v);
            }
        }
        None
    }
}

/// A record a map function returns or a flat map function emits. Its value
/// is always set; the key, timestamp and headers are the input record's
/// unless set with [`Output::key`], [`Output::timestamp`] and
/// [`Output::headers`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output<'a> {
    pub(crate) value: Cow<'a, [u8]>,
    pub(crate) key: Option<Cow<'a, [u8]>>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) headers: Option<Vec<Header<'a>>>,
}

impl<'a> Output<'a> {
    /// An output with this value, inheriting everything else.
    pub fn new(value: impl Into<Cow<'a, [u8]>>) -> Self {
        Output { value: value.into(), key: None, timestamp: None, headers: None }
    }

    /// Sets the output's key.
    pub fn key(mut self, key: impl Into<Cow<'a, [u8]>>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the output's timestamp.
    pub fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// Replaces the output's headers; an empty list gives a record without
    /// headers.
    pub fn headers(mut self, headers: Vec<Header<'a>>) -> Self {
        self.headers = Some(headers);
        self
    }
}
