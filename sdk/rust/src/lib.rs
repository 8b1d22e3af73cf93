//! Rust SDK for the platform's user-defined functions (ABI v1, `docs/ABI.md`).
//!
//! A UDF module is a `cdylib` crate built for `wasm32-unknown-unknown` (or
//! `wasm32-wasi`). It writes ordinary Rust functions and lists them, by name
//! and kind, in one [`module!`] invocation, which generates the module's
//! exports. The SDK decodes each batch of records, calls the function once per
//! record and encodes the results; its buffers are reused from call to call.
//!
//! ```ignore
//! use platform_udf::{module, Output, Record, Result};
//!
//! fn shout(r: Record) -> Result<Output> {
//!     Ok(Output::new(r.value.to_ascii_uppercase()))
//! }
//!
//! module! {
//!     "shout" => map(shout),
//! }
//! ```
//!
//! A function that returns an error fails that record only: the host handles
//! it according to the job's `on_udf_error`. A panic traps the whole call
//! (WebAssembly has no unwinding here); the host then runs the batch's records
//! one at a time to isolate the record that traps.

mod broadcast;
mod call;
mod frame;
#[cfg(not(target_arch = "wasm32"))]
mod harness;
#[cfg(not(target_arch = "wasm32"))]
mod harness_state;
pub mod json;
mod join;
mod keyed;
mod log;
mod lookup;
mod record;
mod state;
mod trigger;
mod window;
mod window_state;

#[doc(hidden)]
pub mod export;

pub use broadcast::BroadcastState;
pub use call::{Emitter, Function};
#[cfg(not(target_arch = "wasm32"))]
pub use harness::{Harness, HarnessOutput, HarnessRecord, HarnessTimer};
pub use keyed::{Context, MigrateFn, ProcessBroadcastFn, TimeDomain, Timer, NO_WATERMARK};
pub use log::{log, Level};
pub use lookup::{LookupResult, Lookups};
pub use record::{Header, Headers, Output, Record};
pub use state::{ListState, MapState, StateDecl, ValueState};
pub use trigger::{Trigger, TriggerContext, TriggerResult, MAX_TRIGGER_STATE};
pub use window::{Aggregate, Window};

use std::fmt;

/// The ABI version this SDK speaks.
pub const ABI_VERSION: i32 = 1;

/// The error a function returns to fail one record; its message reaches the
/// host. Any value that implements `Display` converts into it, so `?` works on
/// most errors and `Err("message".into())` on strings.
#[derive(Debug)]
pub struct Error(String);

impl Error {
    /// The message the host receives.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl<E: fmt::Display> From<E> for Error {
    fn from(e: E) -> Self {
        Error(e.to_string())
    }
}

/// The result of a UDF.
pub type Result<T> = std::result::Result<T, Error>;
