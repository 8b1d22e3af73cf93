/work/wt-async/udfs/lookup-rust/target/wasm32-unknown-unknown/release/deps/lookup_rust.wasm: lib.rs

/work/wt-async/udfs/lookup-rust/target/wasm32-unknown-unknown/release/deps/lookup_rust.d: lib.rs

lib.rs:
