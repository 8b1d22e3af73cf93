# Builds $(NAME).wasm from $(NAME).c of the including directory and the C SDK
# (sdk/c: platform_udf.c, and platform_json.c, whose functions the linker
# drops unless the module calls them), a WASI reactor built with clang and
# wasi-libc. A module's Makefile
# sets NAME (and DEPS, more files the build depends on) and includes this
# file.
OUT ?= $(NAME).wasm
SDK ?= ../../sdk/c
CC := clang
CFLAGS ?= -O2 -Wall -Wextra

$(OUT): $(NAME).c $(DEPS) $(SDK)/platform_udf.c $(SDK)/platform_udf.h $(SDK)/platform_json.c $(SDK)/platform_json.h
	$(CC) --target=wasm32-wasi -mexec-model=reactor $(CFLAGS) -I$(SDK) -Wl,--strip-all -o $(OUT) $(NAME).c $(SDK)/platform_udf.c $(SDK)/platform_json.c

.PHONY: clean
clean:
	rm -f $(NAME).wasm
