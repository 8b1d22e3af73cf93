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
	rm -f $(NAME).wasm $(NAME)-harness

# harness builds $(NAME).c natively with the SDK's test harness
# (sdk/c/platform_harness.h) into $(HARNESS), a program that runs a harness
# script from standard input and prints its transcript.
HARNESS ?= $(NAME)-harness
NATIVE_CC ?= cc
HARNESS_SOURCES := $(SDK)/platform_udf.c $(SDK)/platform_json.c $(SDK)/platform_harness.c $(SDK)/platform_harness_script.c

.PHONY: harness
harness: $(HARNESS)
$(HARNESS): $(NAME).c $(DEPS) $(HARNESS_SOURCES) $(SDK)/platform_udf.h $(SDK)/platform_json.h $(SDK)/platform_harness.h
	$(NATIVE_CC) -O1 -g -Wall -Wextra -I$(SDK) -o $(HARNESS) $(NAME).c $(HARNESS_SOURCES)
