/*
 * platform_harness_script.c: a main() that runs a harness script
 * (platform_harness.h) from standard input and writes a transcript to
 * standard output, so that a module's keyed functions can be tested with
 * a script and its exact expected transcript. The format is the SDK
 * README's (Testing your function); each line is a step:
 *
 *     on_timer <function>                 the on_timer function
 *     process <function> <key> <value>@<ts> ...
 *     broadcast <function> <value>@<ts> ...
 *     watermark <ms>                      advance the watermark, fire timers
 *     now <ms>                            set processing time, fire timers
 *     value <state> <key>                 a value state, "= <value>" or "= none"
 *     list <state> <key>                  a list state, "= <v1> <v2> ..."
 *     timers                              the registered timers
 *
 * The transcript echoes each step as "> <step>", then its outputs, one a
 * line: "out <index> <key> <ts> <value>", "side <tag> <index> <key> <ts>
 * <value>" or "error <index> <message>"; a failed step is "fail <message>".
 * Blank lines and lines starting with # are skipped. Keys and values are
 * words without spaces; output bytes that are not a word of printable
 * ASCII are written as 0x and their hex digits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform_harness.h"

#define MAX_WORDS 256

static udf_bytes word(const char *s) { return (udf_bytes){(const uint8_t *)s, strlen(s)}; }

/* print_bytes writes b as it is when it is a word of printable ASCII, else
 * as 0x and its hex digits. */
static void print_bytes(udf_bytes b) {
	bool word = b.len > 0;
	for (size_t i = 0; i < b.len; i++) word = word && b.data[i] > 0x20 && b.data[i] < 0x7f;
	if (word) {
		fwrite(b.data, 1, b.len, stdout);
		return;
	}
	printf("0x");
	for (size_t i = 0; i < b.len; i++) printf("%02x", b.data[i]);
}

static void print_outputs(long n, const udf_harness_output *outs) {
	if (n < 0) {
		printf("fail %s\n", udf_harness_error());
		return;
	}
	for (long i = 0; i < n; i++) {
		const udf_harness_output *o = &outs[i];
		if (o->error) {
			printf("error %" PRIu32 " %s\n", o->index, o->error);
			continue;
		}
		if (o->side) {
			printf("side %s ", o->side);
		} else {
			printf("out ");
		}
		printf("%" PRIu32 " ", o->index);
		print_bytes(o->key);
		printf(" %" PRId64 " ", o->timestamp);
		print_bytes(o->value);
		putchar('\n');
	}
}

/* records parses "<value>@<ts>" words into recs; false on a malformed one. */
static bool records(char **words, size_t n, udf_record *recs) {
	for (size_t i = 0; i < n; i++) {
		char *at = strrchr(words[i], '@');
		if (!at) return false;
		*at = 0;
		char *end;
		recs[i] = (udf_record){.value = word(words[i]), .timestamp = strtoll(at + 1, &end, 10)};
		if (*end) return false;
	}
	return true;
}

/* step runs one line split into n words; false when it is malformed. */
static bool step(char **w, size_t n) {
	const udf_harness_output *outs = NULL;
	udf_record recs[MAX_WORDS];
	char *end;
	if (strcmp(w[0], "on_timer") == 0 && n == 2) {
		udf_harness_on_timer(w[1]);
	} else if (strcmp(w[0], "process") == 0 && n >= 3) {
		if (!records(w + 3, n - 3, recs)) return false;
		long got = udf_harness_process(w[1], word(w[2]), recs, n - 3, &outs);
		print_outputs(got, outs);
	} else if (strcmp(w[0], "broadcast") == 0 && n >= 2) {
		if (!records(w + 2, n - 2, recs)) return false;
		long got = udf_harness_process_broadcast(w[1], recs, n - 2, &outs);
		print_outputs(got, outs);
	} else if ((strcmp(w[0], "watermark") == 0 || strcmp(w[0], "now") == 0) && n == 2) {
		int64_t ms = strtoll(w[1], &end, 10);
		if (*end) return false;
		long got = w[0][0] == 'w' ? udf_harness_advance_watermark(ms, &outs) : udf_harness_set_processing_time(ms, &outs);
		print_outputs(got, outs);
	} else if (strcmp(w[0], "value") == 0 && n == 3) {
		udf_bytes v;
		if (udf_harness_value(w[1], word(w[2]), &v)) {
			printf("= ");
			print_bytes(v);
			putchar('\n');
		} else {
			printf("= none\n");
		}
	} else if (strcmp(w[0], "list") == 0 && n == 3) {
		const udf_bytes *vs;
		size_t count = udf_harness_list(w[1], word(w[2]), &vs);
		printf("=");
		for (size_t i = 0; i < count; i++) {
			putchar(' ');
			print_bytes(vs[i]);
		}
		putchar('\n');
	} else if (strcmp(w[0], "timers") == 0 && n == 1) {
		const udf_harness_timer *ts;
		size_t count = udf_harness_timers(&ts);
		for (size_t i = 0; i < count; i++) {
			printf("timer %s %" PRId64 " ", ts[i].domain == UDF_EVENT_TIME ? "event" : "processing", ts[i].timestamp);
			print_bytes(ts[i].key);
			putchar('\n');
		}
	} else {
		return false;
	}
	return true;
}

int main(void) {
	char line[8192];
	udf_harness_reset(NULL);
	for (int number = 1; fgets(line, sizeof line, stdin); number++) {
		line[strcspn(line, "\r\n")] = 0;
		if (line[0] == 0 || line[0] == '#') continue;
		printf("> %s\n", line);
		char *words[MAX_WORDS + 3];
		size_t n = 0;
		for (char *t = strtok(line, " \t"); t; t = strtok(NULL, " \t")) {
			if (n == sizeof words / sizeof words[0]) {
				fprintf(stderr, "line %d: more than %d records\n", number, MAX_WORDS);
				return 2;
			}
			words[n++] = t;
		}
		if (n == 0 || !step(words, n)) {
			fprintf(stderr, "line %d: malformed step\n", number);
			return 2;
		}
		fflush(stdout);
	}
	return 0;
}
