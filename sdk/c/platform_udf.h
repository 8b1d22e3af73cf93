/*
 * platform_udf.h: the C (and C++) SDK for the platform's WebAssembly UDFs,
 * ABI v1 (docs/ABI.md).
 *
 * A module defines udf_register(), which registers its functions by name and
 * kind, and is built as a WASI reactor together with platform_udf.c:
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -o m.wasm m.c platform_udf.c
 *
 * The SDK provides the module's exports: it decodes each batch of records,
 * calls the function once per record and encodes the results, in buffers it
 * reuses from call to call.
 *
 * Every function returns UDF_OK, or the result of udf_error() to fail the
 * record: the host then handles it according to the job's on_udf_error. A
 * trap (abort(), __builtin_trap(), an out-of-bounds access) fails the whole
 * call instead; the host then runs the batch's records one at a time to
 * isolate the record that traps.
 *
 * The records a function receives point into the batch and are valid only
 * during the call. Bytes a function outputs are copied when it returns (or
 * when udf_emit is called), so they may live in a reused buffer.
 */
#ifndef PLATFORM_UDF_H
#define PLATFORM_UDF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes: a pointer and a length. */
typedef struct udf_bytes {
	const uint8_t *data;
	size_t len;
} udf_bytes;

/* One header of a record; a name may repeat. */
typedef struct udf_header {
	udf_bytes name;
	udf_bytes value;
} udf_header;

/* One input record: a key (empty until the stream is keyed), a value, an
 * event timestamp in milliseconds since the Unix epoch, and headers. */
typedef struct udf_record {
	udf_bytes key;
	udf_bytes value;
	int64_t timestamp;
	size_t header_count;
	const udf_header *headers;
} udf_record;

/* Fields of a udf_output: which ones it sets. The others are the input
 * record's. */
enum {
	UDF_SET_KEY = 0x01,
	UDF_SET_TIMESTAMP = 0x02,
	UDF_SET_HEADERS = 0x04,
};

/* A record a map function outputs or a flat map function emits: its value,
 * and the key, timestamp and headers named in set. */
typedef struct udf_output {
	unsigned set;
	udf_bytes key;
	udf_bytes value;
	int64_t timestamp;
	size_t header_count;
	const udf_header *headers;
} udf_output;

/* A function's status: UDF_OK, or UDF_ERROR as udf_error returns it. */
enum { UDF_OK = 0, UDF_ERROR = -1 };

/* map: exactly one output per input. out starts as {.value = in->value}. */
typedef int (*udf_map_fn)(const udf_record *in, udf_output *out);
/* filter: *keep says whether the input passes on, unchanged. */
typedef int (*udf_filter_fn)(const udf_record *in, bool *keep);
/* flat_map: zero or more outputs, each given to udf_emit. */
typedef int (*udf_flat_map_fn)(const udf_record *in);
/* key: the record's new key. */
typedef int (*udf_key_fn)(const udf_record *in, udf_bytes *key);
/* timestamp: the record's event time, milliseconds since the epoch. */
typedef int (*udf_timestamp_fn)(const udf_record *in, int64_t *timestamp);

/* Keyed process functions (docs/ABI.md, Keyed process functions) and window
 * functions with state get a context: the current key, time, state, timers
 * and output, valid only during the call. */
typedef struct udf_context udf_context;

/* Time domains of timers. */
enum { UDF_EVENT_TIME = 0, UDF_PROCESSING_TIME = 1 };

/* A timer that fired. */
typedef struct udf_timer {
	int64_t timestamp;
	int domain;
} udf_timer;

/* process: the records of one key of a batch, in arrival order. */
typedef int (*udf_process_fn)(udf_context *ctx, udf_bytes key, const udf_record *records, size_t count);
/* process_broadcast (the broadcast side of a broadcast_process operator,
 * Flink's processBroadcastElement): a batch of the broadcast input's
 * records, in arrival order. It reads and writes broadcast states; it has no
 * key (udf_emit_value emits with an empty key), no keyed state and no
 * timers: those calls trap. The keyed input's process and on_timer
 * functions read broadcast states with udf_map_get and udf_map_entries; a
 * write from there traps the call with an error naming the state. */
typedef int (*udf_process_broadcast_fn)(udf_context *ctx, const udf_record *records, size_t count);
/* on_timer: one timer of one key. */
typedef int (*udf_on_timer_fn)(udf_context *ctx, udf_bytes key, udf_timer timer);

/* A declared keyed state: its index in the self-description. */
typedef uint32_t udf_state;

/* One entry of a map state. */
typedef struct udf_entry {
	udf_bytes key;
	udf_bytes value;
} udf_entry;

/* The watermark before the first one. */
#define UDF_NO_WATERMARK INT64_MIN

/* A window's bounds in milliseconds: it holds the records with start <=
 * timestamp < end; its results are stamped end - 1. */
typedef struct udf_window {
	int64_t start, end;
} udf_window;

/* An incremental window aggregate (Flink's AggregateFunction) over an
 * accumulator of acc_size bytes, which the platform stores between calls:
 * create sets a new one, add folds a record into it, merge folds other
 * (later in time) into it, result sets the window's result value (bytes
 * that must stay valid until result returns). The accumulator of a window
 * may be built in pieces and merged, so the result must not depend on how. */
typedef struct udf_aggregate_fns {
	size_t acc_size;
	void (*create)(void *acc);
	int (*add)(void *acc, const udf_record *record);
	int (*merge)(void *acc, const void *other);
	int (*result)(udf_bytes key, udf_window window, const void *acc, udf_bytes *value);
} udf_aggregate_fns;

/* reduce: folds value into acc (the first record's value to begin with),
 * setting *result to either or to new bytes valid until it returns. */
typedef int (*udf_reduce_fn)(udf_bytes acc, udf_bytes value, udf_bytes *result);
/* window_process: one window that fires, with its records; it emits with
 * udf_emit, and what it emits inherits the window's key and the timestamp
 * end - 1, and no headers. */
typedef int (*udf_window_process_fn)(udf_bytes key, udf_window window, const udf_record *records, size_t count);
/* window_process with per-window state (Flink's ProcessWindowFunction with
 * its context's windowState()): as udf_window_process_fn, with a context
 * whose state calls act on the key's state in this window, which the
 * platform clears when it drops the window (its end plus the allowed
 * lateness). It emits with udf_emit or udf_emit_value (the window's key and
 * end - 1) or udf_emit_record; it has no timers: a timer call traps. An
 * error discards what it emitted for the window; its state changes stay. */
typedef int (*udf_window_state_fn)(udf_context *ctx, udf_bytes key, udf_window window, const udf_record *records,
				   size_t count);
/* join (Flink's JoinFunction): one pair of a left and a right record of the
 * same key, called for every left record with every right record of a
 * group, in order. In a window join the pair shares the window; in an
 * interval join window is {0, 0} and the right record lies within the left
 * one's bounds. It emits with udf_emit; what it emits inherits the key, and
 * the timestamp window end - 1, or in an interval join the later of the
 * pair's timestamps. An error discards everything emitted for the group
 * (every pair of it) and fails the group. */
typedef int (*udf_join_fn)(udf_bytes key, udf_window window, const udf_record *left, const udf_record *right);
/* co_group (Flink's CoGroupFunction): all the left and right records of one
 * key and window, either side possibly empty; it emits as join does. */
typedef int (*udf_co_group_fn)(udf_bytes key, udf_window window, const udf_record *left, size_t left_count,
			       const udf_record *right, size_t right_count);
/* session_gap: the record's session lasts until its timestamp plus *gap
 * milliseconds, positive. */
typedef int (*udf_session_gap_fn)(const udf_record *in, int64_t *gap);
/* watermark: sets *emit to emit *watermark right after the record. */
typedef int (*udf_watermark_fn)(const udf_record *in, bool *emit, int64_t *watermark);

/* evictor (Flink's Evictor): a window that fires, before its window
 * function or after it (after), with its key, bounds, records (in the order
 * they were added) and the operator's watermark. Every record is kept
 * unless the evictor calls udf_evict for it; what it evicts is gone from
 * the window, for its later firings too. An error fails the window, which
 * keeps its records. keep is the SDK's. */
typedef struct udf_eviction {
	udf_bytes key;
	udf_window window;
	int64_t watermark;
	bool after;
	const udf_record *records;
	size_t count;
	uint8_t *keep;
} udf_eviction;
typedef int (*udf_evictor_fn)(udf_eviction *e);
/* Evicts record i of the window (i < count; past it traps). */
void udf_evict(udf_eviction *e, size_t i);
/* Reports whether record i has been evicted. */
bool udf_evicted(const udf_eviction *e, size_t i);

/* Async lookups (docs/ABI.md, Async lookups). A lookup_request function asks
 * for the input's lookups with udf_ask_kv and udf_ask_http and returns at
 * once; when they have all completed, the lookup_result function gets the
 * record with their results, in the order asked, and emits with udf_emit as
 * a flat map function does. */
typedef struct udf_lookup_result {
	bool found; /* the KV key exists, or the HTTP GET answered 2xx */
	udf_bytes value;
} udf_lookup_result;
typedef int (*udf_async_request_fn)(const udf_record *in);
typedef int (*udf_async_result_fn)(const udf_record *in, const udf_lookup_result *results, size_t count);
void udf_ask_kv(udf_bytes bucket, udf_bytes key);
void udf_ask_http(udf_bytes url);

/* Defined by the module: registers its functions. The SDK calls it once per
 * instance, before the first export call. */
void udf_register(void);

/* Register a function. The name is copied; names are unique within a module
 * (a repeated name traps). The order of registration is the order of the
 * self-description. */
void udf_map(const char *name, udf_map_fn fn);
void udf_filter(const char *name, udf_filter_fn fn);
void udf_flat_map(const char *name, udf_flat_map_fn fn);
void udf_key(const char *name, udf_key_fn fn);
void udf_timestamp(const char *name, udf_timestamp_fn fn);

void udf_aggregate(const char *name, const udf_aggregate_fns *fns);
void udf_reduce(const char *name, udf_reduce_fn fn);
void udf_window_process(const char *name, udf_window_process_fn fn);
void udf_window_process_with_state(const char *name, udf_window_state_fn fn);
void udf_join(const char *name, udf_join_fn fn);
void udf_co_group(const char *name, udf_co_group_fn fn);
void udf_session_gap(const char *name, udf_session_gap_fn fn);
void udf_watermark(const char *name, udf_watermark_fn fn);
void udf_async_request(const char *name, udf_async_request_fn fn);
void udf_async_result(const char *name, udf_async_result_fn fn);
void udf_process(const char *name, udf_process_fn fn);
void udf_on_timer(const char *name, udf_on_timer_fn fn);
void udf_process_broadcast(const char *name, udf_process_broadcast_fn fn);
void udf_evictor(const char *name, udf_evictor_fn fn);

/* Declare keyed states, from udf_register, with an optional TTL (a Go
 * duration such as "1h", or NULL); a job may override it. */
udf_state udf_value_state(const char *name, const char *ttl);
udf_state udf_list_state(const char *name, const char *ttl);
udf_state udf_map_state(const char *name, const char *ttl);
/* Declares a broadcast state: a map every subtask of a broadcast_process
 * operator holds whole, not scoped by key, without TTL. Use it with the map
 * calls below. */
udf_state udf_broadcast_state(const char *name);

/* Emits one record from a flat map function, a window_process, join or
 * co_group function (the fields it does not set are inherited as their
 * types say), or a keyed function: there the fields it does not set are the
 * group's last record's (for on_timer: the timer's key and timestamp, no
 * headers). */
void udf_emit(const udf_output *out);

/* From a keyed function: emits a record as it is, or a value with the
 * current key, the last record's (or the timer's) timestamp and no headers
 * (in a window function: the window's key and end - 1). */
void udf_emit_record(udf_context *ctx, const udf_record *record);
void udf_emit_value(udf_context *ctx, udf_bytes value);

/* Side outputs (Flink's ctx.output(tag, value)): emit on the side output
 * named tag (NUL-terminated, copied), which the job routes by the
 * operator's side_outputs. They inherit as udf_emit, udf_emit_record and
 * udf_emit_value do, so a side record carries the event time of the record
 * (or timer, or window) that caused it. udf_side_output serves window
 * process, join and co_group functions (and keyed ones); the other two
 * keyed functions. A tag the operator does not declare fails the input
 * under the job's on_udf_error. */
void udf_side_output(const char *tag, const udf_output *out);
void udf_side_output_record(udf_context *ctx, const char *tag, const udf_record *record);
void udf_side_output_value(udf_context *ctx, const char *tag, udf_bytes value);

/* The current key, the operator's watermark (UDF_NO_WATERMARK before the
 * first) and the platform's clock at the call (ms since the epoch). */
udf_bytes udf_context_key(const udf_context *ctx);
int64_t udf_context_watermark(const udf_context *ctx);
int64_t udf_context_processing_time(const udf_context *ctx);

/* The current key's state (in a window function, in the current window).
 * Reads return bytes valid until the next state call. udf_value_get and
 * udf_map_get return whether there is a value. */
bool udf_value_get(udf_context *ctx, udf_state state, udf_bytes *value);
void udf_value_set(udf_context *ctx, udf_state state, udf_bytes value);
void udf_state_clear(udf_context *ctx, udf_state state);
void udf_list_append(udf_context *ctx, udf_state state, udf_bytes value);
size_t udf_list_get(udf_context *ctx, udf_state state, const udf_bytes **values);
bool udf_map_get(udf_context *ctx, udf_state state, udf_bytes key, udf_bytes *value);
void udf_map_put(udf_context *ctx, udf_state state, udf_bytes key, udf_bytes value);
void udf_map_remove(udf_context *ctx, udf_state state, udf_bytes key);
size_t udf_map_entries(udf_context *ctx, udf_state state, const udf_entry **entries);

/* Registers (once, however often called) or deletes a timer for the current
 * key in a time domain. Window functions have no timers: there they trap. */
void udf_register_timer(udf_context *ctx, int domain, int64_t timestamp);
void udf_delete_timer(udf_context *ctx, int domain, int64_t timestamp);

/* Fails the current record with a message (copied) and returns UDF_ERROR:
 * `return udf_error("bad input");`. Records a flat map function emitted for
 * the input are discarded. */
int udf_error(const char *message);
int udf_error_bytes(const uint8_t *message, size_t len);

/* Log levels of udf_log. */
enum { UDF_DEBUG = 0, UDF_INFO = 1, UDF_WARN = 2, UDF_ERR = 3 };

/* Writes one line into the platform's logs at a level. */
void udf_log(int level, const char *message);

/* Bytes of a NUL-terminated string, without the NUL. */
udf_bytes udf_str(const char *s);

/* Whether two byte strings are equal. */
bool udf_bytes_equal(udf_bytes a, udf_bytes b);

#ifdef __cplusplus
}
#endif

#endif
