/*
 * timers-c: a module for the tests of the C SDK's native harness
 * (sdk/c/platform_harness.h), the twin of timers-rust and timers-as: value,
 * list and map state with and without a TTL, event and processing-time
 * timers, a timer that on_timer registers, a side output, an error and a
 * broadcast state. udfs/testdata/harness/timers.script drives it.
 */
#include <string.h>

#include "platform_udf.h"

static udf_state count, seen, last, rules;

/* line is the buffer outputs are built in. */
static uint8_t line[4096];
static size_t len;

static void put(const void *p, size_t n) {
	if (len + n > sizeof line) n = sizeof line - len;
	memcpy(line + len, p, n);
	len += n;
}

static void put_str(const char *s) { put(s, strlen(s)); }

static void put_int(int64_t v) {
	char digits[24];
	size_t at = sizeof digits;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do digits[--at] = (char)('0' + u % 10); while (u /= 10);
	if (v < 0) digits[--at] = '-';
	put(digits + at, sizeof digits - at);
}

/* track counts a key's records (count, 10s TTL), keeps their values (seen,
 * 10s TTL) and its last one (last, no TTL), sets an event-time timer 100 ms
 * after each record and a processing-time timer a second after now, and
 * emits "<rule>count=<n>" with the broadcast rule "prefix". A first record
 * "bad" fails the group. */
static int track(udf_context *ctx, udf_bytes key, const udf_record *records, size_t n) {
	(void)key;
	if (udf_bytes_equal(records[0].value, udf_str("bad"))) return udf_error("bad record");
	for (size_t i = 0; i < n; i++) {
		udf_list_append(ctx, seen, records[i].value);
		udf_register_timer(ctx, UDF_EVENT_TIME, records[i].timestamp + 100);
	}
	udf_bytes v;
	uint8_t c = udf_value_get(ctx, count, &v) && v.len == 1 ? v.data[0] : 0;
	c += (uint8_t)n;
	udf_value_set(ctx, count, (udf_bytes){&c, 1});
	udf_map_put(ctx, last, udf_str("value"), records[n - 1].value);
	udf_register_timer(ctx, UDF_PROCESSING_TIME, udf_context_processing_time(ctx) + 1000);
	len = 0;
	udf_bytes rule;
	if (udf_map_get(ctx, rules, udf_str("prefix"), &rule)) put(rule.data, rule.len);
	put_str("count=");
	put_int(c);
	udf_emit_value(ctx, (udf_bytes){line, len});
	return UDF_OK;
}

/* fire emits "event=<ts>,seen=<values>" for an event-time timer, and sets
 * one a millisecond later for each at x10; it emits "proc=<ts>" on the
 * side output proc for a processing-time timer. */
static int fire(udf_context *ctx, udf_bytes key, udf_timer timer) {
	(void)key;
	len = 0;
	if (timer.domain == UDF_PROCESSING_TIME) {
		put_str("proc=");
		put_int(timer.timestamp);
		udf_side_output_value(ctx, "proc", (udf_bytes){line, len});
		return UDF_OK;
	}
	put_str("event=");
	put_int(timer.timestamp);
	put_str(",seen=");
	const udf_bytes *values;
	size_t n = udf_list_get(ctx, seen, &values);
	for (size_t i = 0; i < n; i++) {
		if (i) put_str(",");
		put(values[i].data, values[i].len);
	}
	udf_emit_value(ctx, (udf_bytes){line, len});
	if (timer.timestamp % 100 == 10) udf_register_timer(ctx, UDF_EVENT_TIME, timer.timestamp + 1);
	return UDF_OK;
}

/* set_rules sets the broadcast rule "prefix" to each record's value. */
static int set_rules(udf_context *ctx, const udf_record *records, size_t n) {
	for (size_t i = 0; i < n; i++) udf_map_put(ctx, rules, udf_str("prefix"), records[i].value);
	return UDF_OK;
}

void udf_register(void) {
	count = udf_value_state("count", "10s");
	seen = udf_list_state("seen", "10s");
	last = udf_map_state("last", NULL);
	rules = udf_broadcast_state("rules");
	udf_process("track", track);
	udf_on_timer("fire", fire);
	udf_process_broadcast("rules", set_rules);
}
