/*
 * avg-c: the window functions of udfs/avg, written with the C SDK, over JSON
 * records with a number field "amount": an incremental average (aggregate),
 * the record with the largest amount (reduce) and a count of records
 * (aggregate). The README says exactly what each writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform_udf.h"

/* mean is the accumulator of avg; its 16 bytes are the count, then the
 * sum's bits, little-endian, as the Go module stores them. */
typedef struct mean {
	int64_t count;
	double sum;
} mean;

/* amount reads the number after "amount": in a flat JSON object, as the Go
 * module does: an integer exactly, anything else as a float. */
static int amount(udf_bytes v, double *out) {
	static const char field[] = "\"amount\":";
	const size_t flen = sizeof field - 1;
	size_t i = 0;
	while (i + flen <= v.len && memcmp(v.data + i, field, flen) != 0) i++;
	if (i + flen > v.len) return udf_error("no \"amount\" field");
	const uint8_t *rest = v.data + i + flen;
	size_t left = v.len - i - flen, end = 0;
	while (left && *rest == ' ') rest++, left--;
	while (end < left && ((rest[end] >= '0' && rest[end] <= '9') || strchr("-.eE+", rest[end]) != NULL)) end++;
	if (end == 0) return udf_error("\"amount\" is not a number");
	bool neg = rest[0] == '-', whole = end > (size_t)neg;
	int64_t n = 0;
	for (size_t j = neg; j < end && whole; j++) {
		if (rest[j] < '0' || rest[j] > '9' || n > INT64_MAX / 10 - 9) whole = false;
		else n = n * 10 + (rest[j] - '0');
	}
	if (whole) {
		*out = (double)(neg ? -n : n);
		return UDF_OK;
	}
	char text[64];
	if (end >= sizeof text) return udf_error("\"amount\" is not a number");
	memcpy(text, rest, end);
	text[end] = 0;
	char *stop;
	*out = strtod(text, &stop);
	if (*stop) return udf_error("\"amount\" is not a number");
	return UDF_OK;
}

/* The result buffer: the SDK copies a result when result returns. */
static char out[512];
static size_t out_len;

static void put(const char *s, size_t n) {
	if (out_len + n < sizeof out) memcpy(out + out_len, s, n);
	out_len += n;
}

static void put_str(const char *s) { put(s, strlen(s)); }

static void put_int(int64_t v) {
	char digits[24], *p = digits + sizeof digits;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do *--p = (char)('0' + u % 10); while (u /= 10);
	if (v < 0) *--p = '-';
	put(p, (size_t)(digits + sizeof digits - p));
}

/* put_float writes x as Go's strconv.FormatFloat(x, 'f', -1, 64) does: the
 * fewest significant digits that read back as x, without an exponent. */
static void put_float(double x) {
	char e[32];
	for (int p = 1; p <= 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, x);
		if (strtod(e, NULL) == x) break;
	}
	char *s = e, digits[20];
	size_t nd = 0;
	if (*s == '-') put(s++, 1);
	for (; *s != 'e'; s++) {
		if (*s != '.') digits[nd++] = *s;
	}
	int exp = atoi(s + 1);
	if (exp < 0) {
		put_str("0.");
		for (int i = -1; i > exp; i--) put("0", 1);
		put(digits, nd);
		return;
	}
	for (int i = 0; i <= exp; i++) put(i < (int)nd ? &digits[i] : "0", 1);
	if ((int)nd > exp + 1) {
		put(".", 1);
		put(digits + exp + 1, nd - (size_t)exp - 1);
	}
}

/* put_json_string writes s as a JSON string, escaping quotes, backslashes
 * and control characters; other bytes pass as they are. */
static void put_json_string(udf_bytes s) {
	static const char hex[] = "0123456789abcdef";
	put("\"", 1);
	for (size_t i = 0; i < s.len; i++) {
		char c = (char)s.data[i];
		if (c == '"' || c == '\\') {
			put("\\", 1);
			put(&c, 1);
		} else if ((uint8_t)c < 0x20) {
			char esc[6] = {'\\', 'u', '0', '0', hex[(uint8_t)c >> 4], hex[c & 15]};
			put(esc, 6);
		} else {
			put(&c, 1);
		}
	}
	put("\"", 1);
}

static void mean_create(void *acc) { *(mean *)acc = (mean){0, 0}; }

static int mean_add(void *acc, const udf_record *r) {
	double v;
	if (amount(r->value, &v) != UDF_OK) return UDF_ERROR;
	((mean *)acc)->count++;
	((mean *)acc)->sum += v;
	return UDF_OK;
}

static int mean_merge(void *acc, const void *other) {
	((mean *)acc)->count += ((const mean *)other)->count;
	((mean *)acc)->sum += ((const mean *)other)->sum;
	return UDF_OK;
}

/* mean_result is {"key":"...","window_start":S,"window_end":E,"avg":A,"count":N}. */
static int mean_result(udf_bytes key, udf_window w, const void *acc, udf_bytes *value) {
	const mean *m = acc;
	out_len = 0;
	put_str("{\"key\":");
	put_json_string(key);
	put_str(",\"window_start\":");
	put_int(w.start);
	put_str(",\"window_end\":");
	put_int(w.end);
	put_str(",\"avg\":");
	put_float(m->sum / (double)m->count);
	put_str(",\"count\":");
	put_int(m->count);
	put("}", 1);
	if (out_len >= sizeof out) return udf_error("avg: result too long");
	*value = (udf_bytes){(const uint8_t *)out, out_len};
	return UDF_OK;
}

static void count_create(void *acc) { *(int64_t *)acc = 0; }

static int count_add(void *acc, const udf_record *r) {
	(void)r;
	++*(int64_t *)acc;
	return UDF_OK;
}

static int count_merge(void *acc, const void *other) {
	*(int64_t *)acc += *(const int64_t *)other;
	return UDF_OK;
}

static int count_result(udf_bytes key, udf_window w, const void *acc, udf_bytes *value) {
	(void)key;
	(void)w;
	out_len = 0;
	put_int(*(const int64_t *)acc);
	*value = (udf_bytes){(const uint8_t *)out, out_len};
	return UDF_OK;
}

/* largest keeps the record value with the larger amount (the earlier one on
 * a tie). */
static int largest(udf_bytes acc, udf_bytes value, udf_bytes *result) {
	double a, v;
	if (amount(acc, &a) != UDF_OK || amount(value, &v) != UDF_OK) return UDF_ERROR;
	*result = v > a ? value : acc;
	return UDF_OK;
}

static const udf_aggregate_fns avg_fns = {sizeof(mean), mean_create, mean_add, mean_merge, mean_result};
static const udf_aggregate_fns count_fns = {sizeof(int64_t), count_create, count_add, count_merge, count_result};

void udf_register(void) {
	udf_aggregate("avg", &avg_fns);
	udf_reduce("largest", largest);
	udf_aggregate("count", &count_fns);
}
