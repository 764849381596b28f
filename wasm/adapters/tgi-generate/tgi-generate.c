/*
 * tgi-generate: Hugging Face Text Generation Inference, POST /generate_stream
 * (SSE, one token per event) and POST /generate (one JSON body).
 *
 * Build (scripts/wasm.sh):
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -I ../../../sdk-wasm/c \
 *         -o ../tgi-generate.wasm tgi-generate.c
 *
 * Options (--adapter-config): {"details": true} asks for details (default
 * true: the final event then carries finish_reason and generated_tokens).
 */
#define RP_IMPLEMENTATION
#define RP_MAX_RECORDS_PER_EVENT 3
#include "reprise_adapter.h"

const char *rp_adapter_describe(void) {
    return "{\"name\":\"tgi-generate\",\"version\":\"1\",\"path\":\"/generate_stream\",\"framing\":\"sse\",\"max_records_per_event\":3}";
}

static int details = 1;
static rp_bytes extra; /* --extra-body members, copied */
static uint8_t extra_buf[8192];

int rp_adapter_configure(rp_bytes c, const char **err) {
    rp_bytes d = rp_json_get(rp_json_get(c, "options"), "details");
    details = !(d.p && d.n == 5 && memcmp(d.p, "false", 5) == 0);
    rp_bytes e = rp_json_get(c, "extra_body");
    extra.n = 0;
    if (!rp_json_is_null(e)) {
        if (e.p[0] != '{') { *err = "extra_body: want a JSON object"; return 1; }
        if (e.n > sizeof extra_buf) { *err = "extra_body larger than 8 KiB"; return 1; }
        memcpy(extra_buf, e.p, e.n);
        extra.p = extra_buf;
        extra.n = e.n;
    }
    return 0;
}

/* Appends the members of object o as ",members". */
static void members(rp_writer *w, rp_bytes o) {
    if (o.n < 2) return;
    uint32_t i = 1, j = o.n - 1;
    while (i < j && (o.p[i] == ' ' || o.p[i] == '\n' || o.p[i] == '\t' || o.p[i] == '\r')) i++;
    while (j > i && (o.p[j - 1] == ' ' || o.p[j - 1] == '\n' || o.p[j - 1] == '\t' || o.p[j - 1] == '\r')) j--;
    if (i >= j) return;
    rp_w_raw(w, ",", 1);
    rp_w_raw(w, o.p + i, j - i);
}

int rp_adapter_build(const rp_build_in *in, rp_writer *w, const char **err) {
    int stream = in->flags & RP_BUILD_STREAM;
    if (stream) {
        rp_w_path(w, "/generate_stream", 16);
        rp_w_header(w, "Accept", "text/event-stream");
    } else {
        rp_w_path(w, "/generate", 9);
    }
    rp_w_header(w, "Content-Type", "application/json");
    rp_bytes text = rp_json_get(in->raw, "text_input");
    rp_w_str(w, "{\"inputs\":");
    if (rp_json_is_string(text)) {
        rp_w_raw(w, text.p, text.n);
    } else {
        rp_w_str(w, "\"");
        rp_w_prompt(w, RP_HOLE_TEXT);
        rp_w_str(w, "\"");
    }
    rp_w_str(w, ",\"parameters\":{");
    rp_w_str(w, details ? "\"details\":true" : "\"details\":false");
    if (in->max_tokens > 0) {
        rp_w_str(w, ",\"max_new_tokens\":");
        rp_w_uint(w, in->max_tokens);
    }
    rp_w_str(w, "}");
    members(w, extra);
    rp_bytes x = rp_json_get(in->raw, "extra");
    if (!rp_json_is_null(x) && x.p[0] == '{') members(w, x);
    rp_w_str(w, "}");
    (void)err;
    return 0;
}

/* Per-context state. */
#define MAX_CTX 64
static struct st {
    uint32_t id, flags, used;
    rp_summary sum;
    uint8_t msg[1024];
} ctxs[MAX_CTX];

static struct st *last; /* one-entry cache: a batch's events share a context */

static struct st *find(uint32_t id) {
    if (last && last->used && last->id == id) return last;
    for (int i = 0; i < MAX_CTX; i++)
        if (ctxs[i].used && ctxs[i].id == id) return last = &ctxs[i];
    return NULL;
}

void rp_adapter_open(uint32_t ctx, uint32_t flags) {
    struct st *s = find(ctx);
    for (int i = 0; !s && i < MAX_CTX; i++)
        if (!ctxs[i].used) s = &ctxs[i];
    if (!s) s = &ctxs[ctx % MAX_CTX]; /* more than MAX_CTX open: reuse a slot */
    memset(s, 0, sizeof *s);
    s->used = 1;
    s->id = ctx;
    s->flags = flags;
}

static uint8_t textbuf[65536];

static void set_error(struct st *s, uint32_t code, rp_bytes msg) {
    s->sum.valid |= RP_VALID_ERROR;
    s->sum.error_code = code;
    uint32_t n = rp_json_is_string(msg) ? rp_json_unescape(msg, s->msg, sizeof s->msg) : 0;
    if (n > sizeof s->msg) n = sizeof s->msg;
    s->sum.message.p = s->msg;
    s->sum.message.n = n;
}

/* details: {"finish_reason":"length","generated_tokens":16,...} */
static void read_details(struct st *s, rp_bytes d, rp_records *out) {
    if (rp_json_is_null(d)) return;
    rp_bytes fr = rp_json_get(d, "finish_reason");
    if (rp_json_is_string(fr)) {
        rp_record r = rp_rec(RP_FINISH);
        r.aux0 = rp_finish_code(fr);
        rp_add(out, r);
        s->sum.finish = r.aux0;
        s->sum.valid |= RP_VALID_FINISH;
    }
    uint32_t n;
    if (rp_json_uint(rp_json_get(d, "generated_tokens"), &n)) {
        s->sum.completion_tokens = n;
        s->sum.valid |= RP_VALID_COMPLETION;
        rp_add(out, rp_rec(RP_USAGE));
    }
}

int rp_adapter_parse(uint32_t ctx, const rp_event *ev, rp_records *out, const char **err) {
    struct st *s = find(ctx);
    if (!s) { *err = "context not open"; return 1; }
    int capture = s->flags & RP_OPEN_CAPTURE;
    if (ev->flags & (RP_EV_COMMENT)) { rp_add(out, rp_rec(RP_META)); return 0; }
    if (ev->flags & RP_EV_DONE) return 0;
    rp_bytes d = ev->data;
    if (ev->flags & RP_EV_NON_OK) {
        rp_bytes e = rp_json_get(d, "error");
        set_error(s, 500, e);
        rp_record r = rp_rec(RP_ERROR);
        r.aux0 = 500;
        rp_add(out, r);
        return 0;
    }
    uint32_t i = 0;
    while (i < d.n && (d.p[i] == ' ' || d.p[i] == '\n' || d.p[i] == '\r' || d.p[i] == '\t')) i++;
    if (i == d.n) return 0;
    if (d.p[i] == '[') d = rp_json_index(d, 0); /* /generate may answer a one-element array */
    if (!d.p || d.p[0] != '{') { *err = "TGI event is not a JSON object"; return 1; }
    /* One pass over the members (the hot path: one event per token),
     * reading "token"'s members on the way instead of skipping the object
     * and reading it again. */
    rp_bytes key, val, gen = {NULL, 0}, det = {NULL, 0}, err_v = {NULL, 0}, t = {NULL, 0};
    int has_tok = 0, special = 0;
    uint32_t i0 = rp_json_ws(d, 1);
    while (i0 < d.n && d.p[i0] == '"') {
        uint32_t ke = rp_json_end(d, i0);
        if (!ke) break;
        key.p = d.p + i0;
        key.n = ke - i0;
        uint32_t v = rp_json_ws(d, ke);
        if (v >= d.n || d.p[v] != ':') break;
        v = rp_json_ws(d, v + 1);
        uint32_t ve;
        if (RP_KEY(key, "token") && v < d.n && d.p[v] == '{') {
            rp_bytes o = {d.p + v, d.n - v};
            uint32_t pos = 0;
            while (rp_json_next(o, &pos, &key, &val)) {
                if (RP_KEY(key, "text")) t = val;
                else if (RP_KEY(key, "special")) special = val.n == 4 && memcmp(val.p, "true", 4) == 0;
            }
            /* rp_json_next stops at the closing brace (or where the
             * object breaks off). */
            if (pos == 0) pos = rp_json_ws(o, 1);
            if (pos >= o.n || o.p[pos] != '}') break;
            ve = v + pos + 1;
            has_tok = 1;
        } else {
            ve = rp_json_end(d, v);
            if (!ve) break;
            val.p = d.p + v;
            val.n = ve - v;
            if (RP_KEY(key, "details")) det = val;
            else if (RP_KEY(key, "generated_text")) gen = val;
            else if (RP_KEY(key, "error")) err_v = val;
            else if (RP_KEY(key, "token")) has_tok = !rp_json_is_null(val);
        }
        i0 = rp_json_ws(d, ve);
        if (i0 < d.n && d.p[i0] == ',') i0 = rp_json_ws(d, i0 + 1);
    }
    if (!rp_json_is_null(err_v)) {
        set_error(s, 500, err_v);
        rp_record r = rp_rec(RP_ERROR);
        r.aux0 = 500;
        rp_add(out, r);
        return 0;
    }
    s->sum.choices = 1;
    if (has_tok) {
        /* Streaming: exactly one token per event. */
        if (special) {
            rp_add(out, rp_rec(RP_META));
        } else {
            /* Decode only when capturing; otherwise measure. */
            uint32_t n = capture ? rp_json_unescape(t, textbuf, sizeof textbuf) : rp_json_strlen(t);
            if (capture && n > sizeof textbuf) n = sizeof textbuf;
            rp_record r = rp_rec(RP_CONTENT);
            r.tokens = 1;
            r.flags = RP_FLAG_TOKENS_EXACT;
            r.text_bytes = n;
            rp_add_text(out, r, textbuf, n, capture);
        }
        read_details(s, det, out);
        return 0;
    }
    if (rp_json_is_string(gen)) {
        /* Non-streaming body. */
        uint32_t n = rp_json_unescape(gen, textbuf, sizeof textbuf);
        if (n > sizeof textbuf) n = sizeof textbuf;
        rp_record r = rp_rec(RP_CONTENT);
        uint32_t gt;
        if (rp_json_uint(rp_json_get(det, "generated_tokens"), &gt)) {
            r.tokens = gt;
            r.flags = RP_FLAG_TOKENS_EXACT;
        }
        r.text_bytes = n;
        rp_add_text(out, r, textbuf, n, capture);
        read_details(s, det, out);
        return 0;
    }
    return 0; /* unknown event: ignore */
}

int rp_adapter_close(uint32_t ctx, rp_summary *sum, const char **err) {
    struct st *s = find(ctx);
    if (!s) { *err = "context not open"; return 1; }
    *sum = s->sum;
    s->used = 0;
    return 0;
}
