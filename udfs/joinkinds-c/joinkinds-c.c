/*
 * joinkinds-c: the join function pairs and the co_group function sides of
 * udfs/joinkinds, written with the C SDK, for the SDK tests: their outputs
 * show the key, the window, both sides' records and their timestamps, and
 * must be exactly the Go module's.
 */
#include <stdlib.h>
#include <string.h>

#include "platform_udf.h"

/* out is the buffer results are built in; udf_emit copies them. */
static struct {
	uint8_t *data;
	size_t len, cap;
} out;

static void append(const void *p, size_t n) {
	if (out.len + n > out.cap) {
		out.cap = 2 * (out.len + n);
		if (!(out.data = realloc(out.data, out.cap))) abort();
	}
	if (n) memcpy(out.data + out.len, p, n);
	out.len += n;
}

static void append_str(const char *s) { append(s, strlen(s)); }

/* append_int writes v in decimal, as Go's strconv.AppendInt. */
static void append_int(int64_t v) {
	char digits[20];
	int n = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do digits[n++] = (char)('0' + u % 10); while (u /= 10);
	if (v < 0) append("-", 1);
	while (n) append(&digits[--n], 1);
}

static void append_window(udf_window w) {
	append("|", 1);
	append_int(w.start);
	append("|", 1);
	append_int(w.end);
}

static void append_record(const udf_record *r) {
	append("|", 1);
	append(r->value.data, r->value.len);
	append("|", 1);
	append_int(r->timestamp);
}

static void append_side(const char *label, const udf_record *recs, size_t count) {
	append_str(label);
	append_int((int64_t)count);
	append(":", 1);
	for (size_t i = 0; i < count; i++) {
		if (i > 0) append(",", 1);
		append(recs[i].value.data, recs[i].value.len);
	}
}

/* pairs emits "key|start|end|left|left ts|right|right ts" for each pair;
 * nothing when the right value is "skip"; the line twice, the second time
 * with timestamp 7 and key "k2", when the left value is "two"; and fails the
 * group when the left value is "fail". */
static int pairs(udf_bytes key, udf_window w, const udf_record *left, const udf_record *right) {
	if (udf_bytes_equal(left->value, udf_str("fail"))) return udf_error("pairs: fail");
	if (udf_bytes_equal(right->value, udf_str("skip"))) return UDF_OK;
	out.len = 0;
	append(key.data, key.len);
	append_window(w);
	append_record(left);
	append_record(right);
	udf_output line = {.value = {out.data, out.len}};
	udf_emit(&line);
	if (udf_bytes_equal(left->value, udf_str("two"))) {
		udf_output again = {.set = UDF_SET_KEY | UDF_SET_TIMESTAMP, .key = udf_str("k2"), .value = line.value, .timestamp = 7};
		udf_emit(&again);
	}
	return UDF_OK;
}

/* sides emits one record per group, "key|start|end|L=n:v,v|R=m:v,v", the
 * values of each side in order. */
static int sides(udf_bytes key, udf_window w, const udf_record *left, size_t left_count, const udf_record *right,
		 size_t right_count) {
	out.len = 0;
	append(key.data, key.len);
	append_window(w);
	append_side("|L=", left, left_count);
	append_side("|R=", right, right_count);
	udf_output line = {.value = {out.data, out.len}};
	udf_emit(&line);
	return UDF_OK;
}

void udf_register(void) {
	udf_join("pairs", pairs);
	udf_co_group("sides", sides);
}
