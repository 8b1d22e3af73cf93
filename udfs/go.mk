# Builds $(NAME).wasm from the Go sources of the including directory, with
# the Go SDK (sdk/go). A module's Makefile sets NAME and includes this file.
OUT ?= $(NAME).wasm

# go build decides itself what is out of date.
.PHONY: $(OUT) clean
$(OUT):
	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o $(OUT) .

clean:
	rm -f $(NAME).wasm
