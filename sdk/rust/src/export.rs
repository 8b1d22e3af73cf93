//! The module's exports, which [`module!`](crate::module) generates in the
//! UDF crate and which call in here. A WebAssembly instance is
//! single-threaded and the host makes one call at a time, so the module's
//! buffers live in one static.

pub use crate::keyed::{MIGRATE_STATE, ON_TIMER, PROCESS, PROCESS_BROADCAST, WINDOW_PROCESS_WITH_STATE};
pub use crate::trigger::trigger;
pub use crate::window::aggregate;

use crate::call::{self, Caller, Function};
use crate::state::StateDecl;

struct Module {
    /// The grow-only region `platform_alloc` hands out.
    input: Vec<u8>,
    /// The self-description `platform_describe` points at.
    description: Vec<u8>,
    caller: Caller,
    /// Whether panics are logged yet.
    hooked: bool,
}

static mut MODULE: Module = Module { input: Vec::new(), description: Vec::new(), caller: Caller::new(), hooked: false };

/// The smallest input region, so that small frames never reallocate.
const MIN_INPUT: usize = 64 << 10;

fn module() -> &'static mut Module {
    // SAFETY: the instance is single-threaded and the exports, the only
    // callers, are never reentered.
    let m = unsafe { &mut *std::ptr::addr_of_mut!(MODULE) };
    if !m.hooked {
        m.hooked = true;
        // A panic traps the call; its message goes to the platform's logs
        // first, so the trap can be told apart from others.
        std::panic::set_hook(Box::new(|p| crate::log(crate::Level::Error, &p.to_string())));
    }
    m
}

fn pack(ptr: *const u8, len: usize) -> u64 {
    (ptr as usize as u64) << 32 | len as u64
}

/// `platform_alloc`.
pub fn alloc(size: u32) -> u32 {
    let m = module();
    let size = size as usize;
    if size > m.input.len() {
        m.input = vec![0; size.max(2 * m.input.len()).max(MIN_INPUT)];
    }
    m.input.as_ptr() as usize as u32
}

/// `platform_describe`.
pub fn describe(functions: &[Function], states: &[&StateDecl]) -> u64 {
    let m = module();
    call::describe(functions, states, &mut m.description);
    pack(m.description.as_ptr(), m.description.len())
}

/// `platform_call`.
pub fn call(functions: &[Function], states: &'static [&'static StateDecl], f: u32, ptr: u32, len: u32) -> u64 {
    let m = module();
    let base = m.input.as_ptr() as usize;
    let (start, len) = (ptr as usize, len as usize);
    let out = if start < base || start - base + len > m.input.len() {
        m.caller.fail("udf: the input frame is not inside the region platform_alloc returned");
        &m.caller.out[..]
    } else {
        let off = start - base;
        m.caller.call(functions, states, f, &m.input[off..off + len])
    };
    pack(out.as_ptr(), out.len())
}

/// Lists a module's functions and states and generates its ABI exports.
/// Each function is `"name" => kind(function)`, with kind one of `map`,
/// `filter`, `flat_map`, `key`, `timestamp`, `process`, `on_timer`,
/// `process_broadcast`, `migrate_state`,
/// `reduce`, `window_process`, `window_process_with_state`, `session_gap`,
/// `watermark`, `join`, `co_group`, `async_request` and `async_result`, or
/// `"name" => aggregate(Type)` for a
/// type that implements [`Aggregate`](crate::Aggregate), or
/// `"name" => trigger(Type)` for one that implements
/// [`Trigger`](crate::Trigger); names are unique
/// within a module. A module with keyed state (for `process`, `on_timer`
/// and `window_process_with_state` functions) lists its state handles
/// (statics) first, in `states: [...]`.
///
/// ```ignore
/// static SEEN: ValueState = ValueState::new("seen").ttl("1h");
///
/// platform_udf::module! {
///     states: [SEEN],
///     "split" => flat_map(split),
///     "dedup" => process(dedup),
/// }
/// ```
#[macro_export]
macro_rules! module {
    (states: [$($state:ident),* $(,)?], $($name:literal => $kind:ident($f:path)),+ $(,)?) => {
        static PLATFORM_UDF_STATES: &[&$crate::StateDecl] = &[$(&$state.decl),*];
        $crate::module!(@exports PLATFORM_UDF_STATES; $($name => $kind($f)),+);
    };
    ($($name:literal => $kind:ident($f:path)),+ $(,)?) => {
        $crate::module!(@exports &[]; $($name => $kind($f)),+);
    };
    (@exports $states:expr; $($name:literal => $kind:ident($f:path)),+) => {
        const PLATFORM_UDF_FUNCTIONS: &[$crate::Function] = &[$($crate::module!(@fn $name, $kind, $f)),+];

        #[no_mangle]
        pub extern "C" fn platform_abi_version() -> i32 {
            $crate::ABI_VERSION
        }

        #[no_mangle]
        pub extern "C" fn platform_alloc(size: u32) -> u32 {
            $crate::export::alloc(size)
        }

        #[no_mangle]
        pub extern "C" fn platform_describe() -> u64 {
            $crate::export::describe(PLATFORM_UDF_FUNCTIONS, $states)
        }

        /// A native test harness over the module's functions and states.
        #[cfg(not(target_arch = "wasm32"))]
        #[allow(dead_code)]
        fn platform_harness() -> $crate::Harness {
            $crate::Harness::new(PLATFORM_UDF_FUNCTIONS, $states)
        }

        #[no_mangle]
        pub extern "C" fn platform_call(function: u32, ptr: u32, len: u32) -> u64 {
            $crate::export::call(PLATFORM_UDF_FUNCTIONS, $states, function, ptr, len)
        }
    };
    (@fn $name:literal, map, $f:path) => { $crate::Function::Map($name, $f) };
    (@fn $name:literal, filter, $f:path) => { $crate::Function::Filter($name, $f) };
    (@fn $name:literal, flat_map, $f:path) => { $crate::Function::FlatMap($name, $f) };
    (@fn $name:literal, key, $f:path) => { $crate::Function::Key($name, $f) };
    (@fn $name:literal, timestamp, $f:path) => { $crate::Function::Timestamp($name, $f) };
    (@fn $name:literal, process, $f:path) => { $crate::Function::Process($name, $f, $crate::export::PROCESS) };
    (@fn $name:literal, on_timer, $f:path) => { $crate::Function::OnTimer($name, $f, $crate::export::ON_TIMER) };
    (@fn $name:literal, process_broadcast, $f:path) => {
        $crate::Function::ProcessBroadcast($name, $f, $crate::export::PROCESS_BROADCAST)
    };
    (@fn $name:literal, migrate_state, $f:path) => {
        $crate::Function::MigrateState($name, $f, $crate::export::MIGRATE_STATE)
    };
    (@fn $name:literal, aggregate, $f:path) => { $crate::Function::Aggregate($name, $crate::export::aggregate::<$f>) };
    (@fn $name:literal, reduce, $f:path) => { $crate::Function::Reduce($name, $f) };
    (@fn $name:literal, window_process, $f:path) => { $crate::Function::WindowProcess($name, $f) };
    (@fn $name:literal, window_process_with_state, $f:path) => {
        $crate::Function::WindowProcessWithState($name, $f, $crate::export::WINDOW_PROCESS_WITH_STATE)
    };
    (@fn $name:literal, session_gap, $f:path) => { $crate::Function::SessionGap($name, $f) };
    (@fn $name:literal, watermark, $f:path) => { $crate::Function::Watermark($name, $f) };
    (@fn $name:literal, join, $f:path) => { $crate::Function::Join($name, $f) };
    (@fn $name:literal, co_group, $f:path) => { $crate::Function::CoGroup($name, $f) };
    (@fn $name:literal, async_request, $f:path) => { $crate::Function::AsyncRequest($name, $f) };
    (@fn $name:literal, async_result, $f:path) => { $crate::Function::AsyncResult($name, $f) };
    (@fn $name:literal, trigger, $f:path) => { $crate::Function::Trigger($name, $crate::export::trigger::<$f>) };
}
