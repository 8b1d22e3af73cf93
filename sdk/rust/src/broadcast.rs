//! Broadcast states, for the broadcast state pattern (docs/ABI.md,
//! Broadcast state; Flink's `KeyedBroadcastProcessFunction`).

use crate::keyed::Context;
use crate::state::{MapState, StateDecl};

/// A broadcast state: a map that every subtask of a `broadcast_process`
/// operator holds whole, not scoped by key, without TTL. A
/// `process_broadcast` function reads and writes it; the keyed input's
/// `process` and `on_timer` functions only read it (a write traps the call
/// with an error naming the state). Declare it as a `static` and list it in
/// [`module!`](crate::module).
#[derive(Debug)]
pub struct BroadcastState {
    #[doc(hidden)]
    pub decl: StateDecl,
}

impl BroadcastState {
    /// Declares a broadcast state.
    pub const fn new(name: &'static str) -> Self {
        BroadcastState { decl: StateDecl { name, kind: "map", ttl: None, broadcast: true, retired: false } }
    }

    /// The map imports act on a broadcast state as on a map state of the
    /// same index, whatever the key.
    const fn map(&self) -> MapState {
        MapState { decl: StateDecl { name: self.decl.name, kind: "map", ttl: None, broadcast: true, retired: false } }
    }

    /// The value under a key, or None.
    pub fn get<'c>(&self, ctx: &'c mut Context, key: &[u8]) -> Option<&'c [u8]> {
        self.map().get(ctx, key)
    }

    /// The entries, as (key, value), in bytewise key order.
    pub fn entries<'c>(&self, ctx: &'c mut Context) -> impl Iterator<Item = (&'c [u8], &'c [u8])> {
        self.map().entries(ctx)
    }

    /// Sets the value under a key; only from a `process_broadcast` function.
    pub fn put(&self, ctx: &mut Context, key: &[u8], value: &[u8]) {
        self.map().put(ctx, key, value)
    }

    /// Removes a key; only from a `process_broadcast` function.
    pub fn remove(&self, ctx: &mut Context, key: &[u8]) {
        self.map().remove(ctx, key)
    }

    /// Removes every entry; only from a `process_broadcast` function.
    pub fn clear(&self, ctx: &mut Context) {
        self.map().clear(ctx)
    }
}
