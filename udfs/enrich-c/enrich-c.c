/*
 * enrich-c: the join function enrich of udfs/enrich, written with the C
 * SDK. It is one of the conformance UDFs and must produce the Go module's
 * bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "platform_udf.h"

/* tier_field starts the value of a profile's tier. */
static const char tier_field[] = "\"tier\":\"";

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

/* string_field sets *field to the bytes after the first occurrence of name
 * in v up to the next quote, and returns whether there are such bytes. */
static bool string_field(udf_bytes v, const char *name, udf_bytes *field) {
	size_t n = strlen(name);
	for (size_t i = 0; i + n <= v.len; i++) {
		if (memcmp(v.data + i, name, n) != 0) continue;
		const uint8_t *start = v.data + i + n;
		const uint8_t *end = memchr(start, '"', v.len - i - n);
		if (!end) return false;
		*field = (udf_bytes){start, (size_t)(end - start)};
		return true;
	}
	return false;
}

/* enrich emits {"order":<order>,"tier":"<tier>"} for an order (left) and a
 * profile (right) of the same user: the order's JSON unchanged and the
 * profile's tier, the bytes between "tier":" and the next quote. The result
 * keeps the user as key and the later of both timestamps. */
static int enrich(udf_bytes key, udf_window w, const udf_record *order, const udf_record *profile) {
	(void)key;
	(void)w;
	udf_bytes tier;
	if (!string_field(profile->value, tier_field, &tier)) return udf_error("enrich: profile without tier");
	out.len = 0;
	append_str("{\"order\":");
	append(order->value.data, order->value.len);
	append_str(",\"tier\":\"");
	append(tier.data, tier.len);
	append_str("\"}");
	udf_output result = {.value = {out.data, out.len}};
	udf_emit(&result);
	return UDF_OK;
}

void udf_register(void) { udf_join("enrich", enrich); }
