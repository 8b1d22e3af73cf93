# Builds $(NAME).wasm from index.ts of the including directory and the
# AssemblyScript SDK (sdk/assemblyscript) with asc; asconfig.json holds the
# compiler options. A module's Makefile sets NAME (and DEPS, more files the
# build depends on) and includes this file.
OUT ?= $(NAME).wasm
SDK ?= ../../sdk/assemblyscript
ASC ?= $(SDK)/node_modules/.bin/asc

$(OUT): index.ts $(DEPS) asconfig.json $(wildcard $(SDK)/assembly/*.ts) | $(ASC)
	$(ASC) --config asconfig.json --outFile $(OUT)

# The compiler is the SDK's npm dependency.
$(ASC):
	cd $(SDK) && npm ci

.PHONY: clean
clean:
	rm -f $(NAME).wasm
