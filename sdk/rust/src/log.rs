/// The level of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Level {
    /// Debug.
    Debug = 0,
    /// Info.
    Info = 1,
    /// Warn.
    Warn = 2,
    /// Error.
    Error = 3,
}

/// Writes one line into the platform's logs at a level, tagged with the
/// module, job and operator (the `platform.log` import).
pub fn log(level: Level, msg: &str) {
    host::log(level as i32, msg);
}

#[cfg(target_arch = "wasm32")]
mod host {
    #[link(wasm_import_module = "platform")]
    extern "C" {
        #[link_name = "log"]
        fn platform_log(level: i32, ptr: *const u8, len: usize);
    }

    pub(super) fn log(level: i32, msg: &str) {
        // SAFETY: the host only reads len bytes at ptr during the call.
        unsafe { platform_log(level, msg.as_ptr(), msg.len()) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod host {
    pub(super) fn log(level: i32, msg: &str) {
        eprintln!("{} {}", level, msg);
    }
}
