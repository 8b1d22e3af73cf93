/*
 * dedup-v2: a second version of udfs/dedup-c, with the same function and
 * state: it emits the first record of a key not seen within an hour, its
 * JSON object value marked with "v":2 as its first member, so that the
 * output shows which version wrote it (a canary's test).
 */
#include "platform_udf.h"

/* seen marks a key as seen, as in version 1. */
static udf_state seen;

/* marked holds the value dedup emits; udf_emit_record copies it. */
static uint8_t marked[4096];

static const char mark[] = "{\"v\":2,";

/* dedup passes on the first record of a key not seen within the TTL, its
 * value marked, and drops the others. A value that is not a non-empty JSON
 * object, or too long to mark, is an error. */
static int dedup(udf_context *ctx, udf_bytes key, const udf_record *records, size_t count) {
	(void)key;
	(void)count;
	udf_bytes have;
	if (udf_value_get(ctx, seen, &have)) return UDF_OK;
	udf_value_set(ctx, seen, (udf_bytes){(const uint8_t *)"\1", 1});
	udf_record out = records[0];
	size_t n = out.value.len, m = sizeof mark - 1;
	if (n < 3 || out.value.data[0] != '{' || n - 1 + m > sizeof marked) return udf_error("dedup-v2: the value is not a JSON object it can mark");
	__builtin_memcpy(marked, mark, m);
	__builtin_memcpy(marked + m, out.value.data + 1, n - 1);
	out.value = (udf_bytes){marked, n - 1 + m};
	udf_emit_record(ctx, &out);
	return UDF_OK;
}

void udf_register(void) {
	seen = udf_value_state("seen", "1h");
	udf_process("dedup", dedup);
}
