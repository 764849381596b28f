// kserve-generate: the KServe v2 / NVIDIA Triton "generate" extension,
// POST /v2/models/{model}/generate_stream (SSE) and /generate (one body),
// as used by TensorRT-LLM ensembles: {"text_input": ..., "max_tokens": N,
// "stream": true} in, {"text_output": ...} out.
//
// Build (scripts/wasm.sh), from sdk-wasm/assemblyscript:
//   npx asc ../../wasm/adapters/kserve-generate/kserve-generate.ts -O3 --runtime stub --use abort= \
//     -o ../../wasm/adapters/kserve-generate.wasm
//
// Options (--adapter-config): {"max_tokens_field": "max_tokens"}.

import {
  Adapter, BuildIn, Event, Records, Summary, Writer, register, get, valPtr, valLen, isString, isNull,
  jsonUnescape, isWS, objectStart, objectNext, keyIs, HOLE_TEXT, OPEN_CAPTURE, EV_COMMENT, EV_DONE, EV_NON_OK, CONTENT, META, ERROR,
  TOKENS_UNKNOWN, VALID_ERROR,
} from "../../../sdk-wasm/assemblyscript/assembly/reprise";

export {
  reprise_abi_v1, rp_scratch, rp_describe, rp_configure, rp_build, rp_open, rp_parse, rp_close,
} from "../../../sdk-wasm/assemblyscript/assembly/reprise";

const MAX_CTX = 64;
const modelPtr: usize = memory.data(256);
let modelLen: u32 = 0;
const extraPtr: usize = memory.data(8192);
let extraLen: u32 = 0;
const fieldPtr: usize = memory.data(64);
let fieldLen: u32 = 0;
const msgPtr: usize = memory.data(1024 * MAX_CTX);

class Ctx {
  used: bool = false;
  id: u32 = 0;
  flags: u32 = 0;
  errCode: u32 = 0;
  msgLen: u32 = 0;
}

const ctxs = new StaticArray<Ctx>(MAX_CTX);
for (let i = 0; i < MAX_CTX; i++) ctxs[i] = new Ctx();

let last: i32 = 0; // one-entry cache: a batch's events share a context

function find(id: u32): i32 {
  if (ctxs[last].used && ctxs[last].id == id) return last;
  for (let i = 0; i < MAX_CTX; i++) if (ctxs[i].used && ctxs[i].id == id) { last = i; return i; }
  return -1;
}

class KServe extends Adapter {
  describe(): string {
    return "{\"name\":\"kserve-generate\",\"version\":\"1\",\"path\":\"/v2/models/ensemble/generate_stream\",\"framing\":\"sse\"}";
  }
  maxRecordsPerEvent(): u32 { return 1; }

  configure(p: usize, n: u32): string | null {
    modelLen = 0;
    if (get(p, n, "model") && isString(valPtr, valLen)) modelLen = min(jsonUnescape(valPtr, valLen, modelPtr, 256), 256);
    if (modelLen == 0) {
      store<u8>(modelPtr, 101); store<u8>(modelPtr + 1, 110); store<u8>(modelPtr + 2, 115); store<u8>(modelPtr + 3, 101);
      store<u8>(modelPtr + 4, 109); store<u8>(modelPtr + 5, 98); store<u8>(modelPtr + 6, 108); store<u8>(modelPtr + 7, 101);
      modelLen = 8; // "ensemble"
    }
    for (let i: u32 = 0; i < modelLen; i++) {
      const c = load<u8>(modelPtr + i);
      if (c == 47 || c == 63 || c == 35 || c <= 32 || c >= 127) return "model name must be a URL path segment (no /, ?, #, spaces)";
    }
    fieldLen = 0;
    const def = "max_tokens";
    for (let i = 0; i < def.length; i++) store<u8>(fieldPtr + fieldLen++, <u8>def.charCodeAt(i));
    if (get(p, n, "options")) {
      const op = valPtr, ol = valLen;
      if (get(op, ol, "max_tokens_field") && isString(valPtr, valLen)) fieldLen = min(jsonUnescape(valPtr, valLen, fieldPtr, 64), 64);
    }
    extraLen = 0;
    if (get(p, n, "extra_body") && !isNull(valPtr, valLen)) {
      if (load<u8>(valPtr) != 123) return "extra_body: want a JSON object";
      if (valLen > 8192) return "extra_body larger than 8 KiB";
      memory.copy(extraPtr, valPtr, valLen);
      extraLen = valLen;
    }
    return null;
  }

  build(r: BuildIn, w: Writer): string | null {
    w.path("/v2/models/");
    w.pathBytes(modelPtr, modelLen);
    w.pathStr(r.stream() ? "/generate_stream" : "/generate");
    w.header("Content-Type", "application/json");
    if (r.stream()) w.header("Accept", "text/event-stream");
    w.str("{\"text_input\":");
    if (get(r.rawPtr, r.rawLen, "text_input") && isString(valPtr, valLen)) {
      w.bytes(valPtr, valLen);
    } else {
      w.str("\"");
      w.prompt(HOLE_TEXT);
      w.str("\"");
    }
    if (r.maxTokens > 0) {
      w.str(",\"");
      w.bytes(fieldPtr, fieldLen);
      w.str("\":");
      w.uint(r.maxTokens);
    }
    w.str(r.stream() ? ",\"stream\":true" : ",\"stream\":false");
    w.members(extraPtr, extraLen);
    if (get(r.rawPtr, r.rawLen, "extra")) w.members(valPtr, valLen);
    w.str("}");
    return null;
  }

  open(ctx: u32, flags: u32): void {
    let i = find(ctx);
    for (let j = 0; i < 0 && j < MAX_CTX; j++) if (!ctxs[j].used) i = j;
    if (i < 0) i = <i32>(ctx % MAX_CTX);
    const c = ctxs[i];
    c.used = true; c.id = ctx; c.flags = flags; c.errCode = 0; c.msgLen = 0;
  }

  parse(ctx: u32, ev: Event, out: Records): string | null {
    const i = find(ctx);
    if (i < 0) return "context not open";
    const c = ctxs[i];
    if ((ev.flags & EV_COMMENT) != 0) { out.add(META, 0, 0, 0, TOKENS_UNKNOWN, 0, 0); return null; }
    if ((ev.flags & EV_DONE) != 0) return null;
    const p = ev.dataPtr, n = ev.dataLen;
    let k: u32 = 0;
    while (k < n && isWS(load<u8>(p + k))) k++;
    if (k == n) return null;
    // One pass over the members (the hot path: one event per chunk).
    let textP: usize = 0, textN: u32 = 0, errP: usize = 0, errN: u32 = 0;
    let pos = objectStart(p, n);
    if (pos == 0) {
      if ((ev.flags & EV_NON_OK) != 0) { c.errCode = 500; return null; }
      return "event is not a JSON object";
    }
    while ((pos = objectNext(p, n, pos)) != 0) {
      if (keyIs("text_output")) { textP = valPtr; textN = valLen; }
      else if (keyIs("error")) { errP = valPtr; errN = valLen; }
    }
    if (errN != 0 && !isNull(errP, errN)) {
      c.errCode = (ev.flags & EV_NON_OK) != 0 ? 500 : 502;
      c.msgLen = isString(errP, errN) ? min(jsonUnescape(errP, errN, msgPtr + i * 1024, 1024), 1024) : 0;
      out.add(ERROR, 0, 0, 0, TOKENS_UNKNOWN, c.errCode, 0);
      return null;
    }
    if (textN != 0 && isString(textP, textN)) {
      if (textN > 2) out.addJSONText(CONTENT, textP, textN, (c.flags & OPEN_CAPTURE) != 0);
      else out.add(META, 0, 0, 0, TOKENS_UNKNOWN, 0, 0);
    }
    return null;
  }

  close(ctx: u32, s: Summary): string | null {
    const i = find(ctx);
    if (i < 0) return "context not open";
    const c = ctxs[i];
    s.choices = 1;
    if (c.errCode != 0) {
      s.valid |= VALID_ERROR;
      s.errorCode = c.errCode;
      s.messagePtr = msgPtr + i * 1024;
      s.messageLen = c.msgLen;
    }
    c.used = false;
    return null;
  }
}

register(new KServe());
