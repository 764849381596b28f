// my-adapter: a reprise endpoint adapter (ABI v1) for a JSON API that
// streams {"text": "..."} events: POST /generate with {"model", "prompt",
// "max_tokens", "stream"}. Change build and parse to your server's shapes.
//
//   npx asc adapter.ts -O3 --runtime stub --use abort= -o my-adapter.wasm
//
// The stub runtime never frees: allocate only at start-up (top level),
// never per call. Use memory.data buffers and the SDK's Writer/Records.

import {
  Adapter, BuildIn, Event, Records, Summary, Writer, register, get, valPtr, valLen, isString, isNull,
  jsonUnescape, HOLE_TEXT, OPEN_CAPTURE, EV_COMMENT, EV_DONE, CONTENT, META, ERROR, FINISH, USAGE,
  TOKENS_UNKNOWN, VALID_ERROR, VALID_FINISH, VALID_PROMPT, VALID_COMPLETION,
} from "../assembly/reprise";

export {
  reprise_abi_v1, rp_scratch, rp_describe, rp_configure, rp_build, rp_open, rp_parse, rp_close,
} from "../assembly/reprise";

const MAX_CTX = 64;
const modelPtr: usize = memory.data(256);
let modelLen: u32 = 0;
const msgPtr: usize = memory.data(1024 * MAX_CTX);

class Ctx {
  used: bool = false;
  id: u32 = 0;
  flags: u32 = 0;
  valid: u32 = 0;
  finish: u32 = 0;
  prompt: u32 = 0;
  completion: u32 = 0;
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

// Parses a non-negative integer JSON value at (p, n).
function uintAt(p: usize, n: u32): u32 {
  let v: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const c = load<u8>(p + i);
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return v;
}

function finishCode(p: usize, n: u32): u32 {
  // "stop" → 1, "length" → 2, anything else → 0 (unknown).
  if (n == 6 && load<u8>(p + 1) == 115) return 1;
  if (n == 8 && load<u8>(p + 1) == 108) return 2;
  return 0;
}

class MyAdapter extends Adapter {
  describe(): string {
    return "{\"name\":\"my-adapter\",\"version\":\"0.1.0\",\"path\":\"/generate\"}";
  }

  configure(p: usize, n: u32): string | null {
    modelLen = 0;
    if (get(p, n, "model") && isString(valPtr, valLen)) modelLen = min(jsonUnescape(valPtr, valLen, modelPtr, 256), 256);
    return null;
  }

  // The prompt goes into a hole the host fills.
  build(r: BuildIn, w: Writer): string | null {
    w.path("/generate");
    w.header("Content-Type", "application/json");
    w.str("{\"model\":");
    w.quoted(modelPtr, modelLen);
    w.str(",\"prompt\":\"");
    w.prompt(HOLE_TEXT);
    w.str("\"");
    if (r.maxTokens > 0) {
      w.str(",\"max_tokens\":");
      w.uint(r.maxTokens);
    }
    w.str(r.stream() ? ",\"stream\":true}" : ",\"stream\":false}");
    return null;
  }

  open(ctx: u32, flags: u32): void {
    let i = find(ctx);
    for (let j = 0; i < 0 && j < MAX_CTX; j++) if (!ctxs[j].used) i = j;
    if (i < 0) i = <i32>(ctx % MAX_CTX);
    const c = ctxs[i];
    c.used = true; c.id = ctx; c.flags = flags; c.valid = 0; c.finish = 0; c.prompt = 0; c.completion = 0; c.msgLen = 0;
  }

  parse(ctx: u32, ev: Event, out: Records): string | null {
    const i = find(ctx);
    if (i < 0) return "context not open";
    const c = ctxs[i];
    if ((ev.flags & EV_COMMENT) != 0) { out.add(META, 0, 0, 0, TOKENS_UNKNOWN, 0, 0); return null; }
    if ((ev.flags & EV_DONE) != 0) return null;
    const p = ev.dataPtr, n = ev.dataLen;
    if (get(p, n, "error") && !isNull(valPtr, valLen)) {
      c.valid |= VALID_ERROR;
      c.msgLen = isString(valPtr, valLen) ? min(jsonUnescape(valPtr, valLen, msgPtr + i * 1024, 1024), 1024) : 0;
      out.add(ERROR, 0, 0, 0, TOKENS_UNKNOWN, 500, 0);
      return null;
    }
    if (get(p, n, "text") && isString(valPtr, valLen) && valLen > 2) {
      out.addJSONText(CONTENT, valPtr, valLen, (c.flags & OPEN_CAPTURE) != 0);
    }
    if (get(p, n, "finish_reason") && isString(valPtr, valLen)) {
      c.finish = finishCode(valPtr, valLen);
      c.valid |= VALID_FINISH;
      out.add(FINISH, 0, 0, 0, TOKENS_UNKNOWN, c.finish, 0);
    }
    if (get(p, n, "usage") && !isNull(valPtr, valLen)) {
      const up = valPtr, ul = valLen;
      if (get(up, ul, "prompt_tokens")) { c.prompt = uintAt(valPtr, valLen); c.valid |= VALID_PROMPT; }
      if (get(up, ul, "completion_tokens")) { c.completion = uintAt(valPtr, valLen); c.valid |= VALID_COMPLETION; }
      out.add(USAGE, 0, 0, 0, TOKENS_UNKNOWN, 0, 0);
    }
    return null;
  }

  close(ctx: u32, s: Summary): string | null {
    const i = find(ctx);
    if (i < 0) return "context not open";
    const c = ctxs[i];
    s.valid = c.valid; s.choices = 1; s.finish = c.finish; s.promptTokens = c.prompt; s.completionTokens = c.completion;
    if ((c.valid & VALID_ERROR) != 0) { s.errorCode = 500; s.messagePtr = msgPtr + i * 1024; s.messageLen = c.msgLen; }
    c.used = false;
    return null;
  }
}

register(new MyAdapter());
