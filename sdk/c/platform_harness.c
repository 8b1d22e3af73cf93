/*
 * platform_harness.c: the native test harness (platform_harness.h). It
 * defines the platform's imports that platform_udf.c calls, over an
 * in-memory store, and drives the module's exports with grouped frames.
 * The store is plain arrays searched linearly: tests hold little state.
 */
#include "platform_harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform_json.h"

#ifdef __wasm__
#error "platform_harness.c is for native builds; the platform provides the imports inside WebAssembly"
#endif

/* The module's exports (platform_udf.c) and the region it packed last. */
uint8_t *platform_alloc(uint32_t size);
uint64_t platform_describe(void);
uint64_t platform_call(uint32_t fn, const uint8_t *ptr, uint32_t len);
extern udf_bytes udf_native_packed;

enum { OP_PROCESS = 0, GROUP_TIMER = 0x08, TAG_RECORD = 1, TAG_ERROR = 2, TAG_OUTPUT = 8 };
enum { HAS_KEY = 0x01, HAS_TIMESTAMP = 0x02, HAS_HEADERS = 0x04 };
enum { KIND_VALUE, KIND_LIST, KIND_MAP };

/* A grow-only byte buffer. */
typedef struct buf {
	uint8_t *data;
	size_t len, cap;
} buf;

/* A declared state, from the module's self-description. */
typedef struct decl {
	char name[128];
	int kind;
	int64_t ttl;
	bool broadcast;
} decl;

/* An entry of state: of a value state, one element of a list state (in
 * append order) or one entry of a map state (mkey its user key). */
typedef struct entry {
	uint32_t state;
	udf_bytes key, mkey, value;
	int64_t at;
} entry;

static struct {
	bool described;
	decl *decls;
	size_t ndecls;
	char on_timer[128];
	int64_t now, watermark;
	entry *entries;
	size_t nentries, entries_cap;
	udf_harness_timer *timers;
	size_t ntimers, timers_cap;
	/* The keys of the groups of the call in progress, the group entered
	 * (-1 before enter) and whether it is a process_broadcast call. */
	udf_bytes *groups;
	size_t ngroups;
	long current;
	bool in_call, broadcasting;
	/* Scratch for frames and reads; allocations valid until the next
	 * harness call. */
	buf frame, read;
	void **owned;
	size_t nowned, owned_cap;
	udf_harness_output *outs;
	size_t nouts, outs_cap;
	char error[512];
} h = {.watermark = INT64_MIN, .current = -1};

static void *grow(void *p, size_t size) {
	void *q = realloc(p, size ? size : 1);
	if (!q) abort();
	return q;
}

/* misuse reports a bug of the module under test and aborts, as the
 * platform traps the call. */
static void misuse(const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	fputs("udf harness: ", stderr);
	vfprintf(stderr, format, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static void put(buf *b, const void *p, size_t n) {
	if (b->len + n > b->cap) {
		b->cap = 2 * (b->len + n);
		b->data = grow(b->data, b->cap);
	}
	if (n) memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_u8(buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(buf *b, uint32_t v) {
	uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	put(b, le, 4);
}
static void put_i64(buf *b, int64_t v) {
	uint8_t le[8];
	for (int i = 0; i < 8; i++) le[i] = (uint8_t)((uint64_t)v >> (8 * i));
	put(b, le, 8);
}
static void put_bytes(buf *b, udf_bytes v) {
	put_u32(b, (uint32_t)v.len);
	put(b, v.data, v.len);
}

/* own keeps p until the next harness call. */
static void *own(void *p) {
	if (h.nowned == h.owned_cap) {
		h.owned_cap = 2 * h.owned_cap + 16;
		h.owned = grow(h.owned, h.owned_cap * sizeof *h.owned);
	}
	return h.owned[h.nowned++] = p;
}

static void release(void) {
	for (size_t i = 0; i < h.nowned; i++) free(h.owned[i]);
	h.nowned = 0;
	h.nouts = 0;
}

/* copy is a heap copy of b, freed by the caller. */
static udf_bytes copy(udf_bytes b) {
	uint8_t *p = grow(NULL, b.len);
	if (b.len) memcpy(p, b.data, b.len);
	return (udf_bytes){p, b.len};
}

static bool same(udf_bytes a, udf_bytes b) { return udf_bytes_equal(a, b); }

static int compare(udf_bytes a, udf_bytes b) {
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.data, b.data, n) : 0;
	return c ? c : (a.len > b.len) - (a.len < b.len);
}

/* Parses a Go duration ("1h", "90s", "1h30m", "250ms") into milliseconds;
 * false when it is not one. */
static bool ttl_millis(const char *s, int64_t *ms) {
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}};
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return true;
	}
	double total = 0;
	if (!*s) return false;
	while (*s) {
		char *end;
		if (!(*s >= '0' && *s <= '9') && *s != '.') return false;
		double n = strtod(s, &end);
		if (end == s) return false;
		s = end;
		size_t u = 0;
		while (s[u] && !(s[u] >= '0' && s[u] <= '9') && s[u] != '.') u++;
		size_t i = 0;
		for (; i < sizeof units / sizeof units[0]; i++) {
			if (strlen(units[i].unit) == u && strncmp(s, units[i].unit, u) == 0) break;
		}
		if (i == sizeof units / sizeof units[0]) return false;
		total += n * units[i].ms;
		s += u;
	}
	*ms = (int64_t)total;
	return true;
}

/* json_text copies the JSON string at path of doc into out; false when
 * there is none. */
static bool json_text(udf_bytes doc, const char *const *path, size_t depth, char *out, size_t cap) {
	size_t n;
	if (!udf_json_get_string(doc, path, depth, (uint8_t *)out, cap - 1, &n)) return false;
	out[n] = 0;
	return true;
}

/* describe reads the module's states from its self-description, once. */
static void describe(void) {
	if (h.described) return;
	h.described = true;
	platform_describe();
	udf_bytes doc = copy(udf_native_packed);
	for (size_t i = 0;; i++) {
		char index[24], kind[16], ttl[64];
		snprintf(index, sizeof index, "%zu", i);
		decl d = {0};
		if (!json_text(doc, UDF_JSON_PATH("states", index, "name"), d.name, sizeof d.name)) break;
		json_text(doc, UDF_JSON_PATH("states", index, "kind"), kind, sizeof kind);
		d.kind = strcmp(kind, "value") == 0 ? KIND_VALUE : strcmp(kind, "list") == 0 ? KIND_LIST : KIND_MAP;
		if (json_text(doc, UDF_JSON_PATH("states", index, "ttl"), ttl, sizeof ttl) && !ttl_millis(ttl, &d.ttl)) {
			misuse("state \"%s\": ttl \"%s\" is not a duration", d.name, ttl);
		}
		udf_json_get_bool(doc, UDF_JSON_PATH("states", index, "broadcast"), &d.broadcast);
		h.decls = grow(h.decls, (h.ndecls + 1) * sizeof *h.decls);
		h.decls[h.ndecls++] = d;
	}
	free((void *)doc.data);
}

/* function finds the module's function name of kind; -1 and the error set
 * when there is none. */
static long function(const char *name, const char *kind) {
	platform_describe();
	udf_bytes doc = udf_native_packed;
	for (size_t i = 0;; i++) {
		char index[24], fn[128], k[32];
		snprintf(index, sizeof index, "%zu", i);
		if (!json_text(doc, UDF_JSON_PATH("functions", index, "name"), fn, sizeof fn)) break;
		if (strcmp(fn, name) != 0) continue;
		json_text(doc, UDF_JSON_PATH("functions", index, "kind"), k, sizeof k);
		if (strcmp(k, kind) != 0) {
			snprintf(h.error, sizeof h.error, "udf: \"%s\" is a %s function, not %s", name, k, kind);
			return -1;
		}
		return (long)i;
	}
	snprintf(h.error, sizeof h.error, "udf: no function \"%s\" is registered", name);
	return -1;
}

static void free_entry(entry *e) {
	free((void *)e->key.data);
	free((void *)e->mkey.data);
	free((void *)e->value.data);
}

void udf_harness_reset(const char *on_timer) {
	release();
	describe();
	for (size_t i = 0; i < h.nentries; i++) free_entry(&h.entries[i]);
	for (size_t i = 0; i < h.ntimers; i++) free((void *)h.timers[i].key.data);
	h.nentries = h.ntimers = 0;
	h.now = 0;
	h.watermark = INT64_MIN;
	udf_harness_on_timer(on_timer);
}

void udf_harness_on_timer(const char *on_timer) {
	snprintf(h.on_timer, sizeof h.on_timer, "%s", on_timer ? on_timer : "");
}

int64_t udf_harness_watermark(void) { return h.watermark; }
int64_t udf_harness_processing_time(void) { return h.now; }
const char *udf_harness_error(void) { return h.error; }

static bool expired(uint32_t state, const entry *e) {
	int64_t ttl = h.decls[state].ttl;
	return ttl > 0 && h.now >= e->at + ttl;
}

/* The stand-in for the platform's imports. */

/* slot_key is the key state of the group entered is kept under: none for
 * a broadcast state. It checks the state is declared of kind. */
static udf_bytes slot_key(uint32_t state, int kind) {
	if (!h.in_call) misuse("keyed state and timers exist natively only inside a harness call");
	if (state >= h.ndecls || h.decls[state].kind != kind) misuse("state %u is not a declared state of this kind", state);
	if (h.decls[state].broadcast) return (udf_bytes){(const uint8_t *)"", 0};
	if (h.broadcasting) misuse("state \"%s\" is keyed, and a process_broadcast function has no key", h.decls[state].name);
	if (h.current < 0) misuse("state used before entering a group");
	return h.groups[h.current];
}

static void writable(uint32_t state) {
	if (state < h.ndecls && h.decls[state].broadcast && !h.broadcasting) {
		misuse("broadcast state \"%s\" is read-only outside process_broadcast", h.decls[state].name);
	}
}

/* find is the entry of state under key and user key mkey (NULL: any). */
static entry *find(uint32_t state, udf_bytes key, const udf_bytes *mkey) {
	for (size_t i = 0; i < h.nentries; i++) {
		entry *e = &h.entries[i];
		if (e->state == state && same(e->key, key) && (!mkey || same(e->mkey, *mkey))) return e;
	}
	return NULL;
}

static void append(uint32_t state, udf_bytes key, udf_bytes mkey, udf_bytes value) {
	if (h.nentries == h.entries_cap) {
		h.entries_cap = 2 * h.entries_cap + 16;
		h.entries = grow(h.entries, h.entries_cap * sizeof *h.entries);
	}
	h.entries[h.nentries++] = (entry){state, copy(key), copy(mkey), copy(value), h.now};
}

/* replace sets e's value, written now. */
static void replace(entry *e, udf_bytes value) {
	free((void *)e->value.data);
	e->value = copy(value);
	e->at = h.now;
}

/* remove_where drops the entries of state under key (and user key mkey),
 * keeping the others in order. */
static void remove_where(uint32_t state, udf_bytes key, const udf_bytes *mkey) {
	size_t kept = 0;
	for (size_t i = 0; i < h.nentries; i++) {
		entry *e = &h.entries[i];
		if (e->state == state && same(e->key, key) && (!mkey || same(e->mkey, *mkey))) {
			free_entry(e);
		} else {
			h.entries[kept++] = *e;
		}
	}
	h.nentries = kept;
}

/* deliver copies data into out if it fits and returns its length. */
static int32_t deliver(uint8_t *out, size_t cap, const uint8_t *data, size_t len) {
	if (len <= cap && len) memcpy(out, data, len);
	return (int32_t)len;
}

void platform_log(int32_t level, const uint8_t *ptr, size_t len) {
	fprintf(stderr, "log %d: %.*s\n", level, (int)len, (const char *)ptr);
}

void platform_enter(uint32_t group) {
	if (!h.in_call || group >= h.ngroups) misuse("enter(%u) with %zu groups", group, h.ngroups);
	h.current = group;
}

int32_t platform_value_get(uint32_t state, uint8_t *out, size_t cap) {
	entry *e = find(state, slot_key(state, KIND_VALUE), NULL);
	if (!e || expired(state, e)) return -1;
	return deliver(out, cap, e->value.data, e->value.len);
}

void platform_value_set(uint32_t state, const uint8_t *ptr, size_t len) {
	udf_bytes key = slot_key(state, KIND_VALUE), v = {ptr, len};
	entry *e = find(state, key, NULL);
	if (e) {
		replace(e, v);
	} else {
		append(state, key, (udf_bytes){0}, v);
	}
}

void platform_state_clear(uint32_t state) {
	if (state >= h.ndecls) misuse("state %u is not declared", state);
	writable(state);
	remove_where(state, slot_key(state, h.decls[state].kind), NULL);
}

void platform_list_append(uint32_t state, const uint8_t *ptr, size_t len) {
	append(state, slot_key(state, KIND_LIST), (udf_bytes){0}, (udf_bytes){ptr, len});
}

int32_t platform_list_get(uint32_t state, uint8_t *out, size_t cap) {
	udf_bytes key = slot_key(state, KIND_LIST);
	h.read.len = 0;
	put_u32(&h.read, 0);
	uint32_t n = 0;
	for (size_t i = 0; i < h.nentries; i++) {
		entry *e = &h.entries[i];
		if (e->state == state && same(e->key, key) && !expired(state, e)) {
			put_bytes(&h.read, e->value);
			n++;
		}
	}
	for (int i = 0; i < 4; i++) h.read.data[i] = (uint8_t)(n >> (8 * i));
	return deliver(out, cap, h.read.data, h.read.len);
}

int32_t platform_map_get(uint32_t state, const uint8_t *k, size_t klen, uint8_t *out, size_t cap) {
	udf_bytes mkey = {k, klen};
	entry *e = find(state, slot_key(state, KIND_MAP), &mkey);
	if (!e || expired(state, e)) return -1;
	return deliver(out, cap, e->value.data, e->value.len);
}

void platform_map_put(uint32_t state, const uint8_t *k, size_t klen, const uint8_t *ptr, size_t len) {
	writable(state);
	udf_bytes key = slot_key(state, KIND_MAP), mkey = {k, klen}, v = {ptr, len};
	entry *e = find(state, key, &mkey);
	if (e) {
		replace(e, v);
	} else {
		append(state, key, mkey, v);
	}
}

void platform_map_remove(uint32_t state, const uint8_t *k, size_t klen) {
	writable(state);
	udf_bytes mkey = {k, klen};
	remove_where(state, slot_key(state, KIND_MAP), &mkey);
}

static int by_user_key(const void *a, const void *b) {
	return compare((*(entry *const *)a)->mkey, (*(entry *const *)b)->mkey);
}

/* map_of lists the unexpired entries of state under key by user key; the
 * array is the caller's to free. */
static size_t map_of(uint32_t state, udf_bytes key, entry ***out) {
	entry **es = grow(NULL, h.nentries * sizeof *es);
	size_t n = 0;
	for (size_t i = 0; i < h.nentries; i++) {
		entry *e = &h.entries[i];
		if (e->state == state && same(e->key, key) && !expired(state, e)) es[n++] = e;
	}
	qsort(es, n, sizeof *es, by_user_key);
	*out = es;
	return n;
}

int32_t platform_map_entries(uint32_t state, uint8_t *out, size_t cap) {
	entry **es;
	size_t n = map_of(state, slot_key(state, KIND_MAP), &es);
	h.read.len = 0;
	put_u32(&h.read, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_bytes(&h.read, es[i]->mkey);
		put_bytes(&h.read, es[i]->value);
	}
	free(es);
	return deliver(out, cap, h.read.data, h.read.len);
}

static udf_bytes timer_key(void) {
	if (!h.in_call) misuse("timers exist natively only inside a harness call");
	if (h.broadcasting) misuse("a process_broadcast function has no timers");
	if (h.current < 0) misuse("a timer set before entering a group");
	return h.groups[h.current];
}

static long find_timer(int domain, int64_t ts, udf_bytes key) {
	for (size_t i = 0; i < h.ntimers; i++) {
		udf_harness_timer *t = &h.timers[i];
		if (t->domain == domain && t->timestamp == ts && same(t->key, key)) return (long)i;
	}
	return -1;
}

void platform_timer_register(uint32_t domain, int64_t ts) {
	udf_bytes key = timer_key();
	if (find_timer((int)domain, ts, key) >= 0) return;
	if (h.ntimers == h.timers_cap) {
		h.timers_cap = 2 * h.timers_cap + 16;
		h.timers = grow(h.timers, h.timers_cap * sizeof *h.timers);
	}
	h.timers[h.ntimers++] = (udf_harness_timer){copy(key), ts, (int)domain};
}

void platform_timer_delete(uint32_t domain, int64_t ts) {
	long i = find_timer((int)domain, ts, timer_key());
	if (i < 0) return;
	free((void *)h.timers[i].key.data);
	h.timers[i] = h.timers[--h.ntimers];
}

/* Driving the module. */

static int by_firing_order(const void *pa, const void *pb) {
	const udf_harness_timer *a = pa, *b = pb;
	if (a->domain != b->domain) return a->domain - b->domain;
	if (a->timestamp != b->timestamp) return a->timestamp < b->timestamp ? -1 : 1;
	return compare(a->key, b->key);
}

size_t udf_harness_timers(const udf_harness_timer **timers) {
	release();
	udf_harness_timer *ts = own(grow(NULL, h.ntimers * sizeof *ts));
	if (h.ntimers) memcpy(ts, h.timers, h.ntimers * sizeof *ts);
	qsort(ts, h.ntimers, sizeof *ts, by_firing_order);
	*timers = ts;
	return h.ntimers;
}

/* What an output inherits from its input. */
typedef struct base {
	udf_bytes key;
	int64_t timestamp;
	size_t header_count;
	const udf_header *headers;
} base;

/* A reader over the module's output frame. */
typedef struct reader {
	const uint8_t *p;
	size_t len, off;
	bool bad;
} reader;

static const uint8_t *take(reader *r, size_t n) {
	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	r->off += n;
	return r->p + r->off - n;
}

static uint32_t get_u32(reader *r) {
	const uint8_t *b = take(r, 4);
	return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
}

static int64_t get_i64(reader *r) {
	const uint8_t *b = take(r, 8);
	uint64_t v = 0;
	for (int i = 7; b && i >= 0; i--) v = v << 8 | b[i];
	return (int64_t)v;
}

static udf_bytes own_copy(udf_bytes b) {
	udf_bytes c = copy(b);
	own((void *)c.data);
	return c;
}

/* get_bytes reads length-prefixed bytes, copied and kept until the next
 * harness call. */
static udf_bytes get_bytes(reader *r) {
	uint32_t n = get_u32(r);
	const uint8_t *b = take(r, n);
	if (!b) return (udf_bytes){(const uint8_t *)"", 0};
	return own_copy((udf_bytes){b, n});
}

static char *get_text(reader *r) {
	udf_bytes b = get_bytes(r);
	char *s = own(grow(NULL, b.len + 1));
	memcpy(s, b.data, b.len);
	s[b.len] = 0;
	return s;
}

static udf_harness_output *next_output(void) {
	if (h.nouts == h.outs_cap) {
		h.outs_cap = 2 * h.outs_cap + 16;
		h.outs = grow(h.outs, h.outs_cap * sizeof *h.outs);
	}
	udf_harness_output *o = &h.outs[h.nouts++];
	*o = (udf_harness_output){0};
	return o;
}

/* resolve decodes the module's output frame into h.outs, after what is
 * there, each output's index shifted by first; false with the error set
 * when the whole call failed or the frame is malformed. */
static bool resolve(udf_bytes frame, const base *inputs, size_t ninputs, uint32_t first) {
	reader r = {frame.data, frame.len, 0, false};
	uint32_t n = get_u32(&r);
	for (uint32_t i = 0; i < n && !r.bad; i++) {
		const uint8_t *tag = take(&r, 1);
		uint32_t index = get_u32(&r);
		if (r.bad) break;
		if (*tag == TAG_ERROR) {
			char *msg = get_text(&r);
			if (index == UINT32_MAX) {
				snprintf(h.error, sizeof h.error, "udf: the whole batch failed: %s", msg);
				return false;
			}
			if (index >= ninputs) break;
			udf_harness_output *o = next_output();
			o->index = first + index;
			o->error = msg;
			continue;
		}
		if ((*tag != TAG_RECORD && *tag != TAG_OUTPUT) || index >= ninputs) {
			snprintf(h.error, sizeof h.error, "udf: output entry %u has tag %u and input %u of %zu", i, *tag, index, ninputs);
			return false;
		}
		udf_harness_output *o = next_output();
		const base *b = &inputs[index];
		o->index = first + index;
		if (*tag == TAG_OUTPUT) o->side = get_text(&r);
		const uint8_t *flags = take(&r, 1);
		if (!flags) break;
		o->key = *flags & HAS_KEY ? get_bytes(&r) : own_copy(b->key);
		o->value = get_bytes(&r);
		o->timestamp = *flags & HAS_TIMESTAMP ? get_i64(&r) : b->timestamp;
		o->header_count = b->header_count;
		o->headers = b->headers;
		if (*flags & HAS_HEADERS) {
			uint32_t count = get_u32(&r);
			if (count > r.len) break;
			udf_header *hs = own(grow(NULL, count * sizeof *hs));
			for (uint32_t j = 0; j < count; j++) {
				hs[j].name = get_bytes(&r);
				hs[j].value = get_bytes(&r);
			}
			o->header_count = count;
			o->headers = hs;
		}
	}
	if (r.bad || r.off != r.len) {
		snprintf(h.error, sizeof h.error, "udf: malformed output frame at byte %zu of %zu", r.off, r.len);
		return false;
	}
	return true;
}

/* head starts a grouped frame of groups groups in h.frame. */
static void head(uint32_t groups) {
	h.frame.len = 0;
	put_u8(&h.frame, OP_PROCESS);
	put_i64(&h.frame, h.watermark);
	put_i64(&h.frame, h.now);
	put_u32(&h.frame, groups);
}

static void put_record(udf_bytes key, const udf_record *r) {
	put_bytes(&h.frame, key);
	put_bytes(&h.frame, r->value);
	put_i64(&h.frame, r->timestamp);
	put_u32(&h.frame, (uint32_t)r->header_count);
	for (size_t i = 0; i < r->header_count; i++) {
		put_bytes(&h.frame, r->headers[i].name);
		put_bytes(&h.frame, r->headers[i].value);
	}
}

/* call runs function fn over h.frame, whose groups have keys, and returns
 * the output frame. */
static udf_bytes call(long fn, udf_bytes *keys, size_t nkeys, bool broadcasting) {
	if (h.in_call) misuse("a harness call runs inside another");
	uint8_t *in = platform_alloc((uint32_t)h.frame.len);
	memcpy(in, h.frame.data, h.frame.len);
	h.groups = keys;
	h.ngroups = nkeys;
	h.current = -1;
	h.in_call = true;
	h.broadcasting = broadcasting;
	platform_call((uint32_t)fn, in, (uint32_t)h.frame.len);
	h.in_call = h.broadcasting = false;
	h.groups = NULL;
	h.ngroups = 0;
	return udf_native_packed;
}

static long records_call(const char *function_name, const char *kind, udf_bytes key, const udf_record *records,
			 size_t count, bool broadcasting, const udf_harness_output **out) {
	release();
	describe();
	long fn = function(function_name, kind);
	if (fn < 0) return -1;
	head(1);
	put_u8(&h.frame, 0);
	put_bytes(&h.frame, key);
	put_u32(&h.frame, (uint32_t)count);
	base *inputs = own(grow(NULL, count * sizeof *inputs));
	for (size_t i = 0; i < count; i++) {
		put_record(key, &records[i]);
		inputs[i] = (base){key, records[i].timestamp, records[i].header_count, records[i].headers};
	}
	udf_bytes frame = call(fn, &key, 1, broadcasting);
	if (!resolve(frame, inputs, count, 0)) return -1;
	*out = h.outs;
	return (long)h.nouts;
}

long udf_harness_process(const char *function_name, udf_bytes key, const udf_record *records, size_t count,
			 const udf_harness_output **out) {
	return records_call(function_name, "process", key, records, count, false, out);
}

long udf_harness_process_broadcast(const char *function_name, const udf_record *records, size_t count,
				   const udf_harness_output **out) {
	return records_call(function_name, "process_broadcast", (udf_bytes){(const uint8_t *)"", 0}, records, count,
			    true, out);
}

/* fire runs the on_timer function over the domain's timers due at up_to,
 * again for timers it registers that are due too. */
static long fire(int domain, int64_t up_to, const udf_harness_output **out) {
	release();
	describe();
	uint32_t fired = 0;
	for (;;) {
		size_t ndue = 0;
		for (size_t i = 0; i < h.ntimers; i++) ndue += h.timers[i].domain == domain && h.timers[i].timestamp <= up_to;
		if (!ndue) break;
		if (!h.on_timer[0]) {
			snprintf(h.error, sizeof h.error, "udf: %zu timers fired and the harness has no on_timer function", ndue);
			return -1;
		}
		long fn = function(h.on_timer, "on_timer");
		if (fn < 0) return -1;
		udf_harness_timer *due = own(grow(NULL, ndue * sizeof *due));
		size_t n = 0, kept = 0;
		for (size_t i = 0; i < h.ntimers; i++) {
			udf_harness_timer t = h.timers[i];
			if (t.domain == domain && t.timestamp <= up_to) {
				own((void *)t.key.data);
				due[n++] = t;
			} else {
				h.timers[kept++] = t;
			}
		}
		h.ntimers = kept;
		qsort(due, n, sizeof *due, by_firing_order);
		head((uint32_t)n);
		udf_bytes *keys = own(grow(NULL, n * sizeof *keys));
		base *inputs = own(grow(NULL, n * sizeof *inputs));
		for (size_t i = 0; i < n; i++) {
			put_u8(&h.frame, GROUP_TIMER);
			put_bytes(&h.frame, due[i].key);
			put_i64(&h.frame, due[i].timestamp);
			put_u8(&h.frame, (uint8_t)domain);
			put_u32(&h.frame, 0);
			keys[i] = due[i].key;
			inputs[i] = (base){due[i].key, due[i].timestamp, 0, NULL};
		}
		udf_bytes frame = call(fn, keys, n, false);
		if (!resolve(frame, inputs, n, fired)) return -1;
		fired += (uint32_t)n;
	}
	*out = h.outs;
	return (long)h.nouts;
}

long udf_harness_advance_watermark(int64_t watermark, const udf_harness_output **out) {
	if (watermark > h.watermark) h.watermark = watermark;
	return fire(UDF_EVENT_TIME, h.watermark, out);
}

long udf_harness_set_processing_time(int64_t ms, const udf_harness_output **out) {
	if (ms > h.now) h.now = ms;
	return fire(UDF_PROCESSING_TIME, h.now, out);
}

/* named is the index of the declared state name of kind, and the key it is
 * kept under for key; -1 when there is none. */
static long named(const char *name, int kind, udf_bytes *key) {
	describe();
	for (size_t i = 0; i < h.ndecls; i++) {
		if (strcmp(h.decls[i].name, name) == 0 && h.decls[i].kind == kind) {
			if (h.decls[i].broadcast) *key = (udf_bytes){(const uint8_t *)"", 0};
			return (long)i;
		}
	}
	return -1;
}

bool udf_harness_value(const char *state, udf_bytes key, udf_bytes *value) {
	release();
	long id = named(state, KIND_VALUE, &key);
	if (id < 0) return false;
	entry *e = find((uint32_t)id, key, NULL);
	if (!e || expired((uint32_t)id, e)) return false;
	*value = e->value;
	return true;
}

size_t udf_harness_list(const char *state, udf_bytes key, const udf_bytes **values) {
	release();
	long id = named(state, KIND_LIST, &key);
	udf_bytes *vs = own(grow(NULL, h.nentries * sizeof *vs));
	size_t n = 0;
	for (size_t i = 0; id >= 0 && i < h.nentries; i++) {
		entry *e = &h.entries[i];
		if (e->state == (uint32_t)id && same(e->key, key) && !expired((uint32_t)id, e)) vs[n++] = e->value;
	}
	*values = vs;
	return n;
}

size_t udf_harness_map(const char *state, udf_bytes key, const udf_entry **entries) {
	release();
	long id = named(state, KIND_MAP, &key);
	udf_entry *out = own(grow(NULL, h.nentries * sizeof *out));
	size_t n = 0;
	if (id >= 0) {
		entry **es;
		n = map_of((uint32_t)id, key, &es);
		for (size_t i = 0; i < n; i++) out[i] = (udf_entry){es[i]->mkey, es[i]->value};
		free(es);
	}
	*entries = out;
	return n;
}
