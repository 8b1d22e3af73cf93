/*
 * kinds-c: a function of every record kind, written with the C SDK, for the
 * platform's tests and as a reference of the SDK. The README says what each
 * function does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform_udf.h"

/* swap exchanges the key and the value. */
static int swap(const udf_record *in, udf_output *out) {
	out->set = UDF_SET_KEY;
	out->key = in->value;
	out->value = in->key;
	return UDF_OK;
}

/* delay moves the timestamp one second later. */
static int delay(const udf_record *in, udf_output *out) {
	out->set = UDF_SET_TIMESTAMP;
	out->timestamp = in->timestamp + 1000;
	return UDF_OK;
}

/* annotate appends a header "length" holding the value's length in decimal.
 * The buffers are reused: the SDK copies the output when annotate returns. */
static int annotate(const udf_record *in, udf_output *out) {
	static udf_header *headers;
	static size_t cap;
	static char digits[24];
	if (in->header_count + 1 > cap) {
		cap = in->header_count + 1;
		headers = realloc(headers, cap * sizeof *headers);
		if (!headers) abort();
	}
	memcpy(headers, in->headers, in->header_count * sizeof *headers);
	char *p = digits + sizeof digits;
	size_t v = in->value.len;
	do *--p = (char)('0' + v % 10); while (v /= 10);
	headers[in->header_count] = (udf_header){udf_str("length"), {(const uint8_t *)p, (size_t)(digits + sizeof digits - p)}};
	out->set = UDF_SET_HEADERS;
	out->header_count = in->header_count + 1;
	out->headers = headers;
	return UDF_OK;
}

/* crash traps on the value "crash" and passes other records through. */
static int crash(const udf_record *in, udf_output *out) {
	(void)out;
	if (udf_bytes_equal(in->value, udf_str("crash"))) __builtin_trap();
	return UDF_OK;
}

/* log_value writes the value to the platform's logs at info level and passes
 * the record through. */
static int log_value(const udf_record *in, udf_output *out) {
	(void)out;
	static char *line;
	line = realloc(line, in->value.len + 1);
	if (!line) abort();
	memcpy(line, in->value.data, in->value.len);
	line[in->value.len] = 0;
	udf_log(UDF_INFO, line);
	return UDF_OK;
}

/* nonempty keeps the records whose value is not empty. */
static int nonempty(const udf_record *in, bool *keep) {
	*keep = in->value.len > 0;
	return UDF_OK;
}

/* fields emits one record per comma-separated field of the value, keeping the
 * key, timestamp and headers. A field "!" fails the record, and none of its
 * fields are emitted. */
static int fields(const udf_record *in) {
	const uint8_t *p = in->value.data, *end = p + in->value.len;
	for (;;) {
		const uint8_t *comma = memchr(p, ',', (size_t)(end - p));
		udf_output out = {.value = {p, (size_t)((comma ? comma : end) - p)}};
		if (udf_bytes_equal(out.value, udf_str("!"))) return udf_error("field \"!\" is not allowed");
		udf_emit(&out);
		if (!comma) return UDF_OK;
		p = comma + 1;
	}
}

/* by_value makes the value the key. */
static int by_value(const udf_record *in, udf_bytes *key) {
	*key = in->value;
	return UDF_OK;
}

/* parse_time reads the timestamp from the value, decimal milliseconds since
 * the epoch; a value that is not a number fails the record. */
static int parse_time(const udf_record *in, int64_t *ts) {
	char text[24];
	if (in->value.len == 0 || in->value.len >= sizeof text) return udf_error("not a decimal number");
	memcpy(text, in->value.data, in->value.len);
	text[in->value.len] = 0;
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	bool signed_digit = text[0] == '+' || text[0] == '-' || (text[0] >= '0' && text[0] <= '9');
	if (*end || !signed_digit || errno == ERANGE) return udf_error("not a decimal number");
	*ts = v;
	return UDF_OK;
}

void udf_register(void) {
	udf_map("swap", swap);
	udf_map("delay", delay);
	udf_map("annotate", annotate);
	udf_map("crash", crash);
	udf_map("log", log_value);
	udf_filter("nonempty", nonempty);
	udf_flat_map("fields", fields);
	udf_key("by_value", by_value);
	udf_timestamp("parse_time", parse_time);
}
