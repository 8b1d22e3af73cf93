/*
 * wordcount-c: the flat map function split of udfs/wordcount, written with
 * the C SDK. It splits a record's text into lower-cased words by exactly the
 * rule of the Go module (README.md), with the Unicode tables in tables.h.
 */
#include <stdlib.h>

#include "platform_udf.h"
#include "tables.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The word being built; udf_emit copies it, so one buffer serves every
 * word. */
static uint8_t *word;
static size_t word_len, word_cap;

static void append(uint32_t c) {
	if (word_len + 4 > word_cap) {
		word_cap = word_cap ? 2 * word_cap : 256;
		word = realloc(word, word_cap);
		if (!word) abort();
	}
	uint8_t *p = word + word_len;
	if (c < 0x80) {
		p[0] = (uint8_t)c;
		word_len += 1;
	} else if (c < 0x800) {
		p[0] = (uint8_t)(0xc0 | c >> 6);
		p[1] = (uint8_t)(0x80 | (c & 0x3f));
		word_len += 2;
	} else if (c < 0x10000) {
		p[0] = (uint8_t)(0xe0 | c >> 12);
		p[1] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
		p[2] = (uint8_t)(0x80 | (c & 0x3f));
		word_len += 3;
	} else {
		p[0] = (uint8_t)(0xf0 | c >> 18);
		p[1] = (uint8_t)(0x80 | (c >> 12 & 0x3f));
		p[2] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
		p[3] = (uint8_t)(0x80 | (c & 0x3f));
		word_len += 4;
	}
}

static void emit_word(void) {
	if (!word_len) return;
	udf_bytes w = {word, word_len};
	udf_output out = {.set = UDF_SET_KEY, .key = w, .value = w};
	udf_emit(&out);
	word_len = 0;
}

/* decode reads the code point at s as Go's utf8.DecodeRune does: it returns
 * its length, or 0 for a byte that does not start a valid, shortest-form
 * encoding of a scalar value. */
static size_t decode(const uint8_t *s, size_t len, uint32_t *c) {
	uint8_t b0 = s[0], lo = 0x80, hi = 0xbf;
	size_t n;
	if (b0 < 0x80) {
		*c = b0;
		return 1;
	}
	if (b0 >= 0xc2 && b0 <= 0xdf) n = 2;
	else if (b0 >= 0xe0 && b0 <= 0xef) n = 3;
	else if (b0 >= 0xf0 && b0 <= 0xf4) n = 4;
	else return 0;
	if (b0 == 0xe0) lo = 0xa0;
	else if (b0 == 0xed) hi = 0x9f;
	else if (b0 == 0xf0) lo = 0x90;
	else if (b0 == 0xf4) hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi) return 0;
	uint32_t v = b0 & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	*c = v;
	return n;
}

/* is_word reports whether c is a letter or a decimal digit. */
static bool is_word(uint32_t c) {
	if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
	size_t lo = 0, hi = COUNT(word_ranges);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (word_ranges[mid][1] < c) lo = mid + 1;
		else hi = mid;
	}
	return lo < COUNT(word_ranges) && word_ranges[lo][0] <= c;
}

/* lower is the simple lower-case mapping of the word code point c. */
static uint32_t lower(uint32_t c) {
	if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
	size_t lo = 0, hi = COUNT(lower_runs);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (lower_runs[mid].hi < c) lo = mid + 1;
		else hi = mid;
	}
	if (lo < COUNT(lower_runs) && lower_runs[lo].lo <= c && (c - lower_runs[lo].lo) % lower_runs[lo].stride == 0)
		return (uint32_t)((int32_t)c + lower_runs[lo].delta);
	return c;
}

/* split emits one record per word of the value, with the word as its key and
 * its value and the input's timestamp and headers. */
static int split(const udf_record *in) {
	const uint8_t *s = in->value.data;
	size_t len = in->value.len;
	word_len = 0;
	while (len) {
		uint32_t c;
		size_t n = decode(s, len, &c);
		if (n && is_word(c)) {
			append(lower(c));
		} else {
			emit_word();
			n = n ? n : 1;
		}
		s += n;
		len -= n;
	}
	emit_word();
	return UDF_OK;
}

void udf_register(void) { udf_flat_map("split", split); }
