/*
 * reprise_adapter.h — single-header C SDK for reprise endpoint adapters,
 * ABI v1 (docs/format/adapter-abi.md in the reprise repository).
 *
 * Use: in exactly one .c file
 *
 *     #define RP_IMPLEMENTATION
 *     #include "reprise_adapter.h"
 *
 * and define the callbacks declared under "Your adapter" below. Build a
 * reactor module with clang and wasi-libc:
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -O2 -o my.wasm my.c
 *
 * The header implements every ABI export (buffers, struct encoding, batch
 * decoding) and offers a small allocation-free JSON scanner (rp_json_*).
 */
#ifndef REPRISE_ADAPTER_H
#define REPRISE_ADAPTER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- Types ---------------------------------------------------------- */

typedef struct { const uint8_t *p; uint32_t n; } rp_bytes;

enum { RP_POST = 0, RP_GET = 1, RP_PUT = 2 };
enum { RP_HOLE_TEXT = 1, RP_HOLE_TOKENS = 2, RP_HOLE_MESSAGES = 3 };
enum { RP_BUILD_STREAM = 1, RP_BUILD_WARMUP = 2, RP_BUILD_HAS_RAW = 4, RP_BUILD_FIRST_TURN = 8, RP_BUILD_HISTORY = 16 };
enum { RP_OPEN_STREAM = 1, RP_OPEN_CAPTURE = 2 };
enum { RP_EV_COMMENT = 1, RP_EV_DONE = 2, RP_EV_WHOLE_BODY = 4, RP_EV_NON_OK = 8 };
enum { RP_IGNORE = 0, RP_CONTENT = 1, RP_REASONING = 2, RP_TOOL_CALL = 3, RP_USAGE = 4, RP_ERROR = 5, RP_FINISH = 6, RP_META = 7 };
enum { RP_FLAG_TEXT_CAPTURED = 1, RP_FLAG_TOKENS_EXACT = 2, RP_FLAG_REFUSAL = 4 };
enum { RP_FINISH_UNKNOWN = 0, RP_FINISH_STOP = 1, RP_FINISH_LENGTH = 2, RP_FINISH_TOOL_CALLS = 3, RP_FINISH_CONTENT_FILTER = 4, RP_FINISH_ERROR = 5 };
enum { RP_VALID_PROMPT = 1, RP_VALID_COMPLETION = 2, RP_VALID_REASONING = 4, RP_VALID_CACHED = 8, RP_VALID_FINISH = 16, RP_VALID_ERROR = 32 };
#define RP_TOKENS_UNKNOWN 0xFFFFFFFFu

/* One request's fields (ABI §3). Pointers are valid during rp_adapter_build. */
typedef struct {
    uint32_t flags;
    int64_t trace_row, offset_ns;
    uint32_t input_tokens, max_tokens, session, turn, block_size, n_hash;
    const uint8_t *hash_ids; /* n_hash little-endian u64 */
    rp_bytes raw, history;
    uint64_t seed;
    uint32_t prompt_text_bytes, prompt_tokens;
} rp_build_in;

/* The request being built. Use the rp_w_* helpers. */
typedef struct rp_writer rp_writer;

/* One framed event (ABI §4). Pointers are valid during rp_adapter_parse. */
typedef struct {
    uint32_t index;
    uint16_t flags;
    int end; /* last event of the stream */
    rp_bytes name, data;
} rp_event;

typedef struct {
    uint8_t kind, flags;
    uint16_t choice;
    uint32_t text_bytes, tokens, aux0, aux1;
} rp_record;

typedef struct rp_records rp_records;

/* Final summary (ABI §5). */
typedef struct {
    uint32_t valid, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens;
    uint32_t finish, choices, error_code;
    rp_bytes message, extras; /* must stay valid until rp_adapter_close returns */
} rp_summary;

/* ---- Your adapter: define these ------------------------------------ */

/* Description JSON without the "abi", "builds" and "parses" keys, e.g.
 * {"name":"x","version":"1","path":"/generate"}: return a static string. */
const char *rp_adapter_describe(void);
/* Returns 0, or non-zero with *err set to a static message. */
int rp_adapter_configure(rp_bytes config_json, const char **err);
/* Define RP_NO_BUILD to make a parse-only adapter. */
int rp_adapter_build(const rp_build_in *in, rp_writer *w, const char **err);
/* Define RP_NO_PARSE to make a build-only adapter. */
void rp_adapter_open(uint32_t ctx, uint32_t flags);
int rp_adapter_parse(uint32_t ctx, const rp_event *ev, rp_records *out, const char **err);
int rp_adapter_close(uint32_t ctx, rp_summary *s, const char **err);

/* ---- Helpers -------------------------------------------------------- */

void rp_w_method(rp_writer *w, int method);
void rp_w_path(rp_writer *w, const char *p, uint32_t n);
void rp_w_header(rp_writer *w, const char *name, const char *value);
void rp_w_raw(rp_writer *w, const void *p, uint32_t n);
void rp_w_str(rp_writer *w, const char *s); /* raw C string */
void rp_w_quoted(rp_writer *w, const uint8_t *p, uint32_t n); /* as a JSON string */
void rp_w_uint(rp_writer *w, uint64_t v);
void rp_w_prompt(rp_writer *w, int hole_kind);

void rp_add(rp_records *o, rp_record r);
/* Adds r and, when capture is set, its decoded text (r.text_bytes = n). */
void rp_add_text(rp_records *o, rp_record r, const uint8_t *text, uint32_t n, int capture);
rp_record rp_rec(uint8_t kind);

/* JSON scanner. Values are raw JSON slices; a missing value has p == NULL. */
rp_bytes rp_json_get(rp_bytes obj, const char *key);
/* Iterates the members of an object in one pass: start with *pos = 0;
 * returns 1 with *key (raw, with quotes) and *val set, 0 at the end or on
 * malformed input. Prefer it over repeated rp_json_get on hot paths. */
int rp_json_next(rp_bytes obj, uint32_t *pos, rp_bytes *key, rp_bytes *val);
/* Low-level scanning, for adapters that read a nested object while they
 * walk its parent (one pass instead of rp_json_next skipping it and a
 * second loop reading it; see wasm/adapters/tgi-generate): rp_json_ws
 * returns the index of the first non-whitespace byte at or after i,
 * rp_json_end the index just past the JSON value that starts at i (0 when
 * it is malformed or cut off). */
uint32_t rp_json_ws(rp_bytes b, uint32_t i);
uint32_t rp_json_end(rp_bytes b, uint32_t i);
/* Whether the raw key (with quotes, as from rp_json_next) is the ASCII s. */
int rp_json_key(rp_bytes key, const char *s);
/* rp_json_key for a string literal, without strlen. */
#define RP_KEY(key, lit) ((key).n == sizeof(lit) + 1 && memcmp((key).p + 1, (lit), sizeof(lit) - 1) == 0)
rp_bytes rp_json_index(rp_bytes arr, uint32_t i);
int rp_json_is_string(rp_bytes v);
int rp_json_is_null(rp_bytes v); /* absent or null */
int rp_json_streq(rp_bytes v, const char *s);
int rp_json_uint(rp_bytes v, uint32_t *out);
uint32_t rp_json_strlen(rp_bytes v); /* decoded byte length of a string */
/* Decodes string v into dst (capacity cap); returns the decoded length. */
uint32_t rp_json_unescape(rp_bytes v, uint8_t *dst, uint32_t cap);
uint32_t rp_finish_code(rp_bytes v);

/* Host imports. */
__attribute__((import_module("reprise"), import_name("log_enabled"))) int32_t rp_log_enabled(int32_t level);
__attribute__((import_module("reprise"), import_name("log"))) void rp_log(int32_t level, const void *p, int32_t n);
__attribute__((import_module("reprise"), import_name("token_count"))) int32_t rp_token_count(const void *p, int32_t n);
__attribute__((import_module("reprise"), import_name("random_u64"))) int64_t rp_random_u64(void);

#endif /* REPRISE_ADAPTER_H */

#ifdef RP_IMPLEMENTATION
#include <stdlib.h>

#define RP_EXPORT(name) __attribute__((export_name(name)))

static uint8_t *rp__in, *rp__out;
static uint32_t rp__in_cap, rp__out_cap;

static int64_t rp__pack(uint32_t st, uint32_t v) { return (int64_t)(((uint64_t)st << 32) | v); }
static int64_t rp__fail(uint32_t st, const char *msg) {
    uint32_t n = msg ? (uint32_t)strlen(msg) : 0;
    if (n > rp__out_cap) n = rp__out_cap;
    memcpy(rp__out, msg, n);
    return rp__pack(st, n);
}
static uint32_t rp__u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rp__u64(const uint8_t *p) { return (uint64_t)rp__u32(p) | (uint64_t)rp__u32(p + 4) << 32; }
static void rp__put32(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

RP_EXPORT("reprise_abi_v1") void rp__abi_v1(void) {}

RP_EXPORT("rp_scratch") uint8_t *rp__scratch(int32_t which, int32_t n) {
    uint8_t **b = which == 1 ? &rp__out : &rp__in;
    uint32_t *cap = which == 1 ? &rp__out_cap : &rp__in_cap;
    if ((uint32_t)n > *cap || *b == NULL) {
        uint32_t c = (uint32_t)n < 4096 ? 4096 : (uint32_t)n;
        uint8_t *nb = realloc(*b, c);
        if (!nb) return 0;
        *b = nb;
        *cap = c;
    }
    return *b;
}

/* Growable byte buffer. */
typedef struct { uint8_t *p; uint32_t n, cap; } rp__buf;
static void rp__grow(rp__buf *b, uint32_t extra) {
    if (b->n + extra <= b->cap) return;
    uint32_t c = b->cap ? b->cap * 2 : 1024;
    while (c < b->n + extra) c *= 2;
    b->p = realloc(b->p, c);
    if (!b->p) __builtin_trap();
    b->cap = c;
}
static void rp__append(rp__buf *b, const void *p, uint32_t n) {
    rp__grow(b, n);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void rp__append32(rp__buf *b, uint32_t v) { uint8_t t[4]; rp__put32(t, v); rp__append(b, t, 4); }
static int64_t rp__result(const uint8_t *p, uint32_t n) {
    if (n > rp__out_cap) return rp__pack(1, n);
    memcpy(rp__out, p, n);
    return rp__pack(0, n);
}

RP_EXPORT("rp_describe") int64_t rp__describe(void) {
    static rp__buf b;
    b.n = 0;
    const char *d = rp_adapter_describe();
    uint32_t n = (uint32_t)strlen(d);
    while (n > 0 && d[n - 1] != '}') n--;
    if (n == 0) return rp__fail(4, "rp_adapter_describe: not a JSON object");
    rp__append(&b, d, n - 1);
#ifndef RP_NO_BUILD
    rp__append(&b, ",\"builds\":true", 14);
#endif
#ifndef RP_NO_PARSE
    rp__append(&b, ",\"parses\":true", 14);
#endif
    rp__append(&b, ",\"abi\":1}", 9);
    return rp__result(b.p, b.n);
}

RP_EXPORT("rp_configure") int64_t rp__configure(int32_t n) {
    const char *err = "configuration rejected";
    rp_bytes c = {rp__in, (uint32_t)n};
    if (rp_adapter_configure(c, &err) != 0) return rp__fail(4, err);
    return rp__pack(0, 0);
}

/* ---- Builder -------------------------------------------------------- */

struct rp_writer {
    uint16_t method, nhead;
    uint32_t nholes;
    rp__buf path, heads, holes, body;
};

void rp_w_method(rp_writer *w, int m) { w->method = (uint16_t)m; }
void rp_w_path(rp_writer *w, const char *p, uint32_t n) { w->path.n = 0; rp__append(&w->path, p, n); }
void rp_w_header(rp_writer *w, const char *name, const char *value) {
    uint32_t a = (uint32_t)strlen(name), b = (uint32_t)strlen(value);
    rp__append32(&w->heads, a);
    rp__append32(&w->heads, b);
    rp__append(&w->heads, name, a);
    rp__append(&w->heads, value, b);
    w->nhead++;
}
void rp_w_raw(rp_writer *w, const void *p, uint32_t n) { rp__append(&w->body, p, n); }
void rp_w_str(rp_writer *w, const char *s) { rp__append(&w->body, s, (uint32_t)strlen(s)); }
void rp_w_quoted(rp_writer *w, const uint8_t *p, uint32_t n) {
    static const char hex[] = "0123456789abcdef";
    rp__append(&w->body, "\"", 1);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') { uint8_t e[2] = {'\\', c}; rp__append(&w->body, e, 2); }
        else if (c == '\n') rp__append(&w->body, "\\n", 2);
        else if (c == '\r') rp__append(&w->body, "\\r", 2);
        else if (c == '\t') rp__append(&w->body, "\\t", 2);
        else if (c < 0x20) { uint8_t e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]}; rp__append(&w->body, e, 6); }
        else rp__append(&w->body, &c, 1);
    }
    rp__append(&w->body, "\"", 1);
}
void rp_w_uint(rp_writer *w, uint64_t v) {
    char t[20];
    int i = 20;
    do { t[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    rp__append(&w->body, t + i, (uint32_t)(20 - i));
}
void rp_w_prompt(rp_writer *w, int kind) {
    rp__append32(&w->holes, w->body.n);
    rp__append32(&w->holes, (uint32_t)kind);
    rp__append32(&w->holes, 0);
    w->nholes++;
}

#ifndef RP_NO_BUILD
RP_EXPORT("rp_build") int64_t rp__build(int32_t len) {
    static rp_writer w;
    static rp__buf out;
    const uint8_t *b = rp__in;
    uint32_t n = (uint32_t)len;
    if (n < 72) return rp__fail(2, "build input shorter than its header");
    rp_build_in in;
    uint32_t hs = rp__u32(b);
    in.flags = rp__u32(b + 4);
    in.trace_row = (int64_t)rp__u64(b + 8);
    in.offset_ns = (int64_t)rp__u64(b + 16);
    in.input_tokens = rp__u32(b + 24);
    in.max_tokens = rp__u32(b + 28);
    in.session = rp__u32(b + 32);
    in.turn = rp__u32(b + 36);
    in.block_size = rp__u32(b + 40);
    in.n_hash = rp__u32(b + 44);
    uint32_t rl = rp__u32(b + 48), hl = rp__u32(b + 52);
    in.seed = rp__u64(b + 56);
    in.prompt_text_bytes = rp__u32(b + 64);
    in.prompt_tokens = rp__u32(b + 68);
    uint64_t need = (uint64_t)hs + (uint64_t)in.n_hash * 8 + rl + hl;
    if (hs < 72 || need > n) return rp__fail(2, "build input sections run past its length");
    in.hash_ids = b + hs;
    in.raw.p = b + hs + in.n_hash * 8;
    in.raw.n = rl;
    in.history.p = in.raw.p + rl;
    in.history.n = hl;
    w.method = RP_POST; w.nhead = 0; w.nholes = 0;
    w.path.n = w.heads.n = w.holes.n = w.body.n = 0;
    const char *err = "build failed";
    if (rp_adapter_build(&in, &w, &err) != 0) return rp__fail(4, err);
    out.n = 0;
    rp__append32(&out, 24);
    uint8_t mh[4] = {(uint8_t)w.method, (uint8_t)(w.method >> 8), (uint8_t)w.nhead, (uint8_t)(w.nhead >> 8)};
    rp__append(&out, mh, 4);
    rp__append32(&out, w.path.n);
    rp__append32(&out, w.body.n);
    rp__append32(&out, w.nholes);
    rp__append32(&out, 0);
    rp__append(&out, w.path.p, w.path.n);
    rp__append(&out, w.heads.p, w.heads.n);
    rp__append(&out, w.holes.p, w.holes.n);
    rp__append(&out, w.body.p, w.body.n);
    return rp__result(out.p, out.n);
}
#endif

/* ---- Parser --------------------------------------------------------- */

struct rp_records {
    rp__buf recs, text;
    uint32_t n, event, added, limit;
};

#ifndef RP_MAX_RECORDS_PER_EVENT
#define RP_MAX_RECORDS_PER_EVENT 4
#endif

rp_record rp_rec(uint8_t kind) {
    rp_record r = {kind, 0, 0, 0, RP_TOKENS_UNKNOWN, 0, 0};
    return r;
}

static void rp__add(rp_records *o, rp_record r, const uint8_t *text, uint32_t n) {
    if (o->added >= o->limit) return;
    o->added++;
    o->n++;
    uint8_t t[24];
    t[0] = r.kind; t[1] = r.flags; t[2] = (uint8_t)r.choice; t[3] = (uint8_t)(r.choice >> 8);
    rp__put32(t + 4, o->event);
    rp__put32(t + 8, r.text_bytes);
    rp__put32(t + 12, r.tokens);
    rp__put32(t + 16, r.aux0);
    rp__put32(t + 20, r.aux1);
    rp__append(&o->recs, t, 24);
    if (n) rp__append(&o->text, text, n);
}
void rp_add(rp_records *o, rp_record r) { rp__add(o, r, NULL, 0); }
void rp_add_text(rp_records *o, rp_record r, const uint8_t *text, uint32_t n, int capture) {
    if (!capture) { rp__add(o, r, NULL, 0); return; }
    r.flags |= RP_FLAG_TEXT_CAPTURED;
    r.text_bytes = n;
    rp__add(o, r, text, n);
}

#ifndef RP_NO_PARSE
RP_EXPORT("rp_open") int64_t rp__open(int32_t ctx, int32_t flags) {
    rp_adapter_open((uint32_t)ctx, (uint32_t)flags);
    return rp__pack(0, 0);
}

RP_EXPORT("rp_parse") int64_t rp__parse(int32_t ctx, int32_t len) {
    static rp_records o;
    const uint8_t *b = rp__in;
    uint32_t n = (uint32_t)len;
    if (n < 16) return rp__fail(2, "parse batch shorter than its header");
    uint32_t count = rp__u32(b), first = rp__u32(b + 4), bflags = rp__u32(b + 8);
    o.recs.n = o.text.n = 0;
    o.n = 0;
    o.limit = RP_MAX_RECORDS_PER_EVENT;
    uint32_t off = 16;
    for (uint32_t i = 0; i < count; i++) {
        if (off + 8 > n) return rp__fail(2, "parse batch truncated");
        uint32_t dl = rp__u32(b + off);
        uint32_t nl = (uint32_t)b[off + 4] | (uint32_t)b[off + 5] << 8;
        rp_event ev;
        ev.flags = (uint16_t)(b[off + 6] | b[off + 7] << 8);
        uint32_t start = off + 8;
        if ((uint64_t)start + nl + dl > n) return rp__fail(2, "parse batch event runs past its length");
        ev.index = first + i;
        ev.end = (bflags & 1) && i == count - 1;
        ev.name.p = b + start; ev.name.n = nl;
        ev.data.p = b + start + nl; ev.data.n = dl;
        off = (start + nl + dl + 3) & ~3u;
        o.event = first + i;
        o.added = 0;
        const char *err = "parse failed";
        if (rp_adapter_parse((uint32_t)ctx, &ev, &o, &err) != 0) return rp__fail(4, err);
    }
    uint32_t total = 8 + o.recs.n + o.text.n;
    if (total > rp__out_cap) return rp__fail(4, "records exceed the output buffer");
    rp__put32(rp__out, o.n);
    rp__put32(rp__out + 4, o.text.n);
    memcpy(rp__out + 8, o.recs.p, o.recs.n);
    memcpy(rp__out + 8 + o.recs.n, o.text.p, o.text.n);
    return rp__pack(0, total);
}

RP_EXPORT("rp_close") int64_t rp__close(int32_t ctx) {
    rp_summary s;
    memset(&s, 0, sizeof s);
    const char *err = "close failed";
    if (rp_adapter_close((uint32_t)ctx, &s, &err) != 0) return rp__fail(4, err);
    uint32_t ml = s.message.n > 1024 ? 1024 : s.message.n;
    uint32_t xl = s.extras.n > 4096 ? 0 : s.extras.n;
    if (48 + ml + xl > rp__out_cap) return rp__fail(4, "summary exceeds the output buffer");
    uint8_t *o = rp__out;
    uint32_t f[12] = {48, s.valid, s.prompt_tokens, s.completion_tokens, s.reasoning_tokens, s.cached_tokens,
                      s.finish, s.choices, s.error_code, ml, xl, 0};
    for (int i = 0; i < 12; i++) rp__put32(o + 4 * i, f[i]);
    if (ml) memcpy(o + 48, s.message.p, ml);
    if (xl) memcpy(o + 48 + ml, s.extras.p, xl);
    return rp__pack(0, 48 + ml + xl);
}
#endif

/* ---- JSON ----------------------------------------------------------- */

static uint32_t rp__ws(rp_bytes b, uint32_t i) {
    while (i < b.n && (b.p[i] == ' ' || b.p[i] == '\t' || b.p[i] == '\n' || b.p[i] == '\r')) i++;
    return i;
}
/* Index just past the value at i, or 0 on error. */
static uint32_t rp__end(rp_bytes b, uint32_t i) {
    if (i >= b.n) return 0;
    uint8_t c = b.p[i];
    if (c == '"') {
        for (uint32_t j = i + 1; j < b.n; j++) {
            if (b.p[j] == '\\') j++;
            else if (b.p[j] == '"') return j + 1;
        }
        return 0;
    }
    if (c == '{' || c == '[') {
        int depth = 0;
        for (uint32_t j = i; j < b.n; j++) {
            uint8_t d = b.p[j];
            if (d == '"') { /* skip the string inline */
                for (j++; j < b.n && b.p[j] != '"'; j++)
                    if (b.p[j] == '\\') j++;
                if (j >= b.n) return 0;
            } else if (d == '{' || d == '[') depth++;
            else if (d == '}' || d == ']') {
                if (--depth == 0) return j + 1;
            }
        }
        return 0;
    }
    uint32_t j = i;
    while (j < b.n && b.p[j] != ',' && b.p[j] != '}' && b.p[j] != ']' && b.p[j] != ' ' && b.p[j] != '\n' && b.p[j] != '\r' && b.p[j] != '\t') j++;
    return j > i ? j : 0;
}

uint32_t rp_json_ws(rp_bytes b, uint32_t i) { return rp__ws(b, i); }
uint32_t rp_json_end(rp_bytes b, uint32_t i) { return rp__end(b, i); }

int rp_json_is_string(rp_bytes v) { return v.p && v.n >= 2 && v.p[0] == '"'; }
int rp_json_is_null(rp_bytes v) { return !v.p || (v.n == 4 && memcmp(v.p, "null", 4) == 0); }

static int rp__hex(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
static int32_t rp__hex4(const uint8_t *p, uint32_t i, uint32_t n) {
    if (i + 4 > n) return -1;
    int32_t r = 0;
    for (int k = 0; k < 4; k++) {
        int h = rp__hex(p[i + k]);
        if (h < 0) return -1;
        r = r << 4 | h;
    }
    return r;
}
/* Decodes \uXXXX at p[i] == 'u'; *w = bytes consumed after i. */
static int32_t rp__hexrune(const uint8_t *p, uint32_t i, uint32_t n, uint32_t *w) {
    int32_t r1 = rp__hex4(p, i + 1, n);
    *w = 0;
    if (r1 < 0) return 0xFFFD;
    if (r1 >= 0xD800 && r1 < 0xDC00 && i + 10 < n && p[i + 5] == '\\' && p[i + 6] == 'u') {
        int32_t r2 = rp__hex4(p, i + 7, n);
        if (r2 >= 0xDC00 && r2 < 0xE000) { *w = 10; return ((r1 - 0xD800) << 10) + (r2 - 0xDC00) + 0x10000; }
    }
    *w = 4;
    if (r1 >= 0xD800 && r1 < 0xE000) return 0xFFFD;
    return r1;
}
static uint32_t rp__runelen(int32_t r) { return r < 0x80 ? 1 : r < 0x800 ? 2 : r < 0x10000 ? 3 : 4; }

uint32_t rp_json_unescape(rp_bytes v, uint8_t *dst, uint32_t cap) {
    if (!rp_json_is_string(v)) return 0;
    const uint8_t *p = v.p + 1;
    uint32_t n = v.n - 2, o = 0;
    if (!memchr(p, '\\', n)) { /* fast path: nothing to decode */
        if (dst && cap) memcpy(dst, p, n < cap ? n : cap);
        return n;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c != '\\' || i + 1 >= n) { if (dst && o < cap) dst[o] = c; o++; continue; }
        i++;
        switch (p[i]) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
            uint32_t w;
            int32_t r = rp__hexrune(p, i, n, &w);
            i += w;
            uint8_t t[4];
            uint32_t k = rp__runelen(r);
            if (k == 1) t[0] = (uint8_t)r;
            else if (k == 2) { t[0] = 0xC0 | r >> 6; t[1] = 0x80 | (r & 0x3F); }
            else if (k == 3) { t[0] = 0xE0 | r >> 12; t[1] = 0x80 | ((r >> 6) & 0x3F); t[2] = 0x80 | (r & 0x3F); }
            else { t[0] = 0xF0 | r >> 18; t[1] = 0x80 | ((r >> 12) & 0x3F); t[2] = 0x80 | ((r >> 6) & 0x3F); t[3] = 0x80 | (r & 0x3F); }
            for (uint32_t j = 0; j < k; j++) { if (dst && o < cap) dst[o] = t[j]; o++; }
            continue;
        }
        default: c = p[i];
        }
        if (dst && o < cap) dst[o] = c;
        o++;
    }
    return o;
}
uint32_t rp_json_strlen(rp_bytes v) { return rp_json_unescape(v, NULL, 0); }

int rp_json_streq(rp_bytes v, const char *s) {
    if (!rp_json_is_string(v)) return 0;
    uint32_t n = (uint32_t)strlen(s);
    /* Fast path: no escapes. */
    if (v.n - 2 == n && memcmp(v.p + 1, s, n) == 0) return 1;
    if (!memchr(v.p + 1, '\\', v.n - 2)) return 0;
    uint8_t t[256];
    uint32_t k = rp_json_unescape(v, t, sizeof t);
    return k == n && k <= sizeof t && memcmp(t, s, n) == 0;
}

rp_bytes rp_json_get(rp_bytes obj, const char *key) {
    rp_bytes none = {NULL, 0}, found = {NULL, 0};
    uint32_t i = rp__ws(obj, 0);
    if (!obj.p || i >= obj.n || obj.p[i] != '{') return none;
    i = rp__ws(obj, i + 1);
    while (i < obj.n && obj.p[i] != '}') {
        if (obj.p[i] != '"') return found;
        uint32_t ke = rp__end(obj, i);
        if (!ke) return found;
        rp_bytes k = {obj.p + i, ke - i};
        i = rp__ws(obj, ke);
        if (i >= obj.n || obj.p[i] != ':') return found;
        i = rp__ws(obj, i + 1);
        uint32_t ve = rp__end(obj, i);
        if (!ve) return found;
        if (rp_json_streq(k, key)) { found.p = obj.p + i; found.n = ve - i; }
        i = rp__ws(obj, ve);
        if (i < obj.n && obj.p[i] == ',') i = rp__ws(obj, i + 1);
    }
    return found;
}

int rp_json_next(rp_bytes obj, uint32_t *pos, rp_bytes *key, rp_bytes *val) {
    uint32_t i = *pos;
    if (!obj.p) return 0;
    if (i == 0) {
        i = rp__ws(obj, 0);
        if (i >= obj.n || obj.p[i] != '{') return 0;
        i = rp__ws(obj, i + 1);
    }
    if (i >= obj.n || obj.p[i] != '"') return 0;
    uint32_t ke = rp__end(obj, i);
    if (!ke) return 0;
    key->p = obj.p + i;
    key->n = ke - i;
    i = rp__ws(obj, ke);
    if (i >= obj.n || obj.p[i] != ':') return 0;
    i = rp__ws(obj, i + 1);
    uint32_t ve = rp__end(obj, i);
    if (!ve) return 0;
    val->p = obj.p + i;
    val->n = ve - i;
    i = rp__ws(obj, ve);
    if (i < obj.n && obj.p[i] == ',') i = rp__ws(obj, i + 1);
    *pos = i;
    return 1;
}

int rp_json_key(rp_bytes key, const char *s) {
    uint32_t n = (uint32_t)strlen(s);
    return key.n == n + 2 && memcmp(key.p + 1, s, n) == 0;
}

rp_bytes rp_json_index(rp_bytes arr, uint32_t idx) {
    rp_bytes none = {NULL, 0};
    uint32_t i = rp__ws(arr, 0), k = 0;
    if (!arr.p || i >= arr.n || arr.p[i] != '[') return none;
    i = rp__ws(arr, i + 1);
    while (i < arr.n && arr.p[i] != ']') {
        uint32_t e = rp__end(arr, i);
        if (!e) return none;
        if (k++ == idx) { rp_bytes v = {arr.p + i, e - i}; return v; }
        i = rp__ws(arr, e);
        if (i < arr.n && arr.p[i] == ',') i = rp__ws(arr, i + 1);
    }
    return none;
}

int rp_json_uint(rp_bytes v, uint32_t *out) {
    if (!v.p || v.n == 0) return 0;
    uint32_t i = 0;
    int neg = v.p[0] == '-';
    if (neg) i++;
    if (i >= v.n || v.p[i] < '0' || v.p[i] > '9') return 0;
    uint64_t x = 0;
    for (; i < v.n && v.p[i] >= '0' && v.p[i] <= '9'; i++)
        if (x < (1ull << 40)) x = x * 10 + (v.p[i] - '0');
    if (neg) x = 0;
    *out = x > 0xFFFFFFFEu ? 0xFFFFFFFEu : (uint32_t)x;
    return 1;
}

uint32_t rp_finish_code(rp_bytes v) {
    if (rp_json_streq(v, "stop") || rp_json_streq(v, "eos") || rp_json_streq(v, "eos_token") ||
        rp_json_streq(v, "end_turn") || rp_json_streq(v, "stop_sequence")) return RP_FINISH_STOP;
    if (rp_json_streq(v, "length") || rp_json_streq(v, "max_tokens")) return RP_FINISH_LENGTH;
    if (rp_json_streq(v, "tool_calls") || rp_json_streq(v, "tool_use") || rp_json_streq(v, "function_call")) return RP_FINISH_TOOL_CALLS;
    if (rp_json_streq(v, "content_filter")) return RP_FINISH_CONTENT_FILTER;
    if (rp_json_streq(v, "error")) return RP_FINISH_ERROR;
    return RP_FINISH_UNKNOWN;
}
#endif /* RP_IMPLEMENTATION */
