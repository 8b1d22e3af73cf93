/*
 * platform_udf.c: the exports and frame codec of the C SDK (platform_udf.h).
 * A WebAssembly instance is single-threaded and the host makes one call at a
 * time, so the module's buffers are static and reused from call to call.
 */
#include "platform_udf.h"

#include <stdlib.h>
#include <string.h>

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))

#define IMPORT(name) __attribute__((import_module("platform"), import_name(name)))
#else
/* A native build, for the test harness (platform_harness.c, which defines
 * the imports), has no import or export names. */
#define EXPORT(name)
#define IMPORT(name)
#endif

IMPORT("log") void platform_log(int32_t level, const uint8_t *ptr, size_t len);
IMPORT("enter") void platform_enter(uint32_t group);
IMPORT("value_get") int32_t platform_value_get(uint32_t state, uint8_t *buf, size_t cap);
IMPORT("value_set") void platform_value_set(uint32_t state, const uint8_t *ptr, size_t len);
IMPORT("state_clear") void platform_state_clear(uint32_t state);
IMPORT("list_append") void platform_list_append(uint32_t state, const uint8_t *ptr, size_t len);
IMPORT("list_get") int32_t platform_list_get(uint32_t state, uint8_t *buf, size_t cap);
IMPORT("map_get") int32_t platform_map_get(uint32_t state, const uint8_t *key, size_t key_len, uint8_t *buf, size_t cap);
IMPORT("map_put") void platform_map_put(uint32_t state, const uint8_t *key, size_t key_len, const uint8_t *ptr, size_t len);
IMPORT("map_remove") void platform_map_remove(uint32_t state, const uint8_t *key, size_t key_len);
IMPORT("map_entries") int32_t platform_map_entries(uint32_t state, uint8_t *buf, size_t cap);
IMPORT("timer_register") void platform_timer_register(uint32_t domain, int64_t timestamp);
IMPORT("timer_delete") void platform_timer_delete(uint32_t domain, int64_t timestamp);

enum {
	TAG_RECORD = 1,
	TAG_OUTPUT = 8,
	TAG_ERROR = 2,
	TAG_KEEP = 3,
	TAG_KEY = 4,
	TAG_TIMESTAMP = 5,
};

/* The input index of an error entry that fails the whole frame. */
#define ALL_RECORDS UINT32_MAX

/* The smallest input region, so that small frames never reallocate. */
#define MIN_INPUT (64u << 10)

enum kind {
	KIND_MAP,
	KIND_FILTER,
	KIND_FLAT_MAP,
	KIND_KEY,
	KIND_TIMESTAMP,
	KIND_PROCESS,
	KIND_ON_TIMER,
	KIND_AGGREGATE,
	KIND_REDUCE,
	KIND_WINDOW_PROCESS,
	KIND_SESSION_GAP,
	KIND_JOIN,
	KIND_CO_GROUP,
	KIND_WATERMARK,
	KIND_PROCESS_BROADCAST,
	KIND_LOOKUP_REQUEST,
	KIND_LOOKUP_RESULT,
	KIND_EVICTOR,
};

static const char *const kind_names[] = {"map", "filter", "flat_map", "key", "timestamp", "process", "on_timer",
					 "aggregate", "reduce", "window_process", "session_gap", "join", "co_group",
					 "watermark", "process_broadcast", "lookup_request", "lookup_result",
					 "evictor"};

enum { TAG_ACCUMULATOR = 6, TAG_WATERMARK = 7 };
enum { OP_ADD = 1, OP_MERGE = 2, OP_RESULT = 3, OP_EVICT_BEFORE = 8, OP_EVICT_AFTER = 9 };

/* Group flags of grouped frames. */
enum { GROUP_WINDOW = 0x01, GROUP_ACC = 0x02, GROUP_ACC2 = 0x04, GROUP_TIMER = 0x08, GROUP_TWO_SIDED = 0x10 };

struct udf_context {
	udf_bytes key;
	int64_t watermark, now;
	bool active;
	/* window is set in a window function, which has no timers. */
	bool window;
};

/* A declared state. */
typedef struct state_decl {
	char *name;
	const char *kind;
	char *ttl;
	bool broadcast;
} state_decl;

typedef struct function {
	char *name;
	enum kind kind;
	union {
		udf_map_fn map;
		udf_filter_fn filter;
		udf_flat_map_fn flat_map;
		udf_key_fn key;
		udf_timestamp_fn timestamp;
		udf_process_fn process;
		udf_process_broadcast_fn process_broadcast;
		udf_on_timer_fn on_timer;
		const udf_aggregate_fns *aggregate;
		udf_reduce_fn reduce;
		udf_window_process_fn window_process;
		udf_window_state_fn window_state;
		udf_session_gap_fn session_gap;
		udf_join_fn join;
		udf_co_group_fn co_group;
		udf_watermark_fn watermark;
		udf_async_request_fn lookup_request;
		udf_async_result_fn lookup_result;
		udf_evictor_fn evictor;
	} fn;
	/* with_state marks a window_process function with per-window state. */
	bool with_state;
} function;

/* A grow-only byte buffer. */
typedef struct buffer {
	uint8_t *data;
	size_t len, cap;
} buffer;

/* A reader over a frame; msg is set at the first error. */
typedef struct reader {
	const uint8_t *buf;
	size_t len, off;
	const char *msg;
	size_t want;
} reader;

static struct {
	bool registered;
	function *funcs;
	size_t nfuncs, capfuncs;
	uint8_t *input;
	size_t input_cap;
	buffer out, desc, error, msg;
	/* The headers of the records being decoded, in record order. */
	udf_header *headers;
	size_t nheaders, headers_cap;
	state_decl *states;
	size_t nstates, capstates;
	/* The records of a group, and the results of state reads. */
	udf_record *recs;
	size_t recs_cap;
	buffer scratch;
	udf_bytes *list;
	size_t list_cap;
	udf_entry *map_entries;
	size_t map_entries_cap;
	/* An evictor's keep bitmap of the window in progress. */
	uint8_t *keep;
	size_t keep_cap;
	/* The accumulators of an aggregate call, aligned. */
	void *acc, *acc2;
	size_t acc_cap;
	/* The runner of keyed functions and the caller of window functions
	 * with state, set when one is registered. */
	void (*run_keyed)(reader *r, const function *f);
	int (*call_window_state)(const function *f, uint32_t g, udf_bytes key, udf_window w, size_t n);
	/* The context of the keyed call in progress, and the record its
	 * outputs inherit from. */
	udf_context ctx;
	udf_record base;
	/* The current input and whether a flat map function is running. */
	const udf_record *input_record;
	uint32_t index;
	uint32_t entries;
	bool flat_mapping;
	/* asking: a lookup_request function runs; results are the lookup
	 * results of the current input of a lookup_result function. */
	bool asking;
	udf_lookup_result *results;
	size_t results_cap;
	/* The timestamp of an interval join's pair, which its outputs take
	 * unless they set one; 0 otherwise. */
	int64_t pair_timestamp;
} m;

static void *grow(void *p, size_t size) {
	p = realloc(p, size);
	if (!p) __builtin_trap();
	return p;
}

static void reserve(buffer *b, size_t n) {
	if (b->len + n <= b->cap) return;
	size_t cap = b->cap ? 2 * b->cap : 4096;
	while (cap < b->len + n) cap *= 2;
	b->data = grow(b->data, cap);
	b->cap = cap;
}

static void put(buffer *b, const void *p, size_t n) {
	reserve(b, n);
	if (n) memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_u8(buffer *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(buffer *b, uint32_t v) { put(b, &v, 4); } /* Wasm is little-endian. */
static void put_i64(buffer *b, int64_t v) { put(b, &v, 8); }
static void put_str(buffer *b, const char *s) { put(b, s, strlen(s)); }

static void put_bytes(buffer *b, udf_bytes v) {
	put_u32(b, (uint32_t)v.len);
	put(b, v.data, v.len);
}

static void put_uint(buffer *b, size_t v) {
	char digits[20];
	int n = 0;
	do digits[n++] = (char)('0' + v % 10); while (v /= 10);
	while (n) put_u8(b, (uint8_t)digits[--n]);
}

static void put_entry(uint8_t tag, uint32_t index) {
	put_u8(&m.out, tag);
	put_u32(&m.out, index);
	m.entries++;
}

static void put_headers(buffer *b, size_t n, const udf_header *hs) {
	put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_bytes(b, hs[i].name);
		put_bytes(b, hs[i].value);
	}
}

static bool same_headers(size_t n, const udf_header *a, const udf_header *b) {
	for (size_t i = 0; i < n; i++) {
		if (!udf_bytes_equal(a[i].name, b[i].name) || !udf_bytes_equal(a[i].value, b[i].value)) return false;
	}
	return true;
}

/* Appends a record entry for the current input, or with a tag a side output
 * entry on that side output. It carries the fields the output sets to
 * something other than the input's; the host inherits the others. */
static void put_tagged(const char *tag, const udf_output *o) {
	const udf_record *in = m.input_record;
	if (tag) {
		put_entry(TAG_OUTPUT, m.index);
		put_bytes(&m.out, udf_str(tag));
	} else {
		put_entry(TAG_RECORD, m.index);
	}
	unsigned set = o->set & (UDF_SET_KEY | UDF_SET_TIMESTAMP | UDF_SET_HEADERS);
	if ((set & UDF_SET_KEY) && udf_bytes_equal(o->key, in->key)) set &= ~UDF_SET_KEY;
	if ((set & UDF_SET_TIMESTAMP) && o->timestamp == in->timestamp) set &= ~UDF_SET_TIMESTAMP;
	if ((set & UDF_SET_HEADERS) && o->header_count == in->header_count &&
	    same_headers(o->header_count, o->headers, in->headers))
		set &= ~UDF_SET_HEADERS;
	put_u8(&m.out, (uint8_t)set);
	if (set & UDF_SET_KEY) put_bytes(&m.out, o->key);
	put_bytes(&m.out, o->value);
	if (set & UDF_SET_TIMESTAMP) put_i64(&m.out, o->timestamp);
	if (set & UDF_SET_HEADERS) put_headers(&m.out, o->header_count, o->headers);
}

static void put_output(const udf_output *o) { put_tagged(NULL, o); }

static const uint8_t *take(reader *r, size_t n) {
	if (r->msg) return NULL;
	if (n > r->len - r->off) {
		r->msg = "want";
		r->want = n;
		return NULL;
	}
	const uint8_t *p = r->buf + r->off;
	r->off += n;
	return p;
}

static uint32_t get_u32(reader *r) {
	uint32_t v = 0;
	const uint8_t *p = take(r, 4);
	if (p) memcpy(&v, p, 4);
	return v;
}

static udf_bytes get_bytes(reader *r) {
	size_t n = get_u32(r);
	const uint8_t *p = take(r, n);
	return (udf_bytes){p ? p : (const uint8_t *)"", p ? n : 0};
}

static uint8_t get_u8(reader *r) {
	const uint8_t *p = take(r, 1);
	return p ? *p : 0;
}

static int64_t get_i64(reader *r) {
	int64_t v = 0;
	const uint8_t *p = take(r, 8);
	if (p) memcpy(&v, p, 8);
	return v;
}

/* Decodes the next record of a frame. Its headers are appended to
 * m.headers after m.nheaders; rec->headers points at them. */
static bool get_record(reader *r, udf_record *rec) {
	rec->key = get_bytes(r);
	rec->value = get_bytes(r);
	const uint8_t *ts = take(r, 8);
	if (ts) memcpy(&rec->timestamp, ts, 8);
	uint32_t n = get_u32(r);
	if (r->msg) return false;
	if ((uint64_t)n * 8 > r->len - r->off) {
		r->msg = "headers";
		return false;
	}
	if (m.nheaders + n > m.headers_cap) {
		m.headers_cap = 2 * (m.nheaders + n);
		m.headers = grow(m.headers, m.headers_cap * sizeof(udf_header));
	}
	udf_header *hs = m.headers + m.nheaders;
	for (uint32_t i = 0; i < n; i++) {
		hs[i].name = get_bytes(r);
		hs[i].value = get_bytes(r);
	}
	m.nheaders += n;
	rec->header_count = n;
	rec->headers = hs;
	return !r->msg;
}

/* Makes the output a single error entry that fails the whole frame. */
static void fail_frame(const uint8_t *msg, size_t len) {
	m.out.len = 0;
	put_u32(&m.out, 1);
	put_u8(&m.out, TAG_ERROR);
	put_u32(&m.out, ALL_RECORDS);
	put_bytes(&m.out, (udf_bytes){msg, len});
}

static void fail_malformed(const reader *r, uint32_t records, const char *records_word) {
	m.msg.len = 0;
	put_str(&m.msg, "malformed frame at byte ");
	put_uint(&m.msg, r->off);
	if (!r->msg) {
		put_str(&m.msg, ": ");
		put_uint(&m.msg, r->len - r->off);
		put_str(&m.msg, " trailing bytes after ");
		put_uint(&m.msg, records);
		put_str(&m.msg, records_word);
	} else if (r->msg[0] == 'w') {
		put_str(&m.msg, ": want ");
		put_uint(&m.msg, r->want);
		put_str(&m.msg, " bytes, have ");
		put_uint(&m.msg, r->len - r->off);
	} else if (r->msg[0] == 'f') {
		put_str(&m.msg, ": unknown group flags");
	} else {
		put_str(&m.msg, ": count exceeds the frame");
	}
	fail_frame(m.msg.data, m.msg.len);
}

static void ensure_registered(void) {
	if (m.registered) return;
	m.registered = true;
	udf_register();
}

static void add(const char *name, enum kind kind, function f) {
	for (size_t i = 0; i < m.nfuncs; i++) {
		if (strcmp(m.funcs[i].name, name) == 0) __builtin_trap();
	}
	if (!name[0]) __builtin_trap();
	if (m.nfuncs == m.capfuncs) {
		m.capfuncs = m.capfuncs ? 2 * m.capfuncs : 8;
		m.funcs = grow(m.funcs, m.capfuncs * sizeof(function));
	}
	size_t n = strlen(name) + 1;
	f.name = grow(NULL, n);
	memcpy(f.name, name, n);
	f.kind = kind;
	m.funcs[m.nfuncs++] = f;
}

void udf_map(const char *name, udf_map_fn fn) { add(name, KIND_MAP, (function){.fn.map = fn}); }
void udf_filter(const char *name, udf_filter_fn fn) { add(name, KIND_FILTER, (function){.fn.filter = fn}); }
void udf_flat_map(const char *name, udf_flat_map_fn fn) { add(name, KIND_FLAT_MAP, (function){.fn.flat_map = fn}); }
void udf_key(const char *name, udf_key_fn fn) { add(name, KIND_KEY, (function){.fn.key = fn}); }
void udf_timestamp(const char *name, udf_timestamp_fn fn) { add(name, KIND_TIMESTAMP, (function){.fn.timestamp = fn}); }

static void run_keyed(reader *r, const function *f);
static int call_window_state(const function *f, uint32_t g, udf_bytes key, udf_window w, size_t n);

/* Registering a keyed function links in the keyed runner, and a window
 * function with state its caller, and with them the state and timer
 * imports: a module without such functions imports only platform.log. */
void udf_aggregate(const char *name, const udf_aggregate_fns *fns) {
	add(name, KIND_AGGREGATE, (function){.fn.aggregate = fns});
}
void udf_reduce(const char *name, udf_reduce_fn fn) { add(name, KIND_REDUCE, (function){.fn.reduce = fn}); }
void udf_window_process(const char *name, udf_window_process_fn fn) {
	add(name, KIND_WINDOW_PROCESS, (function){.fn.window_process = fn});
}
void udf_window_process_with_state(const char *name, udf_window_state_fn fn) {
	m.call_window_state = call_window_state;
	add(name, KIND_WINDOW_PROCESS, (function){.fn.window_state = fn, .with_state = true});
}
void udf_join(const char *name, udf_join_fn fn) { add(name, KIND_JOIN, (function){.fn.join = fn}); }
void udf_co_group(const char *name, udf_co_group_fn fn) { add(name, KIND_CO_GROUP, (function){.fn.co_group = fn}); }
void udf_session_gap(const char *name, udf_session_gap_fn fn) {
	add(name, KIND_SESSION_GAP, (function){.fn.session_gap = fn});
}
void udf_watermark(const char *name, udf_watermark_fn fn) { add(name, KIND_WATERMARK, (function){.fn.watermark = fn}); }

void udf_process(const char *name, udf_process_fn fn) {
	m.run_keyed = run_keyed;
	add(name, KIND_PROCESS, (function){.fn.process = fn});
}

void udf_on_timer(const char *name, udf_on_timer_fn fn) {
	m.run_keyed = run_keyed;
	add(name, KIND_ON_TIMER, (function){.fn.on_timer = fn});
}

static udf_state declare(const char *name, const char *kind, const char *ttl) {
	for (size_t i = 0; i < m.nstates; i++) {
		if (strcmp(m.states[i].name, name) == 0) __builtin_trap();
	}
	if (!name[0]) __builtin_trap();
	if (m.nstates == m.capstates) {
		m.capstates = m.capstates ? 2 * m.capstates : 4;
		m.states = grow(m.states, m.capstates * sizeof(state_decl));
	}
	state_decl d = {.name = grow(NULL, strlen(name) + 1), .kind = kind};
	strcpy(d.name, name);
	if (ttl) {
		d.ttl = grow(NULL, strlen(ttl) + 1);
		strcpy(d.ttl, ttl);
	}
	m.states[m.nstates] = d;
	return (udf_state)m.nstates++;
}

udf_state udf_value_state(const char *name, const char *ttl) { return declare(name, "value", ttl); }
udf_state udf_list_state(const char *name, const char *ttl) { return declare(name, "list", ttl); }
udf_state udf_map_state(const char *name, const char *ttl) { return declare(name, "map", ttl); }

udf_state udf_broadcast_state(const char *name) {
	udf_state s = declare(name, "map", NULL);
	m.states[s].broadcast = true;
	return s;
}

void udf_process_broadcast(const char *name, udf_process_broadcast_fn fn) {
	m.run_keyed = run_keyed;
	add(name, KIND_PROCESS_BROADCAST, (function){.fn.process_broadcast = fn});
}

/* emit_tagged emits out on the main output (tag NULL) or a side output,
 * stamping it with an interval join's pair's timestamp. */
static void emit_tagged(const char *tag, const udf_output *out) {
	if (m.pair_timestamp && !(out->set & UDF_SET_TIMESTAMP)) {
		udf_output stamped = *out;
		stamped.set |= UDF_SET_TIMESTAMP;
		stamped.timestamp = m.pair_timestamp;
		put_tagged(tag, &stamped);
		return;
	}
	put_tagged(tag, out);
}

void udf_emit(const udf_output *out) {
	if (!m.flat_mapping && !m.ctx.active) __builtin_trap();
	emit_tagged(NULL, out);
}

void udf_side_output(const char *tag, const udf_output *out) {
	if (!m.ctx.active) __builtin_trap();
	emit_tagged(tag, out);
}

/* check traps unless ctx is the context of the keyed call in progress. */
static void check(const udf_context *ctx) {
	if (ctx != &m.ctx || !m.ctx.active) __builtin_trap();
}

static void emit_record(udf_context *ctx, const char *tag, const udf_record *record) {
	check(ctx);
	udf_output out = {
		.set = UDF_SET_KEY | UDF_SET_TIMESTAMP | UDF_SET_HEADERS,
		.key = record->key,
		.value = record->value,
		.timestamp = record->timestamp,
		.header_count = record->header_count,
		.headers = record->headers,
	};
	put_tagged(tag, &out);
}

static void emit_value(udf_context *ctx, const char *tag, udf_bytes value) {
	check(ctx);
	udf_output out = {
		.set = UDF_SET_KEY | UDF_SET_TIMESTAMP | UDF_SET_HEADERS,
		.key = ctx->key,
		.value = value,
		.timestamp = m.base.timestamp,
	};
	put_tagged(tag, &out);
}

void udf_emit_record(udf_context *ctx, const udf_record *record) { emit_record(ctx, NULL, record); }
void udf_emit_value(udf_context *ctx, udf_bytes value) { emit_value(ctx, NULL, value); }
void udf_side_output_record(udf_context *ctx, const char *tag, const udf_record *record) { emit_record(ctx, tag, record); }
void udf_side_output_value(udf_context *ctx, const char *tag, udf_bytes value) { emit_value(ctx, tag, value); }

udf_bytes udf_context_key(const udf_context *ctx) { return ctx->key; }
int64_t udf_context_watermark(const udf_context *ctx) { return ctx->watermark; }
int64_t udf_context_processing_time(const udf_context *ctx) { return ctx->now; }

/* Host reads that fill a buffer. */
enum { READ_VALUE, READ_LIST, READ_MAP, READ_ENTRIES };

static int32_t host_read(int op, udf_state state, udf_bytes key, uint8_t *buf, size_t cap) {
	switch (op) {
	case READ_VALUE: return platform_value_get(state, buf, cap);
	case READ_LIST: return platform_list_get(state, buf, cap);
	case READ_MAP: return platform_map_get(state, key.data, key.len, buf, cap);
	default: return platform_map_entries(state, buf, cap);
	}
}

/* fill runs a read into m.scratch, again with a buffer as large as the host
 * asks for when the result did not fit. It returns the length, or -1. */
static int32_t fill(int op, udf_state state, udf_bytes key) {
	if (m.scratch.cap < 256) {
		m.scratch.data = grow(m.scratch.data, 256);
		m.scratch.cap = 256;
	}
	int32_t n = host_read(op, state, key, m.scratch.data, m.scratch.cap);
	if (n > (int32_t)m.scratch.cap) {
		m.scratch.data = grow(m.scratch.data, (size_t)n);
		m.scratch.cap = (size_t)n;
		n = host_read(op, state, key, m.scratch.data, m.scratch.cap);
	}
	return n;
}

static const udf_bytes no_key = {(const uint8_t *)"", 0};

bool udf_value_get(udf_context *ctx, udf_state state, udf_bytes *value) {
	check(ctx);
	int32_t n = fill(READ_VALUE, state, no_key);
	if (n < 0) return false;
	*value = (udf_bytes){m.scratch.data, (size_t)n};
	return true;
}

void udf_value_set(udf_context *ctx, udf_state state, udf_bytes value) {
	check(ctx);
	platform_value_set(state, value.data, value.len);
}

void udf_state_clear(udf_context *ctx, udf_state state) {
	check(ctx);
	platform_state_clear(state);
}

void udf_list_append(udf_context *ctx, udf_state state, udf_bytes value) {
	check(ctx);
	platform_list_append(state, value.data, value.len);
}

/* elements splits a list or map read in m.scratch into count times per
 * byte strings, into *out of capacity *cap. */
static size_t elements(udf_bytes **out, size_t *cap, size_t per) {
	uint32_t count;
	memcpy(&count, m.scratch.data, 4);
	if (count * per > *cap) {
		*cap = count * per;
		*out = grow(*out, *cap * sizeof(udf_bytes));
	}
	reader r = {.buf = m.scratch.data, .len = m.scratch.cap, .off = 4};
	for (size_t i = 0; i < count * per; i++) (*out)[i] = get_bytes(&r);
	return count;
}

size_t udf_list_get(udf_context *ctx, udf_state state, const udf_bytes **values) {
	check(ctx);
	fill(READ_LIST, state, no_key);
	size_t n = elements(&m.list, &m.list_cap, 1);
	*values = m.list;
	return n;
}

bool udf_map_get(udf_context *ctx, udf_state state, udf_bytes key, udf_bytes *value) {
	check(ctx);
	int32_t n = fill(READ_MAP, state, key);
	if (n < 0) return false;
	*value = (udf_bytes){m.scratch.data, (size_t)n};
	return true;
}

void udf_map_put(udf_context *ctx, udf_state state, udf_bytes key, udf_bytes value) {
	check(ctx);
	platform_map_put(state, key.data, key.len, value.data, value.len);
}

void udf_map_remove(udf_context *ctx, udf_state state, udf_bytes key) {
	check(ctx);
	platform_map_remove(state, key.data, key.len);
}

size_t udf_map_entries(udf_context *ctx, udf_state state, const udf_entry **entries) {
	check(ctx);
	fill(READ_ENTRIES, state, no_key);
	udf_bytes *pairs = (udf_bytes *)m.map_entries;
	size_t cap = 2 * m.map_entries_cap;
	size_t n = elements(&pairs, &cap, 2);
	m.map_entries = (udf_entry *)pairs;
	m.map_entries_cap = cap / 2;
	*entries = m.map_entries;
	return n;
}

/* check_timer traps unless ctx may use timers: window functions have
 * none, and the host would refuse them. */
static void check_timer(const udf_context *ctx) {
	check(ctx);
	if (ctx->window) __builtin_trap();
}

void udf_register_timer(udf_context *ctx, int domain, int64_t timestamp) {
	check_timer(ctx);
	platform_timer_register((uint32_t)domain, timestamp);
}

void udf_delete_timer(udf_context *ctx, int domain, int64_t timestamp) {
	check_timer(ctx);
	platform_timer_delete((uint32_t)domain, timestamp);
}

int udf_error_bytes(const uint8_t *message, size_t len) {
	m.error.len = 0;
	put(&m.error, message, len);
	return UDF_ERROR;
}

int udf_error(const char *message) { return udf_error_bytes((const uint8_t *)message, strlen(message)); }

void udf_log(int level, const char *message) {
	platform_log(level, (const uint8_t *)message, strlen(message));
}

udf_bytes udf_str(const char *s) { return (udf_bytes){(const uint8_t *)s, strlen(s)}; }

bool udf_bytes_equal(udf_bytes a, udf_bytes b) {
	return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

/* Runs f over one record; its entries, or an error entry if it fails. */
static void run(const function *f, const udf_record *rec) {
	m.input_record = rec;
	size_t mark = m.out.len;
	uint32_t marked = m.entries;
	int status = UDF_OK;
	switch (f->kind) {
	case KIND_MAP: {
		udf_output out = {.value = rec->value};
		if ((status = f->fn.map(rec, &out)) == UDF_OK) put_output(&out);
		break;
	}
	case KIND_FILTER: {
		bool keep = false;
		if ((status = f->fn.filter(rec, &keep)) == UDF_OK && keep) put_entry(TAG_KEEP, m.index);
		break;
	}
	case KIND_FLAT_MAP:
		m.flat_mapping = true;
		status = f->fn.flat_map(rec);
		m.flat_mapping = false;
		break;
	case KIND_KEY: {
		udf_bytes key = {(const uint8_t *)"", 0};
		if ((status = f->fn.key(rec, &key)) == UDF_OK) {
			put_entry(TAG_KEY, m.index);
			put_bytes(&m.out, key);
		}
		break;
	}
	case KIND_TIMESTAMP: {
		int64_t ts = 0;
		if ((status = f->fn.timestamp(rec, &ts)) == UDF_OK) {
			put_entry(TAG_TIMESTAMP, m.index);
			put_i64(&m.out, ts);
		}
		break;
	}
	case KIND_LOOKUP_REQUEST:
		m.asking = true;
		status = f->fn.lookup_request(rec);
		m.asking = false;
		break;
	case KIND_WATERMARK: {
		bool emit = false;
		int64_t wm = 0;
		if ((status = f->fn.watermark(rec, &emit, &wm)) == UDF_OK && emit) {
			put_entry(TAG_WATERMARK, m.index);
			put_i64(&m.out, wm);
		}
		break;
	}
	default:
		__builtin_trap();
	}
	if (status != UDF_OK) {
		m.out.len = mark;
		m.entries = marked;
		put_entry(TAG_ERROR, m.index);
		put_bytes(&m.out, (udf_bytes){m.error.data, m.error.len});
	}
}

/* A group's head, up to its records. */
typedef struct group_head {
	uint8_t flags;
	udf_bytes key, acc, acc2;
	udf_window window;
	udf_timer timer;
} group_head;

static bool get_group(reader *r, group_head *g) {
	size_t at = r->off;
	*g = (group_head){.flags = get_u8(r)};
	if (!r->msg && (g->flags & ~(GROUP_WINDOW | GROUP_ACC | GROUP_ACC2 | GROUP_TIMER | GROUP_TWO_SIDED))) {
		r->msg = "flags";
		r->off = at;
		return false;
	}
	g->key = get_bytes(r);
	if (g->flags & GROUP_WINDOW) {
		g->window.start = get_i64(r);
		g->window.end = get_i64(r);
	}
	if (g->flags & GROUP_ACC) g->acc = get_bytes(r);
	if (g->flags & GROUP_ACC2) g->acc2 = get_bytes(r);
	if (g->flags & GROUP_TIMER) {
		g->timer.timestamp = get_i64(r);
		g->timer.domain = get_u8(r);
	}
	return !r->msg;
}

/* get_records decodes a side of a group: its count and records, into
 * m.recs from index from on (0 for a group's left side, the left side's
 * count for its right side). */
static uint32_t get_records(reader *r, uint32_t from) {
	uint32_t n = get_u32(r);
	if (r->msg) return 0;
	if ((uint64_t)n * 20 > r->len - r->off) {
		r->msg = "headers";
		return 0;
	}
	if (from + n > m.recs_cap) {
		m.recs_cap = 2 * (from + n);
		m.recs = grow(m.recs, m.recs_cap * sizeof(udf_record));
	}
	if (from == 0) m.nheaders = 0;
	for (uint32_t i = from; i < from + n && !r->msg; i++) get_record(r, &m.recs[i]);
	/* The header arena may have moved while it grew. */
	size_t h = 0;
	for (uint32_t i = 0; i < from + n && !r->msg; i++) {
		m.recs[i].headers = m.headers + h;
		h += m.recs[i].header_count;
	}
	return n;
}

/* skip_records skips a side of a group: its count and records. */
static void skip_records(reader *r) {
	uint32_t n = get_u32(r);
	for (uint32_t i = 0; i < n && !r->msg; i++) {
		get_bytes(r);
		get_bytes(r);
		take(r, 8);
		uint32_t h = get_u32(r);
		for (uint32_t j = 0; j < h && !r->msg; j++) {
			get_bytes(r);
			get_bytes(r);
		}
	}
}

/* run_keyed runs a process or on_timer function over a grouped frame. */
static void run_keyed(reader *r, const function *f) {
	get_u8(r);
	m.ctx.watermark = get_i64(r);
	m.ctx.now = get_i64(r);
	uint32_t groups = get_u32(r), index = 0;
	for (uint32_t g = 0; g < groups && !r->msg; g++) {
		group_head head;
		if (!get_group(r, &head)) break;
		uint8_t flags = head.flags;
		udf_bytes key = head.key;
		udf_timer t = head.timer;
		uint32_t n = get_records(r, 0);
		if (flags & GROUP_TWO_SIDED) skip_records(r);
		if (r->msg) break;
		size_t mark = m.out.len;
		uint32_t marked = m.entries, first = index;
		int status;
		m.ctx.key = key;
		if (f->kind == KIND_PROCESS || f->kind == KIND_PROCESS_BROADCAST) {
			if (n == 0) continue;
			index += n;
			m.base = m.recs[n - 1];
			m.index = index - 1;
		} else {
			if (!(flags & GROUP_TIMER)) {
				m.msg.len = 0;
				put_str(&m.msg, "udf: on_timer group ");
				put_uint(&m.msg, g);
				put_str(&m.msg, " carries no timer");
				fail_frame(m.msg.data, m.msg.len);
				return;
			}
			m.base = (udf_record){.key = key, .value = no_key, .timestamp = t.timestamp};
			m.index = g;
			first = g;
			index = g + 1;
		}
		m.input_record = &m.base;
		platform_enter(g);
		m.ctx.active = true;
		if (f->kind == KIND_PROCESS) status = f->fn.process(&m.ctx, key, m.recs, n);
		else if (f->kind == KIND_PROCESS_BROADCAST) status = f->fn.process_broadcast(&m.ctx, m.recs, n);
		else status = f->fn.on_timer(&m.ctx, key, t);
		m.ctx.active = false;
		if (status != UDF_OK) {
			m.out.len = mark;
			m.entries = marked;
			for (uint32_t i = first; i < index; i++) {
				put_entry(TAG_ERROR, i);
				put_bytes(&m.out, (udf_bytes){m.error.data, m.error.len});
			}
		}
	}
	if (r->msg || r->off != r->len) {
		fail_malformed(r, groups, " groups");
	} else {
		memcpy(m.out.data, &m.entries, 4);
	}
}

/* load_acc copies an accumulator the host stored into an aligned buffer of
 * the aggregate's size; it fails the group if the size is not that. */
static int load_acc(void **dst, udf_bytes acc, size_t size) {
	if (acc.len != size) {
		m.msg.len = 0;
		put_str(&m.msg, "udf: accumulator of ");
		put_uint(&m.msg, acc.len);
		put_str(&m.msg, " bytes, want ");
		put_uint(&m.msg, size);
		return udf_error_bytes(m.msg.data, m.msg.len);
	}
	if (size) memcpy(*dst, acc.data, size);
	return UDF_OK;
}

/* run_aggregate answers one group of an aggregate call. */
static int run_aggregate(const udf_aggregate_fns *a, uint8_t op, uint32_t g, const group_head *head, size_t n) {
	if (a->acc_size > m.acc_cap) {
		m.acc_cap = a->acc_size;
		m.acc = grow(m.acc, m.acc_cap);
		m.acc2 = grow(m.acc2, m.acc_cap);
	}
	int status = UDF_OK;
	switch (op) {
	case OP_ADD:
		if (head->flags & GROUP_ACC) status = load_acc(&m.acc, head->acc, a->acc_size);
		else a->create(m.acc);
		for (size_t i = 0; i < n && status == UDF_OK; i++) status = a->add(m.acc, &m.recs[i]);
		break;
	case OP_MERGE:
		if ((status = load_acc(&m.acc, head->acc, a->acc_size)) == UDF_OK &&
		    (status = load_acc(&m.acc2, head->acc2, a->acc_size)) == UDF_OK)
			status = a->merge(m.acc, m.acc2);
		break;
	case OP_RESULT: {
		udf_bytes value = no_key;
		if ((status = load_acc(&m.acc, head->acc, a->acc_size)) == UDF_OK &&
		    (status = a->result(head->key, head->window, m.acc, &value)) == UDF_OK) {
			udf_output out = {.value = value};
			put_output(&out);
		}
		return status;
	}
	default:
		return udf_error("udf: aggregate called with an unknown op");
	}
	if (status == UDF_OK) {
		put_entry(TAG_ACCUMULATOR, g);
		put_bytes(&m.out, (udf_bytes){m.acc, a->acc_size});
	}
	return status;
}

/* run_reduce answers one group of a reduce call. */
static int run_reduce(udf_reduce_fn f, uint8_t op, uint32_t g, const group_head *head, size_t n) {
	udf_bytes acc = head->acc;
	bool has = head->flags & GROUP_ACC;
	int status = UDF_OK;
	if (op == OP_ADD) {
		for (size_t i = 0; i < n && status == UDF_OK; i++) {
			if (!has) {
				acc = m.recs[i].value;
				has = true;
				continue;
			}
			udf_bytes next = acc;
			if ((status = f(acc, m.recs[i].value, &next)) != UDF_OK) break;
			/* The result may be the function's buffer: keep a copy. */
			m.scratch.len = 0;
			reserve(&m.scratch, next.len);
			if (next.len) memmove(m.scratch.data, next.data, next.len);
			acc = (udf_bytes){m.scratch.data, next.len};
		}
		if (status == UDF_OK && !has) status = udf_error("udf: reduce called without a value");
	} else if (op == OP_MERGE) {
		status = f(head->acc, head->acc2, &acc);
	} else {
		status = udf_error("udf: reduce called with an unknown op");
	}
	if (status == UDF_OK) {
		put_entry(TAG_ACCUMULATOR, g);
		put_bytes(&m.out, acc);
	}
	return status;
}

/* run_join calls a join function for every pair of a group: left records
 * 0..n-1 of m.recs with right records n..n+right-1. */
static int run_join(udf_join_fn f, const group_head *head, uint32_t n, uint32_t right) {
	bool interval = !(head->flags & GROUP_WINDOW);
	int status = UDF_OK;
	for (uint32_t i = 0; i < n && status == UDF_OK; i++) {
		const udf_record *l = &m.recs[i];
		for (uint32_t j = n; j < n + right && status == UDF_OK; j++) {
			const udf_record *r = &m.recs[j];
			if (interval) m.pair_timestamp = l->timestamp > r->timestamp ? l->timestamp : r->timestamp;
			status = f(head->key, head->window, l, r);
		}
	}
	m.pair_timestamp = 0;
	return status;
}

/* call_window_state calls a window process function with state for group g
 * of the frame, whose records are in m.recs: it enters the group first, so
 * that its state calls act on the group's key and window. A module that
 * declares no states has no state to enter. */
static int call_window_state(const function *f, uint32_t g, udf_bytes key, udf_window w, size_t n) {
	if (m.nstates) platform_enter(g);
	m.ctx.key = key;
	m.ctx.window = true;
	m.ctx.active = true;
	int status = f->fn.window_state(&m.ctx, key, w, m.recs, n);
	m.ctx.active = false;
	m.ctx.window = false;
	return status;
}

void udf_evictor(const char *name, udf_evictor_fn fn) { add(name, KIND_EVICTOR, (function){.fn.evictor = fn}); }

void udf_evict(udf_eviction *e, size_t i) {
	if (i >= e->count) __builtin_trap();
	e->keep[i / 8] &= (uint8_t)~(1u << (i % 8));
}

bool udf_evicted(const udf_eviction *e, size_t i) { return i < e->count && !(e->keep[i / 8] & (1u << (i % 8))); }

/* run_evictor answers one window of an evictor call with its keep bitmap. */
static int run_evictor(udf_evictor_fn f, uint8_t op, uint32_t g, const group_head *head, size_t n) {
	if (op != OP_EVICT_BEFORE && op != OP_EVICT_AFTER) return udf_error("udf: evictor called with an unknown op");
	size_t size = (n + 7) / 8;
	if (size > m.keep_cap) {
		m.keep_cap = 2 * size;
		m.keep = grow(m.keep, m.keep_cap);
	}
	if (size) memset(m.keep, 0xff, size);
	if (n % 8) m.keep[size - 1] = (uint8_t)((1u << (n % 8)) - 1);
	udf_eviction e = {.key = head->key, .window = head->window, .watermark = m.ctx.watermark,
			  .after = op == OP_EVICT_AFTER, .records = m.recs, .count = n, .keep = m.keep};
	int status = f(&e);
	if (status == UDF_OK) {
		put_entry(TAG_ACCUMULATOR, g);
		put_bytes(&m.out, (udf_bytes){m.keep, size});
	}
	return status;
}

/* run_window runs a window function (aggregate, reduce, window_process,
 * session_gap) or a two-sided one (join, co_group) over a grouped frame. */
static void run_window(reader *r, const function *f) {
	uint8_t op = get_u8(r);
	m.ctx.watermark = get_i64(r);
	m.ctx.now = get_i64(r);
	uint32_t groups = get_u32(r), index = 0;
	for (uint32_t g = 0; g < groups && !r->msg; g++) {
		group_head head;
		if (!get_group(r, &head)) break;
		uint32_t n = get_records(r, 0), right = 0;
		if (head.flags & GROUP_TWO_SIDED) {
			if (f->kind == KIND_JOIN || f->kind == KIND_CO_GROUP) right = get_records(r, n);
			else skip_records(r);
		}
		if (r->msg) break;
		size_t mark = m.out.len;
		uint32_t marked = m.entries;
		int status = UDF_OK;
		m.base = (udf_record){.key = head.key, .value = no_key, .timestamp = head.window.end - 1};
		m.input_record = &m.base;
		m.index = g;
		switch (f->kind) {
		case KIND_AGGREGATE:
			status = run_aggregate(f->fn.aggregate, op, g, &head, n);
			break;
		case KIND_REDUCE:
			status = run_reduce(f->fn.reduce, op, g, &head, n);
			break;
		case KIND_WINDOW_PROCESS:
			if (f->with_state) {
				status = m.call_window_state(f, g, head.key, head.window, n);
				break;
			}
			m.flat_mapping = true;
			status = f->fn.window_process(head.key, head.window, m.recs, n);
			m.flat_mapping = false;
			break;
		case KIND_EVICTOR:
			status = run_evictor(f->fn.evictor, op, g, &head, n);
			break;
		case KIND_JOIN:
		case KIND_CO_GROUP:
			if (!(head.flags & GROUP_TWO_SIDED)) {
				status = udf_error("udf: join group without a right side");
				break;
			}
			m.flat_mapping = true;
			if (f->kind == KIND_JOIN) status = run_join(f->fn.join, &head, n, right);
			else status = f->fn.co_group(head.key, head.window, m.recs, n, m.recs + n, right);
			m.flat_mapping = false;
			break;
		default:
			for (uint32_t i = 0; i < n; i++, index++) {
				int64_t gap = 0;
				if (f->fn.session_gap(&m.recs[i], &gap) == UDF_OK) {
					put_entry(TAG_TIMESTAMP, index);
					put_i64(&m.out, gap);
				} else {
					put_entry(TAG_ERROR, index);
					put_bytes(&m.out, (udf_bytes){m.error.data, m.error.len});
				}
			}
		}
		if (status != UDF_OK) {
			m.out.len = mark;
			m.entries = marked;
			put_entry(TAG_ERROR, g);
			put_bytes(&m.out, (udf_bytes){m.error.data, m.error.len});
		}
	}
	if (r->msg || r->off != r->len) {
		fail_malformed(r, groups, " groups");
	} else {
		memcpy(m.out.data, &m.entries, 4);
	}
}

#ifndef __wasm__
/* A native pointer does not fit in pack's 32 bits: a native build keeps the
 * last region packed for the test harness (platform_harness.c). */
udf_bytes udf_native_packed;
#endif

static uint64_t pack(const void *p, size_t len) {
#ifndef __wasm__
	udf_native_packed = (udf_bytes){p, len};
#endif
	return (uint64_t)(uintptr_t)p << 32 | (uint32_t)len;
}

EXPORT("platform_abi_version") int32_t platform_abi_version(void) { return 1; }

EXPORT("platform_alloc") uint8_t *platform_alloc(uint32_t size) {
	ensure_registered();
	if (size > m.input_cap) {
		size_t cap = m.input_cap * 2 > MIN_INPUT ? m.input_cap * 2 : MIN_INPUT;
		if (cap < size) cap = size;
		free(m.input);
		m.input = grow(NULL, cap);
		m.input_cap = cap;
	}
	return m.input;
}

static void put_json_string(buffer *b, const char *s) {
	static const char hex[] = "0123456789abcdef";
	put_u8(b, '"');
	for (; *s; s++) {
		uint8_t c = (uint8_t)*s;
		if (c == '"' || c == '\\') {
			put_u8(b, '\\');
			put_u8(b, c);
		} else if (c < 0x20) {
			put_str(b, "\\u00");
			put_u8(b, (uint8_t)hex[c >> 4]);
			put_u8(b, (uint8_t)hex[c & 15]);
		} else {
			put_u8(b, c);
		}
	}
	put_u8(b, '"');
}

EXPORT("platform_describe") uint64_t platform_describe(void) {
	ensure_registered();
	m.desc.len = 0;
	put_str(&m.desc, "{\"abi\":1,\"functions\":[");
	for (size_t i = 0; i < m.nfuncs; i++) {
		if (i) put_u8(&m.desc, ',');
		put_str(&m.desc, "{\"name\":");
		put_json_string(&m.desc, m.funcs[i].name);
		put_str(&m.desc, ",\"kind\":\"");
		put_str(&m.desc, kind_names[m.funcs[i].kind]);
		put_str(&m.desc, "\"}");
	}
	put_u8(&m.desc, ']');
	if (m.nstates) {
		put_str(&m.desc, ",\"states\":[");
		for (size_t i = 0; i < m.nstates; i++) {
			if (i) put_u8(&m.desc, ',');
			put_str(&m.desc, "{\"name\":");
			put_json_string(&m.desc, m.states[i].name);
			put_str(&m.desc, ",\"kind\":\"");
			put_str(&m.desc, m.states[i].kind);
			put_u8(&m.desc, '"');
			if (m.states[i].ttl) {
				put_str(&m.desc, ",\"ttl\":");
				put_json_string(&m.desc, m.states[i].ttl);
			}
			if (m.states[i].broadcast) put_str(&m.desc, ",\"broadcast\":true");
			put_u8(&m.desc, '}');
		}
		put_u8(&m.desc, ']');
	}
	put_u8(&m.desc, '}');
	return pack(m.desc.data, m.desc.len);
}

void udf_async_request(const char *name, udf_async_request_fn fn) {
	add(name, KIND_LOOKUP_REQUEST, (function){.fn.lookup_request = fn});
}
void udf_async_result(const char *name, udf_async_result_fn fn) {
	add(name, KIND_LOOKUP_RESULT, (function){.fn.lookup_result = fn});
}

/* Appends a lookup request for the current input (docs/ABI.md, Async
 * lookups): a record entry whose value is kind | target | key. */
static void ask(uint8_t kind, udf_bytes target, udf_bytes key) {
	if (!m.asking) __builtin_trap();
	put_entry(TAG_RECORD, m.index);
	put_u8(&m.out, 0);
	put_u32(&m.out, (uint32_t)(1 + 4 + target.len + 4 + key.len));
	put_u8(&m.out, kind);
	put_bytes(&m.out, target);
	put_bytes(&m.out, key);
}

void udf_ask_kv(udf_bytes bucket, udf_bytes key) { ask(1, bucket, key); }
void udf_ask_http(udf_bytes url) { ask(2, url, (udf_bytes){(const uint8_t *)"", 0}); }

/* Decodes the results that follow rec in a lookup result frame and runs f
 * over them; its entries, or an error entry if it fails. */
static void run_lookup_result(reader *r, const function *f, const udf_record *rec) {
	uint32_t n = get_u32(r);
	if (r->msg) return;
	if ((uint64_t)n * 5 > r->len - r->off) {
		r->msg = "lookup results";
		return;
	}
	if (n > m.results_cap) {
		m.results_cap = 2 * n;
		m.results = grow(m.results, m.results_cap * sizeof(udf_lookup_result));
	}
	for (uint32_t i = 0; i < n && !r->msg; i++) {
		m.results[i].found = get_u8(r) == 0;
		m.results[i].value = get_bytes(r);
	}
	if (r->msg) return;
	m.input_record = rec;
	size_t mark = m.out.len;
	uint32_t marked = m.entries;
	m.flat_mapping = true;
	int status = f->fn.lookup_result(rec, m.results, n);
	m.flat_mapping = false;
	if (status != UDF_OK) {
		m.out.len = mark;
		m.entries = marked;
		put_entry(TAG_ERROR, m.index);
		put_bytes(&m.out, (udf_bytes){m.error.data, m.error.len});
	}
}

EXPORT("platform_call") uint64_t platform_call(uint32_t fn, const uint8_t *ptr, uint32_t len) {
	ensure_registered();
	m.out.len = 0;
	m.entries = 0;
	if (ptr < m.input || (size_t)(ptr - m.input) + len > m.input_cap) {
		static const char msg[] = "udf: the input frame is not inside the region platform_alloc returned";
		fail_frame((const uint8_t *)msg, sizeof msg - 1);
		return pack(m.out.data, m.out.len);
	}
	if (fn >= m.nfuncs) {
		m.msg.len = 0;
		put_str(&m.msg, "udf: no function with index ");
		put_uint(&m.msg, fn);
		put_str(&m.msg, "; the module has ");
		put_uint(&m.msg, m.nfuncs);
		fail_frame(m.msg.data, m.msg.len);
		return pack(m.out.data, m.out.len);
	}
	reader r = {.buf = ptr, .len = len};
	put_u32(&m.out, 0);
	const function *f = &m.funcs[fn];
	if (f->kind == KIND_PROCESS || f->kind == KIND_ON_TIMER || f->kind == KIND_PROCESS_BROADCAST) {
		m.run_keyed(&r, f);
		return pack(m.out.data, m.out.len);
	}
	if ((f->kind >= KIND_AGGREGATE && f->kind <= KIND_CO_GROUP) || f->kind == KIND_EVICTOR) {
		run_window(&r, f);
		return pack(m.out.data, m.out.len);
	}
	uint32_t records = get_u32(&r);
	udf_record rec;
	for (m.index = 0; m.index < records && !r.msg; m.index++) {
		m.nheaders = 0;
		if (!get_record(&r, &rec)) break;
		if (f->kind == KIND_LOOKUP_RESULT) {
			run_lookup_result(&r, f, &rec);
		} else {
			run(f, &rec);
		}
	}
	if (r.msg || r.off != r.len) {
		fail_malformed(&r, records, " records");
	} else {
		memcpy(m.out.data, &m.entries, 4);
	}
	return pack(m.out.data, m.out.len);
}
