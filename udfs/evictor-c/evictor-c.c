/*
 * evictor-c: the custom window evictors of udfs/evictor, written with the C
 * SDK: near_newest keeps the records whose integer field n is within 10 of
 * the newest record's, top2 the two records of greatest n. A record whose
 * value is "crash" traps the call (udfs/evictor's panics, which the Go SDK
 * turns into the window's error).
 */
#include <stdlib.h>
#include <string.h>

#include "platform_json.h"
#include "platform_udf.h"

/* near is how far from the newest record's n a record's may be. */
#define NEAR 10

static const char *const n_path[] = {"n"};

/* ns holds the records' n, up to the window's count. */
static int64_t *ns;
static size_t ns_cap;

/* no_integer fails the window with "record <i>: no integer n". */
static int no_integer(size_t i) {
	char msg[48] = "record ", digits[24];
	size_t len = 7, nd = 0;
	do {
		digits[nd++] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	while (nd) msg[len++] = digits[--nd];
	memcpy(msg + len, ": no integer n", 14);
	return udf_error_bytes((const uint8_t *)msg, len + 14);
}

/* numbers reads every record's integer field n into ns; a record without
 * one fails the window. */
static int numbers(const udf_eviction *e) {
	if (e->count > ns_cap) {
		ns_cap = 2 * e->count;
		ns = realloc(ns, ns_cap * sizeof *ns);
		if (!ns) __builtin_trap();
	}
	for (size_t i = 0; i < e->count; i++) {
		udf_bytes v = e->records[i].value;
		if (v.len == 5 && memcmp(v.data, "crash", 5) == 0) __builtin_trap();
		if (!udf_json_get_int(v, n_path, 1, &ns[i])) return no_integer(i);
	}
	return UDF_OK;
}

/* near_newest evicts the records whose n is more than NEAR from the newest
 * record's (the one of the greatest timestamp, the last of equal ones). */
static int near_newest(udf_eviction *e) {
	int status = numbers(e);
	if (status != UDF_OK || e->count == 0) return status;
	size_t newest = 0;
	for (size_t i = 0; i < e->count; i++) {
		if (e->records[i].timestamp >= e->records[newest].timestamp) newest = i;
	}
	int64_t top = ns[newest];
	for (size_t i = 0; i < e->count; i++) {
		/* The distance in uint64_t is exact for any two int64_t. */
		int64_t n = ns[i];
		if ((n > top && (uint64_t)n - (uint64_t)top > NEAR) || (n < top && (uint64_t)top - (uint64_t)n > NEAR))
			udf_evict(e, i);
	}
	return UDF_OK;
}

/* top2 keeps the two records of greatest n, the earlier of equal ones. */
static int top2(udf_eviction *e) {
	int status = numbers(e);
	if (status != UDF_OK) return status;
	long first = -1, second = -1;
	for (size_t i = 0; i < e->count; i++) {
		if (first < 0 || ns[i] > ns[first]) {
			second = first;
			first = (long)i;
		} else if (second < 0 || ns[i] > ns[second]) {
			second = (long)i;
		}
	}
	for (size_t i = 0; i < e->count; i++) {
		if ((long)i != first && (long)i != second) udf_evict(e, i);
	}
	return UDF_OK;
}

void udf_register(void) {
	udf_evictor("near_newest", near_newest);
	udf_evictor("top2", top2);
}
