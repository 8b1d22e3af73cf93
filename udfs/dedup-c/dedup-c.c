/*
 * dedup-c: the keyed process function dedup of udfs/dedup, written with the
 * C SDK: it emits a record only the first time its key is seen within an
 * hour, keeping one value state with a TTL per key.
 */
#include "platform_udf.h"

/* seen marks a key as seen; the platform forgets the mark an hour after it
 * was written (or as the job's state_ttl says). */
static udf_state seen;

/* dedup passes on the first record of a key not seen within the TTL and
 * drops the others. */
static int dedup(udf_context *ctx, udf_bytes key, const udf_record *records, size_t count) {
	(void)key;
	(void)count;
	udf_bytes mark;
	if (udf_value_get(ctx, seen, &mark)) return UDF_OK;
	udf_value_set(ctx, seen, (udf_bytes){(const uint8_t *)"\1", 1});
	udf_emit_record(ctx, &records[0]);
	return UDF_OK;
}

void udf_register(void) {
	seen = udf_value_state("seen", "1h");
	udf_process("dedup", dedup);
}
