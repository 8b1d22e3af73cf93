/work/wt-async/udfs/lookup-rust/target/wasm32-unknown-unknown/release/deps/platform_udf-305caef44e34de3a.rmeta: /work/wt-async/sdk/rust/src/lib.rs /work/wt-async/sdk/rust/src/call.rs /work/wt-async/sdk/rust/src/frame.rs /work/wt-async/sdk/rust/src/json.rs /work/wt-async/sdk/rust/src/join.rs /work/wt-async/sdk/rust/src/keyed.rs /work/wt-async/sdk/rust/src/log.rs /work/wt-async/sdk/rust/src/lookup.rs /work/wt-async/sdk/rust/src/record.rs /work/wt-async/sdk/rust/src/state.rs /work/wt-async/sdk/rust/src/window.rs /work/wt-async/sdk/rust/src/window_state.rs /work/wt-async/sdk/rust/src/export.rs

/work/wt-async/udfs/lookup-rust/target/wasm32-unknown-unknown/release/deps/libplatform_udf-305caef44e34de3a.rlib: /work/wt-async/sdk/rust/src/lib.rs /work/wt-async/sdk/rust/src/call.rs /work/wt-async/sdk/rust/src/frame.rs /work/wt-async/sdk/rust/src/json.rs /work/wt-async/sdk/rust/src/join.rs /work/wt-async/sdk/rust/src/keyed.rs /work/wt-async/sdk/rust/src/log.rs /work/wt-async/sdk/rust/src/lookup.rs /work/wt-async/sdk/rust/src/record.rs /work/wt-async/sdk/rust/src/state.rs /work/wt-async/sdk/rust/src/window.rs /work/wt-async/sdk/rust/src/window_state.rs /work/wt-async/sdk/rust/src/export.rs

/work/wt-async/udfs/lookup-rust/target/wasm32-unknown-unknown/release/deps/platform_udf-305caef44e34de3a.d: /work/wt-async/sdk/rust/src/lib.rs /work/wt-async/sdk/rust/src/call.rs /work/wt-async/sdk/rust/src/frame.rs /work/wt-async/sdk/rust/src/json.rs /work/wt-async/sdk/rust/src/join.rs /work/wt-async/sdk/rust/src/keyed.rs /work/wt-async/sdk/rust/src/log.rs /work/wt-async/sdk/rust/src/lookup.rs /work/wt-async/sdk/rust/src/record.rs /work/wt-async/sdk/rust/src/state.rs /work/wt-async/sdk/rust/src/window.rs /work/wt-async/sdk/rust/src/window_state.rs /work/wt-async/sdk/rust/src/export.rs

/work/wt-async/sdk/rust/src/lib.rs:
/work/wt-async/sdk/rust/src/call.rs:
/work/wt-async/sdk/rust/src/frame.rs:
/work/wt-async/sdk/rust/src/json.rs:
/work/wt-async/sdk/rust/src/join.rs:
/work/wt-async/sdk/rust/src/keyed.rs:
/work/wt-async/sdk/rust/src/log.rs:
/work/wt-async/sdk/rust/src/lookup.rs:
/work/wt-async/sdk/rust/src/record.rs:
/work/wt-async/sdk/rust/src/state.rs:
/work/wt-async/sdk/rust/src/window.rs:
/work/wt-async/sdk/rust/src/window_state.rs:
/work/wt-async/sdk/rust/src/export.rs:
