/*
 * timeout-c: Flink's KeyedProcessFunction example (CountWithTimeoutFunction)
 * written with the C SDK: it counts each key's records and emits the count
 * once a key has had no record for a minute of event time, with a value
 * state and an event-time timer per record. The state has a TTL of an hour
 * of processing time: a key quiet for that long is forgotten, and its timer
 * then emits nothing.
 */
#include "platform_udf.h"

/* A minute of event time, in milliseconds. */
#define QUIET 60000

/* counts holds a key's count and the timestamp of its last record, two
 * 8-byte little-endian integers. */
static udf_state counts;

static uint64_t get_le(const uint8_t *p) {
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
	return v;
}

static void put_le(uint8_t *p, uint64_t v) {
	for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* read_counts reads a key's count and last timestamp; false when it has
 * none, or an error when the state is not 16 bytes. */
static int read_counts(udf_context *ctx, uint64_t *count, int64_t *last, bool *found) {
	udf_bytes v;
	*found = udf_value_get(ctx, counts, &v);
	if (!*found) return UDF_OK;
	if (v.len != 16) return udf_error("state counts: want 16 bytes");
	*count = get_le(v.data);
	*last = (int64_t)get_le(v.data + 8);
	return UDF_OK;
}

/* count adds a key's records to its count and sets a timer a minute after
 * each one; only the last one's timer will report. */
static int count(udf_context *ctx, udf_bytes key, const udf_record *records, size_t n) {
	(void)key;
	uint64_t c = 0;
	int64_t last = 0;
	bool found;
	if (read_counts(ctx, &c, &last, &found) != UDF_OK) return UDF_ERROR;
	for (size_t i = 0; i < n; i++) {
		c++;
		last = records[i].timestamp;
		udf_register_timer(ctx, UDF_EVENT_TIME, last + QUIET);
	}
	uint8_t buf[16];
	put_le(buf, c);
	put_le(buf + 8, (uint64_t)last);
	udf_value_set(ctx, counts, (udf_bytes){buf, sizeof buf});
	return UDF_OK;
}

/* timeout emits the key's count, as decimal text, when the timer is the
 * last record's, and forgets the key. */
static int timeout(udf_context *ctx, udf_bytes key, udf_timer timer) {
	(void)key;
	uint64_t c = 0;
	int64_t last = 0;
	bool found;
	if (read_counts(ctx, &c, &last, &found) != UDF_OK) return UDF_ERROR;
	if (!found || timer.timestamp != last + QUIET) return UDF_OK;
	uint8_t digits[20];
	size_t at = sizeof digits;
	do digits[--at] = (uint8_t)('0' + c % 10); while (c /= 10);
	udf_emit_value(ctx, (udf_bytes){digits + at, sizeof digits - at});
	udf_state_clear(ctx, counts);
	return UDF_OK;
}

void udf_register(void) {
	counts = udf_value_state("counts", "1h");
	udf_process("count", count);
	udf_on_timer("timeout", timeout);
}
