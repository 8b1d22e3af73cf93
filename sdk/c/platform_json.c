/*
 * platform_json.c: the JSON scanner and writer of platform_json.h.
 */
#include "platform_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NONE is the offset that means "malformed". */
#define NONE ((size_t)-1)

static size_t skip_space(const uint8_t *d, size_t n, size_t i) {
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t')) i++;
	return i;
}

/* string_end is the offset after the closing quote of the string at d[i];
 * *escaped tells whether it has escapes. */
static size_t string_end(const uint8_t *d, size_t n, size_t i, bool *escaped) {
	*escaped = false;
	for (i++; i < n; i++) {
		if (d[i] == '"') return i + 1;
		if (d[i] == '\\') {
			*escaped = true;
			i++;
		} else if (d[i] < 0x20) {
			return NONE;
		}
	}
	return NONE;
}

static size_t digits_end(const uint8_t *d, size_t n, size_t i) {
	while (i < n && d[i] >= '0' && d[i] <= '9') i++;
	return i;
}

static size_t number_end(const uint8_t *d, size_t n, size_t i) {
	if (i < n && d[i] == '-') i++;
	if (i >= n) return NONE;
	if (d[i] == '0') i++;
	else if (d[i] >= '1' && d[i] <= '9') i = digits_end(d, n, i);
	else return NONE;
	if (i < n && d[i] == '.') {
		size_t j = digits_end(d, n, i + 1);
		if (j == i + 1) return NONE;
		i = j;
	}
	if (i < n && (d[i] == 'e' || d[i] == 'E')) {
		i++;
		if (i < n && (d[i] == '+' || d[i] == '-')) i++;
		size_t j = digits_end(d, n, i);
		if (j == i) return NONE;
		i = j;
	}
	return i;
}

/* container_end is the offset after the object or array at d[i], whose
 * brackets must balance. */
static size_t container_end(const uint8_t *d, size_t n, size_t i) {
	size_t depth = 0;
	bool escaped;
	for (; i < n; i++) {
		switch (d[i]) {
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (--depth == 0) return i + 1;
			break;
		case '"':
			i = string_end(d, n, i, &escaped);
			if (i == NONE) return NONE;
			i--;
			break;
		}
	}
	return NONE;
}

static size_t literal_end(const uint8_t *d, size_t n, size_t i, const char *lit) {
	size_t l = strlen(lit);
	if (n - i < l || memcmp(d + i, lit, l) != 0) return NONE;
	return i + l;
}

/* value_end is the offset after the value at d[i]; *kind is its kind. */
static size_t value_end(const uint8_t *d, size_t n, size_t i, udf_json_kind *kind) {
	bool escaped;
	if (i >= n) return NONE;
	switch (d[i]) {
	case '"':
		*kind = UDF_JSON_STRING;
		return string_end(d, n, i, &escaped);
	case '{':
		*kind = UDF_JSON_OBJECT;
		return container_end(d, n, i);
	case '[':
		*kind = UDF_JSON_ARRAY;
		return container_end(d, n, i);
	case 't':
		*kind = UDF_JSON_BOOL;
		return literal_end(d, n, i, "true");
	case 'f':
		*kind = UDF_JSON_BOOL;
		return literal_end(d, n, i, "false");
	case 'n':
		*kind = UDF_JSON_NULL;
		return literal_end(d, n, i, "null");
	}
	*kind = UDF_JSON_NUMBER;
	return number_end(d, n, i);
}

static int32_t hex4(const uint8_t *d, size_t n, size_t i) {
	if (i + 4 > n) return -1;
	int32_t r = 0;
	for (size_t k = i; k < i + 4; k++) {
		uint8_t c = d[k];
		if (c >= '0' && c <= '9') c -= '0';
		else if (c >= 'a' && c <= 'f') c -= 'a' - 10;
		else if (c >= 'A' && c <= 'F') c -= 'A' - 10;
		else return -1;
		r = r << 4 | c;
	}
	return r;
}

/* unescape decodes the escape at d[i] (a backslash) into its code point
 * *cp; it returns its length, 0 when it is invalid. */
static size_t unescape(const uint8_t *d, size_t n, size_t i, uint32_t *cp) {
	if (i + 1 >= n) return 0;
	switch (d[i + 1]) {
	case '"':
	case '\\':
	case '/':
		*cp = d[i + 1];
		return 2;
	case 'b':
		*cp = '\b';
		return 2;
	case 'f':
		*cp = '\f';
		return 2;
	case 'n':
		*cp = '\n';
		return 2;
	case 'r':
		*cp = '\r';
		return 2;
	case 't':
		*cp = '\t';
		return 2;
	case 'u': {
		int32_t hi = hex4(d, n, i + 2);
		if (hi < 0) return 0;
		if (hi < 0xd800 || hi >= 0xe000) {
			*cp = (uint32_t)hi;
			return 6;
		}
		if (hi < 0xdc00 && i + 11 < n && d[i + 6] == '\\' && d[i + 7] == 'u') {
			int32_t lo = hex4(d, n, i + 8);
			if (lo >= 0xdc00 && lo < 0xe000) {
				*cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
				return 12;
			}
		}
		*cp = 0xfffd;
		return 6;
	}
	}
	return 0;
}

/* utf8 encodes cp into b and returns its length. */
static size_t utf8(uint32_t cp, uint8_t b[4]) {
	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (uint8_t)(0xf0 | cp >> 18);
	b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* escaped_equal tells whether the string contents name, which has escapes,
 * unescape to key. */
static bool escaped_equal(const uint8_t *name, size_t n, const char *key, size_t klen) {
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		if (name[i] != '\\') {
			if (k >= klen || (uint8_t)key[k] != name[i]) return false;
			i++;
			k++;
			continue;
		}
		uint32_t cp;
		size_t l = unescape(name, n, i, &cp);
		if (!l) return false;
		uint8_t b[4];
		size_t w = utf8(cp, b);
		if (k + w > klen || memcmp(key + k, b, w) != 0) return false;
		i += l;
		k += w;
	}
	return k == klen;
}

/* member is the offset of the value of the first member named key of the
 * object at d[i]. */
static size_t member(const uint8_t *d, size_t n, size_t i, const char *key) {
	size_t klen = strlen(key);
	udf_json_kind kind;
	i = skip_space(d, n, i + 1);
	while (i < n && d[i] == '"') {
		bool escaped;
		size_t end = string_end(d, n, i, &escaped);
		if (end == NONE) return NONE;
		const uint8_t *name = d + i + 1;
		size_t nlen = end - i - 2;
		bool match = escaped ? escaped_equal(name, nlen, key, klen) : nlen == klen && memcmp(name, key, klen) == 0;
		i = skip_space(d, n, end);
		if (i >= n || d[i] != ':') return NONE;
		i = skip_space(d, n, i + 1);
		if (match) return i;
		end = value_end(d, n, i, &kind);
		if (end == NONE) return NONE;
		i = skip_space(d, n, end);
		if (i >= n || d[i] != ',') return NONE;
		i = skip_space(d, n, i + 1);
	}
	return NONE;
}

/* element is the offset of element index (decimal) of the array at d[i]. */
static size_t element(const uint8_t *d, size_t n, size_t i, const char *index) {
	size_t len = strlen(index), k = 0;
	udf_json_kind kind;
	if (len == 0 || len > 9 || (len > 1 && index[0] == '0')) return NONE;
	for (size_t j = 0; j < len; j++) {
		if (index[j] < '0' || index[j] > '9') return NONE;
		k = k * 10 + (size_t)(index[j] - '0');
	}
	i = skip_space(d, n, i + 1);
	if (i < n && d[i] == ']') return NONE;
	for (; k > 0; k--) {
		size_t end = value_end(d, n, i, &kind);
		if (end == NONE) return NONE;
		i = skip_space(d, n, end);
		if (i >= n || d[i] != ',') return NONE;
		i = skip_space(d, n, i + 1);
	}
	return i < n ? i : NONE;
}

bool udf_json_get(udf_bytes data, const char *const *path, size_t depth, udf_bytes *value, udf_json_kind *kind) {
	const uint8_t *d = data.data;
	size_t n = data.len, i = skip_space(d, n, 0);
	uint8_t closer = 0;
	udf_json_kind k;
	for (size_t p = 0; p < depth; p++) {
		if (i >= n) return false;
		if (d[i] == '{') {
			i = member(d, n, i, path[p]);
			closer = '}';
		} else if (d[i] == '[') {
			i = element(d, n, i, path[p]);
			closer = ']';
		} else {
			return false;
		}
		if (i == NONE) return false;
	}
	size_t end = value_end(d, n, i, &k);
	if (end == NONE) return false;
	size_t next = skip_space(d, n, end);
	if (closer == 0 ? next != n : next == n || (d[next] != ',' && d[next] != closer)) return false;
	if (value) *value = (udf_bytes){d + i, end - i};
	if (kind) *kind = k;
	return true;
}

size_t udf_json_lookup(udf_bytes data, const char *const *keys, size_t nkeys, udf_bytes *values, udf_json_kind *kinds) {
	const uint8_t *d = data.data;
	size_t n = data.len, found = 0, i = skip_space(d, n, 0);
	for (size_t k = 0; k < nkeys; k++) {
		values[k] = (udf_bytes){0};
		kinds[k] = UDF_JSON_INVALID;
	}
	if (i >= n || d[i] != '{' || nkeys == 0) return 0;
	i = skip_space(d, n, i + 1);
	while (i < n && d[i] == '"') {
		bool escaped;
		size_t end = string_end(d, n, i, &escaped);
		if (end == NONE) return found;
		const uint8_t *name = d + i + 1;
		size_t nlen = end - i - 2;
		size_t match = NONE;
		for (size_t k = 0; k < nkeys; k++) {
			if (kinds[k] != UDF_JSON_INVALID) continue;
			size_t klen = strlen(keys[k]);
			if (escaped ? escaped_equal(name, nlen, keys[k], klen) : nlen == klen && memcmp(name, keys[k], klen) == 0) {
				match = k;
				break;
			}
		}
		i = skip_space(d, n, end);
		if (i >= n || d[i] != ':') return found;
		i = skip_space(d, n, i + 1);
		udf_json_kind kind;
		size_t v = i;
		end = value_end(d, n, i, &kind);
		if (end == NONE) return found;
		i = skip_space(d, n, end);
		if (i >= n || (d[i] != ',' && d[i] != '}')) return found;
		if (match != NONE) {
			values[match] = (udf_bytes){d + v, end - v};
			kinds[match] = kind;
			if (++found == nkeys) return found;
		}
		if (d[i] == '}') return found;
		i = skip_space(d, n, i + 1);
	}
	return found;
}

bool udf_json_parse_int(udf_bytes v, int64_t *out) {
	const uint8_t *d = v.data;
	size_t n = v.len, i = 0;
	bool neg = n > 0 && d[0] == '-';
	if (neg) i++;
	if (i == n || (n - i > 1 && d[i] == '0')) return false;
	uint64_t u = 0;
	for (; i < n; i++) {
		if (d[i] < '0' || d[i] > '9' || u > (UINT64_MAX - 9) / 10) return false;
		u = u * 10 + (d[i] - '0');
	}
	if (neg) {
		if (u > (uint64_t)1 << 63) return false;
		*out = (int64_t)(0 - u);
	} else {
		if (u > INT64_MAX) return false;
		*out = (int64_t)u;
	}
	return true;
}

static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
			       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool udf_json_parse_float(udf_bytes v, double *out) {
	const uint8_t *d = v.data;
	size_t n = v.len, i = 0;
	if (number_end(d, n, 0) != n) return false;
	/* Exact when the digits fit 2^53 and the power of ten is exact. */
	bool neg = d[0] == '-';
	if (neg) i++;
	uint64_t mant = 0;
	int exp = 0, digits = 0;
	for (; i < n && d[i] >= '0' && d[i] <= '9'; i++) {
		if (mant || d[i] != '0') digits++;
		mant = mant * 10 + (d[i] - '0');
	}
	if (i < n && d[i] == '.') {
		for (i++; i < n && d[i] >= '0' && d[i] <= '9'; i++) {
			if (mant || d[i] != '0') digits++;
			mant = mant * 10 + (d[i] - '0');
			exp--;
		}
	}
	if (i < n) {
		int e = 0;
		bool eneg = false;
		i++;
		if (d[i] == '+' || d[i] == '-') eneg = d[i++] == '-';
		for (; i < n && e < 10000; i++) e = e * 10 + (d[i] - '0');
		exp += eneg ? -e : e;
	}
	if (digits <= 15 && mant < (uint64_t)1 << 53 && exp >= -22 && exp <= 22) {
		double f = (double)mant;
		f = exp < 0 ? f / pow10[-exp] : f * pow10[exp];
		*out = neg ? -f : f;
		return true;
	}
	char small[64], *text = small;
	if (n >= sizeof small && !(text = malloc(n + 1))) abort();
	memcpy(text, d, n);
	text[n] = 0;
	double f = strtod(text, NULL);
	if (text != small) free(text);
	if (isinf(f)) return false;
	*out = f;
	return true;
}

bool udf_json_get_int(udf_bytes data, const char *const *path, size_t depth, int64_t *out) {
	udf_bytes v;
	udf_json_kind k;
	return udf_json_get(data, path, depth, &v, &k) && k == UDF_JSON_NUMBER && udf_json_parse_int(v, out);
}

bool udf_json_get_float(udf_bytes data, const char *const *path, size_t depth, double *out) {
	udf_bytes v;
	udf_json_kind k;
	return udf_json_get(data, path, depth, &v, &k) && k == UDF_JSON_NUMBER && udf_json_parse_float(v, out);
}

bool udf_json_get_bool(udf_bytes data, const char *const *path, size_t depth, bool *out) {
	udf_bytes v;
	udf_json_kind k;
	if (!udf_json_get(data, path, depth, &v, &k) || k != UDF_JSON_BOOL) return false;
	*out = v.data[0] == 't';
	return true;
}

bool udf_json_unescape(udf_bytes raw, uint8_t *buf, size_t cap, size_t *len) {
	const uint8_t *d = raw.data;
	size_t n = raw.len, w = 0;
	bool fits = true;
	for (size_t i = 0; i < n;) {
		uint8_t c = d[i];
		if (c != '\\') {
			if (c < 0x20 || c == '"') return false;
			if (w < cap) buf[w] = c;
			else fits = false;
			w++;
			i++;
			continue;
		}
		uint32_t cp;
		size_t l = unescape(d, n, i, &cp);
		if (!l) return false;
		uint8_t b[4];
		size_t bl = utf8(cp, b);
		if (w + bl <= cap) memcpy(buf + w, b, bl);
		else fits = false;
		w += bl;
		i += l;
	}
	*len = w;
	return fits;
}

bool udf_json_get_string(udf_bytes data, const char *const *path, size_t depth, uint8_t *buf, size_t cap, size_t *len) {
	udf_bytes v;
	udf_json_kind k;
	*len = 0;
	if (!udf_json_get(data, path, depth, &v, &k) || k != UDF_JSON_STRING) return false;
	return udf_json_unescape((udf_bytes){v.data + 1, v.len - 2}, buf, cap, len);
}

/* The writer. */

static void reserve(udf_json_writer *w, size_t n) {
	if (w->len + n <= w->cap) return;
	size_t c = w->cap ? 2 * w->cap : 256;
	while (c < w->len + n) c *= 2;
	if (!(w->data = realloc(w->data, c))) abort();
	w->cap = c;
}

static void put(udf_json_writer *w, const void *p, size_t n) {
	reserve(w, n);
	if (n) memcpy(w->data + w->len, p, n);
	w->len += n;
}

static void comma(udf_json_writer *w) {
	if (w->more) put(w, ",", 1);
}

void udf_json_reset(udf_json_writer *w) {
	w->len = 0;
	w->more = false;
}

udf_bytes udf_json_bytes(const udf_json_writer *w) { return (udf_bytes){w->data, w->len}; }

void udf_json_begin_object(udf_json_writer *w) {
	comma(w);
	put(w, "{", 1);
	w->more = false;
}

void udf_json_end_object(udf_json_writer *w) {
	put(w, "}", 1);
	w->more = true;
}

void udf_json_begin_array(udf_json_writer *w) {
	comma(w);
	put(w, "[", 1);
	w->more = false;
}

void udf_json_end_array(udf_json_writer *w) {
	put(w, "]", 1);
	w->more = true;
}

static void quoted(udf_json_writer *w, const uint8_t *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	reserve(w, n + 2);
	w->data[w->len++] = '"';
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\') continue;
		put(w, s + start, i - start);
		char esc[6] = {'\\', (char)c, '0', '0', hex[c >> 4], hex[c & 15]};
		size_t l = 2;
		switch (c) {
		case '"':
		case '\\':
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			esc[1] = 'u';
			l = 6;
		}
		put(w, esc, l);
		start = i + 1;
	}
	put(w, s + start, n - start);
	put(w, "\"", 1);
}

void udf_json_key(udf_json_writer *w, const char *key) {
	comma(w);
	quoted(w, (const uint8_t *)key, strlen(key));
	put(w, ":", 1);
	w->more = false;
}

void udf_json_string(udf_json_writer *w, udf_bytes s) {
	comma(w);
	quoted(w, s.data, s.len);
	w->more = true;
}

void udf_json_int(udf_json_writer *w, int64_t v) {
	char digits[24], *p = digits + sizeof digits;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do *--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0) *--p = '-';
	comma(w);
	put(w, p, (size_t)(digits + sizeof digits - p));
	w->more = true;
}

/* short_decimal finds v as m / 10^k with at most 15 digits in m and k as
 * small as it can be, the case of most numbers a UDF writes, much faster
 * than the search below, which formats and reads back up to 17 times. Every
 * decimal of at most 15 significant digits reads back as a double of its
 * own (DBL_DIG), so when m / 10^k reads back as v it is the shortest
 * decimal that does (the Go SDK's writer takes the same steps). */
static bool short_decimal(double v, int64_t *m, int *k, bool *too_long) {
	const double limit = 1e15;
	*too_long = false;
	if (v == 0 || v >= limit || v <= -limit) return false;
	for (int i = 0; i < (int)(sizeof pow10 / sizeof pow10[0]); i++) {
		double t = v * pow10[i];
		if (t >= limit || t <= -limit) {
			/* Each decimal of at most 15 digits is m / 10^k for a k tried. */
			*too_long = true;
			return false;
		}
		int64_t n = (int64_t)__builtin_rint(t); /* to even, as the default rounding */
		if ((double)n / pow10[i] == v) {
			*m = n;
			*k = i;
			return true;
		}
	}
	return false;
}

void udf_json_float(udf_json_writer *w, double v) {
	comma(w);
	w->more = true;
	if (isnan(v) || isinf(v)) {
		put(w, "null", 4);
		return;
	}
	int64_t m;
	int k;
	bool too_long;
	if (short_decimal(v, &m, &k, &too_long)) {
		/* v is m / 10^k: the integer's digits with a point k from the end. */
		if (m < 0) {
			put(w, "-", 1);
			m = -m;
		}
		char digits[24], *p = digits + sizeof digits;
		for (int i = 0; m > 0 || i <= k; i++) {
			if (i == k && k > 0) *--p = '.';
			*--p = (char)('0' + m % 10);
			m /= 10;
		}
		put(w, p, (size_t)(digits + sizeof digits - p));
		return;
	}
	/* The shortest of %.<p>e that reads back as v, rewritten without its
	 * exponent. */
	char e[32];
	/* short_decimal has ruled out 15 digits or fewer where it says so. */
	for (int p = too_long ? 16 : 1; p <= 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, v);
		if (strtod(e, NULL) == v) break;
	}
	char *s = e, digits[20];
	size_t nd = 0;
	if (*s == '-') put(w, s++, 1);
	for (; *s != 'e'; s++) {
		if (*s != '.') digits[nd++] = *s;
	}
	int exp = atoi(s + 1);
	if (nd == 1 && digits[0] == '0') {
		put(w, "0", 1);
		return;
	}
	if (exp < 0) {
		put(w, "0.", 2);
		for (int i = -1; i > exp; i--) put(w, "0", 1);
		put(w, digits, nd);
		return;
	}
	for (int i = 0; i <= exp; i++) put(w, i < (int)nd ? &digits[i] : "0", 1);
	if ((int)nd > exp + 1) {
		put(w, ".", 1);
		put(w, digits + exp + 1, nd - (size_t)exp - 1);
	}
}

void udf_json_bool(udf_json_writer *w, bool v) {
	comma(w);
	if (v) put(w, "true", 4);
	else put(w, "false", 5);
	w->more = true;
}

void udf_json_null(udf_json_writer *w) {
	comma(w);
	put(w, "null", 4);
	w->more = true;
}

void udf_json_raw(udf_json_writer *w, udf_bytes v) {
	comma(w);
	put(w, v.data, v.len);
	w->more = true;
}
