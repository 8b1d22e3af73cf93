/*
 * platform_json.h: reading fields of JSON values and building JSON values
 * without allocating per record, for UDFs built with the C SDK. It is the C
 * twin of the Go SDK's sdk/go/json and reads and writes exactly the same
 * bytes. Compile platform_json.c with your module (udfs/c.mk does).
 *
 * udf_json_get and the typed getters scan the document from its start to
 * the value a path names and stop there, decoding nothing they do not
 * return. They check the syntax of what they walk through: the objects and
 * arrays on the path up to the value, the keys, the value they return and
 * the comma or bracket after it; a value they skip over is only checked to
 * be a string, number or literal that ends, or an object or array whose
 * brackets balance. Malformed input makes them return false; they never
 * read outside data.
 *
 * A path is an array of NUL-terminated keys: each is the key of a member
 * of an object or, where the value is an array, the decimal index of an
 * element ("0" is the first). UDF_JSON_PATH("a", "b") expands to such an
 * array and its length:
 *
 *     int64_t price;
 *     if (!udf_json_get_int(in->value, UDF_JSON_PATH("price"), &price)) return udf_error("no price");
 *
 * A udf_json_writer appends JSON to a buffer it reuses from record to
 * record (it grows it with realloc and aborts when memory runs out).
 */
#ifndef PLATFORM_JSON_H
#define PLATFORM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform_udf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of JSON values. */
typedef enum udf_json_kind {
	UDF_JSON_INVALID,
	UDF_JSON_NULL,
	UDF_JSON_BOOL,
	UDF_JSON_NUMBER,
	UDF_JSON_STRING,
	UDF_JSON_ARRAY,
	UDF_JSON_OBJECT,
} udf_json_kind;

/* UDF_JSON_PATH(...) is a path of keys and its length, for the getters'
 * (path, depth) arguments. */
#define UDF_JSON_PATH(...) \
	((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* udf_json_get sets *value to the raw bytes of the value at path in data (a
 * string with its quotes and escapes, as written), pointing into data, and
 * *kind to its kind (either may be NULL). A key is compared with a member's
 * name after unescaping; of several members with that name, the first
 * counts. A depth of 0 is data's value itself. It returns false when a key
 * or index is missing, a value on the path is not an object or array, or
 * the input is malformed. */
bool udf_json_get(udf_bytes data, const char *const *path, size_t depth, udf_bytes *value, udf_json_kind *kind);

/* udf_json_lookup finds the values of several members of the object data
 * in one pass, the first member of each name: values[k] and kinds[k] are
 * those of the member named keys[k], or {0} and UDF_JSON_INVALID. It stops
 * as soon as it has found them all, or at malformed input, and returns how
 * many it found. Each value it finds is exactly what udf_json_get(data,
 * UDF_JSON_PATH(keys[k]), ...) finds: it makes the same checks on the way,
 * in one scan instead of one per key (the Go SDK's json.Lookup). */
size_t udf_json_lookup(udf_bytes data, const char *const *keys, size_t n, udf_bytes *values, udf_json_kind *kinds);

/* udf_json_get_int reads the number at path as an int64_t: false when there
 * is none, or it has a fraction or an exponent, or does not fit. */
bool udf_json_get_int(udf_bytes data, const char *const *path, size_t depth, int64_t *out);

/* udf_json_get_float reads the number at path as the nearest double: false
 * when there is none or it is out of a double's range. */
bool udf_json_get_float(udf_bytes data, const char *const *path, size_t depth, double *out);

/* udf_json_get_bool reads the boolean at path. */
bool udf_json_get_bool(udf_bytes data, const char *const *path, size_t depth, bool *out);

/* udf_json_get_string unescapes the string at path into buf, of cap bytes,
 * and sets *len to its length. It returns false when there is no string at
 * path or it has an invalid escape, and also when it does not fit: *len is
 * then the length it needs (call again with a buffer that large). Bytes
 * that are not UTF-8 are copied as they are; an escaped lone UTF-16
 * surrogate becomes U+FFFD. */
bool udf_json_get_string(udf_bytes data, const char *const *path, size_t depth, uint8_t *buf, size_t cap, size_t *len);

/* udf_json_unescape decodes the contents raw of a string, between its
 * quotes, into buf as udf_json_get_string does. */
bool udf_json_unescape(udf_bytes raw, uint8_t *buf, size_t cap, size_t *len);

/* udf_json_parse_int and udf_json_parse_float read a number that
 * udf_json_get returned. */
bool udf_json_parse_int(udf_bytes v, int64_t *out);
bool udf_json_parse_float(udf_bytes v, double *out);

/* A udf_json_writer appends a JSON value to its buffer: objects and arrays,
 * their keys and values, with the commas between members and elements.
 * Zero-initialise it ({0}); udf_json_reset empties it and keeps its memory.
 * The value written is (udf_bytes){w.data, w.len}, valid until the next
 * write. It does not check that its calls make a valid value. */
typedef struct udf_json_writer {
	uint8_t *data;
	size_t len, cap;
	bool more;
} udf_json_writer;

void udf_json_reset(udf_json_writer *w);
udf_bytes udf_json_bytes(const udf_json_writer *w);
void udf_json_begin_object(udf_json_writer *w);
void udf_json_end_object(udf_json_writer *w);
void udf_json_begin_array(udf_json_writer *w);
void udf_json_end_array(udf_json_writer *w);
/* udf_json_key writes a member's key, escaped, and its colon. */
void udf_json_key(udf_json_writer *w, const char *key);
/* udf_json_string writes s as a JSON string: '"' and '\\' escaped by a
 * backslash, \b \f \n \r \t by their short escapes, the other bytes below
 * 0x20 as \u00xx (lower-case hexadecimal), every other byte as it is. */
void udf_json_string(udf_json_writer *w, udf_bytes s);
void udf_json_int(udf_json_writer *w, int64_t v);
/* udf_json_float writes v in the fewest digits that read back as it,
 * without an exponent (Go's strconv.FormatFloat(v, 'f', -1, 64)); NaN and
 * the infinities, which JSON cannot write, as null. */
void udf_json_float(udf_json_writer *w, double v);
void udf_json_bool(udf_json_writer *w, bool v);
void udf_json_null(udf_json_writer *w);
/* udf_json_raw writes v, a JSON value, as it is. */
void udf_json_raw(udf_json_writer *w, udf_bytes v);

#ifdef __cplusplus
}
#endif

#endif
