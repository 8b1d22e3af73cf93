//! Keyed state and timers: handles a module declares and the `platform`
//! imports behind them (docs/ABI.md, Keyed state and timers).

use crate::keyed::Context;

/// A declared state: its name, kind and optional TTL (a Go duration such as
/// `"1h"`). The position of a state in the [`module!`](crate::module) list is
/// its index in the self-description.
#[derive(Debug)]
pub struct StateDecl {
    pub(crate) name: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) ttl: Option<&'static str>,
    /// A broadcast state (broadcast.rs).
    pub(crate) broadcast: bool,
    /// A retired state, kept for the `migrate_state` function (docs/ABI.md,
    /// State migration).
    pub(crate) retired: bool,
}

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name {
            #[doc(hidden)]
            pub decl: StateDecl,
        }

        impl $name {
            /// Declares a state of this kind without a TTL.
            pub const fn new(name: &'static str) -> Self {
                $name { decl: StateDecl { name, kind: $kind, ttl: None, broadcast: false, retired: false } }
            }

            /// Declares that entries expire `ttl` (a Go duration such as
            /// `"1h"`) after they were last written; a job may override it.
            pub const fn ttl(self, ttl: &'static str) -> Self {
                $name { decl: StateDecl { name: self.decl.name, kind: $kind, ttl: Some(ttl), broadcast: false, retired: self.decl.retired } }
            }

            /// Declares a state of the module's version before, which this
            /// version renamed or retyped: it is restored only for the
            /// module's `migrate_state` function to convert, and cleared then.
            pub const fn retired(self) -> Self {
                $name { decl: StateDecl { name: self.decl.name, kind: $kind, ttl: self.decl.ttl, broadcast: false, retired: true } }
            }

            /// Removes the current key's state.
            pub fn clear(&self, ctx: &mut Context) {
                host::state_clear(ctx.state(&self.decl));
            }
        }
    };
}

handle!(
    /// A value state: one value per key. Declare it as a `static` and list
    /// it in [`module!`](crate::module).
    ValueState,
    "value"
);
handle!(
    /// A list state: a list of values per key, in append order.
    ListState,
    "list"
);
handle!(
    /// A map state: a map from user keys to values per key, in bytewise key
    /// order.
    MapState,
    "map"
);

impl ValueState {
    /// The current key's value, or None. It is valid until the context is
    /// used again; copy it to keep it.
    pub fn get<'c>(&self, ctx: &'c mut Context) -> Option<&'c [u8]> {
        let state = ctx.state(&self.decl);
        read(&mut ctx.scratch, |buf| host::value_get(state, buf))
    }

    /// Sets the current key's value.
    pub fn set(&self, ctx: &mut Context, value: &[u8]) {
        host::value_set(ctx.state(&self.decl), value);
    }
}

impl ListState {
    /// Appends a value to the current key's list.
    pub fn append(&self, ctx: &mut Context, value: &[u8]) {
        host::list_append(ctx.state(&self.decl), value);
    }

    /// The current key's values, in append order; empty when there are
    /// none.
    pub fn get<'c>(&self, ctx: &'c mut Context) -> impl Iterator<Item = &'c [u8]> {
        let state = ctx.state(&self.decl);
        let buf = read(&mut ctx.scratch, |buf| host::list_get(state, buf)).unwrap_or(&[0, 0, 0, 0]);
        Elements::new(buf, 1).map(|e| e[0])
    }
}

impl MapState {
    /// The value under a user key of the current key's map, or None.
    pub fn get<'c>(&self, ctx: &'c mut Context, key: &[u8]) -> Option<&'c [u8]> {
        let state = ctx.state(&self.decl);
        read(&mut ctx.scratch, |buf| host::map_get(state, key, buf))
    }

    /// Sets the value under a user key of the current key's map.
    pub fn put(&self, ctx: &mut Context, key: &[u8], value: &[u8]) {
        host::map_put(ctx.state(&self.decl), key, value);
    }

    /// Removes a user key from the current key's map.
    pub fn remove(&self, ctx: &mut Context, key: &[u8]) {
        host::map_remove(ctx.state(&self.decl), key);
    }

    /// The entries of the current key's map, as (user key, value), in
    /// bytewise key order.
    pub fn entries<'c>(&self, ctx: &'c mut Context) -> impl Iterator<Item = (&'c [u8], &'c [u8])> {
        let state = ctx.state(&self.decl);
        let buf = read(&mut ctx.scratch, |buf| host::map_entries(state, buf)).unwrap_or(&[0, 0, 0, 0]);
        Elements::new(buf, 2).map(|e| (e[0], e[1]))
    }
}

/// Runs a host read into buf, again with a buffer as large as the host asks
/// for when the result did not fit. None is absent.
fn read(buf: &mut Vec<u8>, call: impl Fn(&mut [u8]) -> i32) -> Option<&[u8]> {
    if buf.len() < 256 {
        buf.resize(256, 0);
    }
    let mut n = call(buf);
    if n < 0 {
        return None;
    }
    if n as usize > buf.len() {
        buf.resize(n as usize, 0);
        n = call(buf);
    }
    Some(&buf[..n as usize])
}

/// The elements of a list or map read: u32 count, then count times `per`
/// length-prefixed byte strings.
struct Elements<'b> {
    buf: &'b [u8],
    left: u32,
    per: usize,
}

impl<'b> Elements<'b> {
    fn new(buf: &'b [u8], per: usize) -> Self {
        let left = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
        Elements { buf: &buf[4..], left, per }
    }

    fn next_bytes(&mut self) -> &'b [u8] {
        let n = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        let b = &self.buf[4..4 + n];
        self.buf = &self.buf[4 + n..];
        b
    }
}

impl<'b> Iterator for Elements<'b> {
    type Item = [&'b [u8]; 2];

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let first = self.next_bytes();
        let second = if self.per == 2 { self.next_bytes() } else { &[] };
        Some([first, second])
    }
}

/// The state and timer imports, safe to call: the host reads and writes
/// only the locations passed, during the call.
#[cfg(target_arch = "wasm32")]
pub(crate) mod host {
    mod ffi {
        #[link(wasm_import_module = "platform")]
        extern "C" {
            pub fn enter(group: u32);
            pub fn value_get(state: u32, buf: *mut u8, cap: usize) -> i32;
            pub fn value_set(state: u32, ptr: *const u8, len: usize);
            pub fn state_clear(state: u32);
            pub fn list_append(state: u32, ptr: *const u8, len: usize);
            pub fn list_get(state: u32, buf: *mut u8, cap: usize) -> i32;
            pub fn map_get(state: u32, key: *const u8, key_len: usize, buf: *mut u8, cap: usize) -> i32;
            pub fn map_put(state: u32, key: *const u8, key_len: usize, ptr: *const u8, len: usize);
            pub fn map_remove(state: u32, key: *const u8, key_len: usize);
            pub fn map_entries(state: u32, buf: *mut u8, cap: usize) -> i32;
            pub fn timer_register(domain: u32, timestamp: i64);
            pub fn timer_delete(domain: u32, timestamp: i64);
        }
    }

    // SAFETY (each unsafe block): the pointers and lengths come from live
    // slices, which the host accesses only during the call.
    pub(crate) fn enter(group: u32) {
        unsafe { ffi::enter(group) }
    }
    pub(crate) fn value_get(state: u32, buf: &mut [u8]) -> i32 {
        unsafe { ffi::value_get(state, buf.as_mut_ptr(), buf.len()) }
    }
    pub(crate) fn value_set(state: u32, v: &[u8]) {
        unsafe { ffi::value_set(state, v.as_ptr(), v.len()) }
    }
    pub(crate) fn state_clear(state: u32) {
        unsafe { ffi::state_clear(state) }
    }
    pub(crate) fn list_append(state: u32, v: &[u8]) {
        unsafe { ffi::list_append(state, v.as_ptr(), v.len()) }
    }
    pub(crate) fn list_get(state: u32, buf: &mut [u8]) -> i32 {
        unsafe { ffi::list_get(state, buf.as_mut_ptr(), buf.len()) }
    }
    pub(crate) fn map_get(state: u32, key: &[u8], buf: &mut [u8]) -> i32 {
        unsafe { ffi::map_get(state, key.as_ptr(), key.len(), buf.as_mut_ptr(), buf.len()) }
    }
    pub(crate) fn map_put(state: u32, key: &[u8], v: &[u8]) {
        unsafe { ffi::map_put(state, key.as_ptr(), key.len(), v.as_ptr(), v.len()) }
    }
    pub(crate) fn map_remove(state: u32, key: &[u8]) {
        unsafe { ffi::map_remove(state, key.as_ptr(), key.len()) }
    }
    pub(crate) fn map_entries(state: u32, buf: &mut [u8]) -> i32 {
        unsafe { ffi::map_entries(state, buf.as_mut_ptr(), buf.len()) }
    }
    pub(crate) fn timer_register(domain: u32, ts: i64) {
        unsafe { ffi::timer_register(domain, ts) }
    }
    pub(crate) fn timer_delete(domain: u32, ts: i64) {
        unsafe { ffi::timer_delete(domain, ts) }
    }
}

/// Outside WebAssembly, the imports are the native test harness's
/// stand-in for the platform (harness_state.rs).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::harness_state as host;
