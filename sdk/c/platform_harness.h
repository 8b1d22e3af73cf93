/*
 * platform_harness.h: a native test harness for the keyed functions of a
 * module built with the C SDK (Flink's operator test harnesses). Build the
 * module natively (gcc or clang, not --target=wasm32) together with
 * platform_udf.c, platform_json.c and platform_harness.c: the harness then
 * provides the platform's imports, an in-memory stand-in for keyed state
 * and timers, and drives the module's process, on_timer and
 * process_broadcast functions through the same frames as the platform,
 * with explicit processing time and watermarks.
 *
 * State follows the declared TTL (an entry expires TTL after it was last
 * written, against the harness's processing time, and is never returned
 * once expired); a job's TTL overrides do not apply. Timers fire in
 * timestamp and key order when their clock reaches them, and timers that
 * on_timer registers fire in the same move when they are due too. There is
 * one harness per process and it is not thread-safe.
 *
 * platform_harness_script.c is a main() that runs a script of such calls
 * from standard input (the format is in the SDK's README).
 */
#ifndef PLATFORM_HARNESS_H
#define PLATFORM_HARNESS_H

#include "platform_udf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a function emitted for one input (a record or a fired timer), with
 * the fields it did not set inherited as the platform inherits them. index
 * is the input's position: in the records passed to udf_harness_process,
 * or among the timers a time move fired. side is the side output's tag
 * (NULL on the main output); error is the message when the function failed
 * this input (NULL otherwise; the record fields are empty then). Inherited
 * headers are the input record's own. */
typedef struct udf_harness_output {
	uint32_t index;
	udf_bytes key;
	udf_bytes value;
	int64_t timestamp;
	size_t header_count;
	const udf_header *headers;
	const char *side;
	const char *error;
} udf_harness_output;

/* A registered timer. */
typedef struct udf_harness_timer {
	udf_bytes key;
	int64_t timestamp;
	int domain;
} udf_harness_timer;

/* udf_harness_reset forgets all state and timers and sets processing time
 * to 0 and the watermark to none (INT64_MIN). on_timer names the on_timer
 * function that handles fired timers (NULL when there is none). */
void udf_harness_reset(const char *on_timer);
/* udf_harness_on_timer names the on_timer function from now on, keeping
 * state, timers and time. */
void udf_harness_on_timer(const char *on_timer);

/* The calls below return the number of outputs and point *out at them,
 * valid until the next harness call; or -1, with udf_harness_error saying
 * why (an unknown function, a function of another kind, timers fired with
 * no on_timer function, the whole call failed). */

/* udf_harness_process calls the process function once with records, all
 * of key (their own keys are ignored). */
long udf_harness_process(const char *function, udf_bytes key, const udf_record *records, size_t count,
			 const udf_harness_output **out);
/* udf_harness_process_broadcast calls a process_broadcast function once
 * with records of the broadcast input. */
long udf_harness_process_broadcast(const char *function, const udf_record *records, size_t count,
				   const udf_harness_output **out);
/* udf_harness_advance_watermark moves the watermark (never back) and fires
 * the event-time timers due. */
long udf_harness_advance_watermark(int64_t watermark, const udf_harness_output **out);
/* udf_harness_set_processing_time moves processing time (never back) and
 * fires the processing-time timers due. */
long udf_harness_set_processing_time(int64_t ms, const udf_harness_output **out);
const char *udf_harness_error(void);

int64_t udf_harness_watermark(void);
int64_t udf_harness_processing_time(void);

/* udf_harness_value reads the value state named state of key as the
 * platform holds it: false when unset or expired. udf_harness_list and
 * udf_harness_map return the unexpired values of a list state in append
 * order and the entries of a map state in bytewise key order. The results
 * are valid until the next harness call. */
bool udf_harness_value(const char *state, udf_bytes key, udf_bytes *value);
size_t udf_harness_list(const char *state, udf_bytes key, const udf_bytes **values);
size_t udf_harness_map(const char *state, udf_bytes key, const udf_entry **entries);
/* udf_harness_timers lists the registered timers in domain, timestamp and
 * key order, valid until the next harness call. */
size_t udf_harness_timers(const udf_harness_timer **timers);

#ifdef __cplusplus
}
#endif

#endif
