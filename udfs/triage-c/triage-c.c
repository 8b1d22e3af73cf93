/*
 * triage-c: the keyed process function triage of udfs/triage, written with
 * the C SDK: orders with an integer "amount" below 900 go on, larger ones to
 * the side output "large", and orders without a readable amount to
 * "invalid", each as it is.
 */
#include <string.h>

#include "platform_udf.h"

/* The amount from which an order is large. */
#define LARGE_AMOUNT 900

/* amount reads the 1 to 9 digits right after the first "amount": of v into
 * *n, as the Go module does, and returns whether there were any. */
static bool amount(udf_bytes v, long long *n) {
	static const char field[] = "\"amount\":";
	const size_t flen = sizeof field - 1;
	for (size_t i = 0; i + flen <= v.len; i++) {
		if (memcmp(v.data + i, field, flen) != 0) continue;
		int digits = 0;
		*n = 0;
		for (size_t j = i + flen; j < v.len && digits < 9 && v.data[j] >= '0' && v.data[j] <= '9'; j++) {
			*n = *n * 10 + (v.data[j] - '0');
			digits++;
		}
		return digits > 0;
	}
	return false;
}

/* triage passes each order on, or sends it to "large" or "invalid", as it
 * is. */
static int triage(udf_context *ctx, udf_bytes key, const udf_record *records, size_t count) {
	(void)key;
	for (size_t i = 0; i < count; i++) {
		long long n;
		if (!amount(records[i].value, &n)) udf_side_output_record(ctx, "invalid", &records[i]);
		else if (n >= LARGE_AMOUNT) udf_side_output_record(ctx, "large", &records[i]);
		else udf_emit_record(ctx, &records[i]);
	}
	return UDF_OK;
}

void udf_register(void) { udf_process("triage", triage); }
