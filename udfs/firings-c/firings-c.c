/*
 * firings-c: the window process function count of udfs/firings, written
 * with the C SDK: it keeps per-window state (Flink's ProcessWindowFunction
 * windowState()) to count how often each window of each key fired, so that
 * a record late within the allowed lateness, which fires the window again,
 * is reported as the window's second firing. Like udfs/firings, it also has
 * rearm, a deliberately wrong function for the platform's tests.
 */
#include <stdlib.h>
#include <string.h>

#include "platform_udf.h"

/* fired is the number of times a window of a key has fired, 8 bytes
 * little-endian. */
static udf_state fired;

/* line is the buffer outputs and errors are built in, len bytes long; it
 * grows with the longest key. */
static uint8_t *line;
static size_t len, cap;

static void put(const void *p, size_t n) {
	if (len + n > cap) {
		cap = 2 * (len + n);
		if (!(line = realloc(line, cap))) abort();
	}
	if (n) memcpy(line + len, p, n);
	len += n;
}

static void put_str(const char *s) { put(s, strlen(s)); }

/* put_uint appends v in decimal. */
static void put_uint(uint64_t v) {
	char digits[20];
	int n = sizeof digits;
	do digits[--n] = (char)('0' + v % 10); while (v /= 10);
	put(digits + n, sizeof digits - (size_t)n);
}

/* put_int appends v in decimal, with a minus sign when negative. */
static void put_int(int64_t v) {
	if (v < 0) {
		put_str("-");
		put_uint(-(uint64_t)v);
		return;
	}
	put_uint((uint64_t)v);
}

/* count emits "<key> [<start>,<end>) firing <n>: <m> records" for the n-th
 * firing of a window holding m records. */
static int count(udf_context *ctx, udf_bytes key, udf_window w, const udf_record *records, size_t m) {
	(void)records;
	len = 0;
	uint64_t n = 1;
	udf_bytes v;
	if (udf_value_get(ctx, fired, &v)) {
		if (v.len != 8) {
			put_str("state fired of key \"");
			put(key.data, key.len);
			put_str("\": ");
			put_uint(v.len);
			put_str(" bytes, want 8");
			return udf_error_bytes(line, len);
		}
		uint64_t prev = 0;
		for (int i = 7; i >= 0; i--) prev = prev << 8 | v.data[i];
		n = prev + 1;
	}
	uint8_t buf[8];
	for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(n >> (8 * i));
	udf_value_set(ctx, fired, (udf_bytes){buf, sizeof buf});
	put(key.data, key.len);
	put_str(" [");
	put_int(w.start);
	put_str(",");
	put_int(w.end);
	put_str(") firing ");
	put_uint(n);
	put_str(": ");
	put_uint(m);
	put_str(" records");
	udf_emit_value(ctx, (udf_bytes){line, len});
	return UDF_OK;
}

/* import_timer_register is the platform's timer import, called directly:
 * the SDK refuses timers in window process functions before the platform
 * does. */
__attribute__((import_module("platform"), import_name("timer_register"))) void
import_timer_register(uint32_t domain, int64_t timestamp);

/* rearm is deliberately wrong, for the platform's tests: it registers an
 * event-time timer at the window's end, which a window process function may
 * not do, so the platform fails its call. */
static int rearm(udf_bytes key, udf_window w, const udf_record *records, size_t m) {
	(void)key;
	(void)records;
	(void)m;
	import_timer_register(UDF_EVENT_TIME, w.end);
	return UDF_OK;
}

void udf_register(void) {
	fired = udf_value_state("fired", NULL);
	udf_window_process_with_state("count", count);
	udf_window_process("rearm", rearm);
}
