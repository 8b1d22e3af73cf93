/*
 * windowkinds-c: a window_process, a session_gap and a watermark function
 * written with the C SDK, for the SDK tests; the README says what each
 * writes, the same in every language.
 */
#include <stdio.h>
#include <string.h>

#include "platform_udf.h"

/* summary emits "<key>:<start>:<end>:<records>" for the window, then each
 * record's value with the key "v" and the timestamp 7. */
static int summary(udf_bytes key, udf_window w, const udf_record *records, size_t count) {
	static char head[256];
	int n = snprintf(head, sizeof head, "%.*s:%lld:%lld:%zu", (int)key.len, (const char *)key.data,
			 (long long)w.start, (long long)w.end, count);
	udf_output out = {.value = {(const uint8_t *)head, (size_t)n}};
	udf_emit(&out);
	for (size_t i = 0; i < count; i++) {
		if (udf_bytes_equal(records[i].value, udf_str("!"))) return udf_error("bad record");
		udf_output rec = {.set = UDF_SET_KEY | UDF_SET_TIMESTAMP, .key = udf_str("v"), .value = records[i].value, .timestamp = 7};
		udf_emit(&rec);
	}
	return UDF_OK;
}

/* gap is 1000 ms per byte of the value; "!" fails. */
static int gap(const udf_record *in, int64_t *gap) {
	if (udf_bytes_equal(in->value, udf_str("!"))) return udf_error("bad gap");
	*gap = 1000 * (int64_t)in->value.len;
	return UDF_OK;
}

/* beat emits a watermark at the timestamp of a record "beat"; "!" fails. */
static int beat(const udf_record *in, bool *emit, int64_t *watermark) {
	if (udf_bytes_equal(in->value, udf_str("!"))) return udf_error("bad beat");
	*emit = udf_bytes_equal(in->value, udf_str("beat"));
	*watermark = in->timestamp;
	return UDF_OK;
}

void udf_register(void) {
	udf_window_process("summary", summary);
	udf_session_gap("gap", gap);
	udf_watermark("beat", beat);
}
