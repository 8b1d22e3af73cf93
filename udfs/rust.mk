# Builds $(NAME).wasm from the Rust sources of the including directory, with
# the Rust SDK (sdk/rust). Debian's cargo and rustc have the wasm32 standard
# library. A module's Makefile sets NAME and includes this file.
OUT ?= $(NAME).wasm
CARGO ?= /usr/bin/cargo
export RUSTC ?= /usr/bin/rustc
export RUSTDOC ?= /usr/bin/rustdoc
TARGET := wasm32-unknown-unknown

# cargo decides itself what is out of date.
.PHONY: $(OUT) clean test
$(OUT):
	$(CARGO) build --offline --release --target $(TARGET)
	cp target/$(TARGET)/release/$(subst -,_,$(NAME)).wasm $(OUT)

clean:
	rm -rf target $(NAME).wasm

# test runs the crate's native tests (cargo test, with the SDK's Harness for
# keyed functions); TEST_FLAGS="-p platform-udf" runs the SDK's own.
test:
	$(CARGO) test --offline $(TEST_FLAGS)
