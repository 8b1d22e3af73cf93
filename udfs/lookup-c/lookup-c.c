/*
 * lookup-c: the async lookup functions of udfs/lookup, written with the C
 * SDK. It is one of the conformance UDFs and must produce the Go module's
 * bytes.
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

/* ask_kv asks for the order's user in the KV bucket "users". */
static int ask_kv(const udf_record *in) {
	udf_bytes user;
	if (!string_field(in->value, "\"user\":\"", &user)) return udf_error("lookup: order without user");
	udf_ask_kv(udf_str("users"), user);
	return UDF_OK;
}

/* ask_http asks for the URL the order names. */
static int ask_http(const udf_record *in) {
	udf_bytes url;
	if (!string_field(in->value, "\"url\":\"", &url)) return udf_error("lookup: order without url");
	udf_ask_http(url);
	return UDF_OK;
}

/* join emits {"order":<order>,"profile":<profile or null>} with the
 * order's key and timestamp. */
static int join(const udf_record *in, const udf_lookup_result *results, size_t count) {
	out.len = 0;
	append_str("{\"order\":");
	append(in->value.data, in->value.len);
	append_str(",\"profile\":");
	if (count == 1 && results[0].found) {
		append(results[0].value.data, results[0].value.len);
	} else {
		append_str("null");
	}
	append_str("}");
	udf_output result = {.value = {out.data, out.len}};
	udf_emit(&result);
	return UDF_OK;
}

void udf_register(void) {
	udf_async_request("ask_kv", ask_kv);
	udf_async_request("ask_http", ask_http);
	udf_async_result("join", join);
}
