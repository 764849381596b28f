/*
 * my-adapter: a reprise endpoint adapter (ABI v1) for a JSON API that
 * streams {"text": "..."} events: POST /generate with {"model", "prompt",
 * "max_tokens", "stream"}. Change build and parse to your server's shapes.
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -I . -o my-adapter.wasm adapter.c
 */
#define RP_IMPLEMENTATION
#include "reprise_adapter.h"

const char *rp_adapter_describe(void) {
    return "{\"name\":\"my-adapter\",\"version\":\"0.1.0\",\"path\":\"/generate\"}";
}

static uint8_t model[256];
static uint32_t model_len;

int rp_adapter_configure(rp_bytes c, const char **err) {
    model_len = rp_json_unescape(rp_json_get(c, "model"), model, sizeof model);
    if (model_len > sizeof model) { *err = "model name longer than 256 bytes"; return 1; }
    return 0;
}

/* The prompt goes into a hole the host fills. */
int rp_adapter_build(const rp_build_in *in, rp_writer *w, const char **err) {
    (void)err;
    rp_w_path(w, "/generate", 9);
    rp_w_header(w, "Content-Type", "application/json");
    rp_w_str(w, "{\"model\":");
    rp_w_quoted(w, model, model_len);
    rp_w_str(w, ",\"prompt\":\"");
    rp_w_prompt(w, RP_HOLE_TEXT);
    rp_w_str(w, "\"");
    if (in->max_tokens > 0) { rp_w_str(w, ",\"max_tokens\":"); rp_w_uint(w, in->max_tokens); }
    rp_w_str(w, (in->flags & RP_BUILD_STREAM) ? ",\"stream\":true}" : ",\"stream\":false}");
    return 0;
}

/* Per-context state: a small table keyed by context id. */
#define MAX_CTX 64
static struct { int used; uint32_t id, flags; rp_summary sum; uint8_t msg[1024]; } ctxs[MAX_CTX];

static int last; /* one-entry cache: a batch's events share a context */

static int find(uint32_t id) {
    if (ctxs[last].used && ctxs[last].id == id) return last;
    for (int i = 0; i < MAX_CTX; i++) if (ctxs[i].used && ctxs[i].id == id) return last = i;
    return -1;
}

void rp_adapter_open(uint32_t ctx, uint32_t flags) {
    int i = find(ctx);
    for (int j = 0; i < 0 && j < MAX_CTX; j++) if (!ctxs[j].used) i = j;
    if (i < 0) i = ctx % MAX_CTX;
    memset(&ctxs[i], 0, sizeof ctxs[i]);
    ctxs[i].used = 1; ctxs[i].id = ctx; ctxs[i].flags = flags; ctxs[i].sum.choices = 1;
}

static uint8_t text[65536];

int rp_adapter_parse(uint32_t ctx, const rp_event *ev, rp_records *out, const char **err) {
    int i = find(ctx);
    if (i < 0) { *err = "context not open"; return 1; }
    rp_summary *s = &ctxs[i].sum;
    if (ev->flags & RP_EV_COMMENT) { rp_add(out, rp_rec(RP_META)); return 0; }
    if (ev->flags & RP_EV_DONE) return 0;
    rp_bytes e = rp_json_get(ev->data, "error");
    if (!rp_json_is_null(e)) {
        s->valid |= RP_VALID_ERROR;
        s->error_code = 500;
        s->message.p = ctxs[i].msg;
        s->message.n = rp_json_unescape(e, ctxs[i].msg, sizeof ctxs[i].msg);
        if (s->message.n > sizeof ctxs[i].msg) s->message.n = sizeof ctxs[i].msg;
        rp_record r = rp_rec(RP_ERROR);
        r.aux0 = 500;
        rp_add(out, r);
        return 0;
    }
    rp_bytes t = rp_json_get(ev->data, "text");
    if (rp_json_is_string(t) && t.n > 2) {
        uint32_t n = rp_json_unescape(t, text, sizeof text);
        if (n > sizeof text) n = sizeof text;
        rp_record r = rp_rec(RP_CONTENT);
        r.text_bytes = n;
        rp_add_text(out, r, text, n, ctxs[i].flags & RP_OPEN_CAPTURE);
    }
    rp_bytes f = rp_json_get(ev->data, "finish_reason");
    if (rp_json_is_string(f)) {
        rp_record r = rp_rec(RP_FINISH);
        r.aux0 = s->finish = rp_finish_code(f);
        s->valid |= RP_VALID_FINISH;
        rp_add(out, r);
    }
    rp_bytes u = rp_json_get(ev->data, "usage");
    if (!rp_json_is_null(u)) {
        if (rp_json_uint(rp_json_get(u, "prompt_tokens"), &s->prompt_tokens)) s->valid |= RP_VALID_PROMPT;
        if (rp_json_uint(rp_json_get(u, "completion_tokens"), &s->completion_tokens)) s->valid |= RP_VALID_COMPLETION;
        rp_add(out, rp_rec(RP_USAGE));
    }
    return 0;
}

int rp_adapter_close(uint32_t ctx, rp_summary *s, const char **err) {
    int i = find(ctx);
    if (i < 0) { *err = "context not open"; return 1; }
    *s = ctxs[i].sum;
    ctxs[i].used = 0;
    return 0;
}
