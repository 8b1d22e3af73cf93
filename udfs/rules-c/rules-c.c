/*
 * rules-c: the broadcast state pattern of udfs/rules, written with the C
 * SDK: a rule stream, broadcast to every subtask, sets a threshold per rule
 * name (update), and events keyed by user are matched against the rules as
 * they are when each event arrives (match). Its output is byte for byte
 * the Go module's.
 */
#include "platform_json.h"
#include "platform_udf.h"

/* rules maps a rule name to its threshold, in decimal; hits counts a
 * user's matches, in decimal. */
static udf_state rules, hits;

/* decimal writes v into buf (at least 20 bytes) and returns its bytes. */
static udf_bytes decimal(int64_t v, uint8_t *buf) {
	uint8_t tmp[20];
	size_t n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (uint8_t)('0' + u % 10);
		u /= 10;
	} while (u);
	size_t len = 0;
	if (v < 0) buf[len++] = '-';
	while (n) buf[len++] = tmp[--n];
	return (udf_bytes){buf, len};
}

static const char *const rule_path[] = {"rule"};
static const char *const min_path[] = {"min"};
static const char *const amount_path[] = {"amount"};

/* update applies rule records in order: {"rule": name, "min": n} sets the
 * rule's threshold, {"rule": name} without min deletes the rule. */
static int update(udf_context *ctx, const udf_record *records, size_t count) {
	static uint8_t name[256];
	uint8_t num[24];
	for (size_t i = 0; i < count; i++) {
		size_t len;
		if (!udf_json_get_string(records[i].value, rule_path, 1, name, sizeof name, &len) || len == 0)
			return udf_error("no string field \"rule\"");
		udf_bytes rule = {name, len};
		int64_t min;
		if (udf_json_get_int(records[i].value, min_path, 1, &min)) {
			udf_map_put(ctx, rules, rule, decimal(min, num));
		} else {
			udf_map_remove(ctx, rules, rule);
		}
	}
	return UDF_OK;
}

/* match emits, for each event of a user and each rule (in name order) whose
 * threshold its amount reaches, {"user", "rule", "amount", "hits"}. */
static int match(udf_context *ctx, udf_bytes user, const udf_record *records, size_t count) {
	static udf_json_writer w;
	int64_t n = 0;
	udf_bytes v;
	if (udf_value_get(ctx, hits, &v)) udf_json_parse_int(v, &n);
	for (size_t i = 0; i < count; i++) {
		int64_t amount;
		if (!udf_json_get_int(records[i].value, amount_path, 1, &amount))
			return udf_error("no integer field \"amount\"");
		const udf_entry *entries;
		size_t k = udf_map_entries(ctx, rules, &entries);
		for (size_t j = 0; j < k; j++) {
			int64_t min = 0;
			udf_json_parse_int(entries[j].value, &min);
			if (amount < min) continue;
			n++;
			udf_json_reset(&w);
			udf_json_begin_object(&w);
			udf_json_key(&w, "user");
			udf_json_string(&w, user);
			udf_json_key(&w, "rule");
			udf_json_string(&w, entries[j].key);
			udf_json_key(&w, "amount");
			udf_json_int(&w, amount);
			udf_json_key(&w, "hits");
			udf_json_int(&w, n);
			udf_json_end_object(&w);
			udf_output out = {.set = UDF_SET_KEY | UDF_SET_TIMESTAMP | UDF_SET_HEADERS, .key = user,
					  .value = udf_json_bytes(&w), .timestamp = records[i].timestamp};
			udf_emit(&out);
		}
	}
	uint8_t num[24];
	udf_value_set(ctx, hits, decimal(n, num));
	return UDF_OK;
}

void udf_register(void) {
	rules = udf_broadcast_state("rules");
	hits = udf_value_state("hits", NULL);
	udf_process_broadcast("update", update);
	udf_process("match", match);
}
