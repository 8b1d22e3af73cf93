/* A UDF module with one map function, shout. Build it with make. */
#include <stdlib.h>

#include "platform_udf.h"

/* shout upper-cases the ASCII letters of the value and appends "!"; an empty
 * value fails the record. The output buffer is reused: the SDK copies the
 * output when shout returns. */
static int shout(const udf_record *in, udf_output *out) {
	static uint8_t *buf;
	static size_t cap;
	if (in->value.len == 0) return udf_error("empty value");
	if (in->value.len + 1 > cap) {
		cap = 2 * in->value.len + 1;
		buf = realloc(buf, cap);
		if (!buf) abort();
	}
	for (size_t i = 0; i < in->value.len; i++) {
		uint8_t c = in->value.data[i];
		buf[i] = c >= 'a' && c <= 'z' ? (uint8_t)(c - 32) : c;
	}
	buf[in->value.len] = '!';
	out->value = (udf_bytes){buf, in->value.len + 1};
	return UDF_OK;
}

void udf_register(void) { udf_map("shout", shout); }
