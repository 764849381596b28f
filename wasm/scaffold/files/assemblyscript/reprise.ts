// AssemblyScript SDK for reprise endpoint adapters, ABI v1
// (docs/format/adapter-abi.md in the reprise repository).
//
// Extend Adapter, call register(new MyAdapter()) at top level, and re-export
// the ABI from your entry file:
//
//   export { reprise_abi_v1, rp_scratch, rp_describe, rp_configure, rp_build,
//            rp_open, rp_parse, rp_close } from "…/sdk-wasm/assemblyscript/assembly/reprise";
//
// Build with the stub runtime (no GC: the SDK never allocates per call; use
// the static buffers and the Writer/Records helpers):
//
//   npx asc my.ts -O3 --runtime stub --use abort= -o my.wasm
//
// Strings here are byte slices in linear memory: (ptr, len) pairs.

export const POST: u16 = 0;
export const GET: u16 = 1;
export const PUT: u16 = 2;
export const HOLE_TEXT: u32 = 1;
export const HOLE_TOKENS: u32 = 2;
export const HOLE_MESSAGES: u32 = 3;
export const BUILD_STREAM: u32 = 1;
export const OPEN_STREAM: u32 = 1;
export const OPEN_CAPTURE: u32 = 2;
export const EV_COMMENT: u16 = 1;
export const EV_DONE: u16 = 2;
export const EV_WHOLE_BODY: u16 = 4;
export const EV_NON_OK: u16 = 8;
export const IGNORE: u8 = 0;
export const CONTENT: u8 = 1;
export const REASONING: u8 = 2;
export const TOOL_CALL: u8 = 3;
export const USAGE: u8 = 4;
export const ERROR: u8 = 5;
export const FINISH: u8 = 6;
export const META: u8 = 7;
export const FLAG_TEXT_CAPTURED: u8 = 1;
export const FLAG_TOKENS_EXACT: u8 = 2;
export const VALID_PROMPT: u32 = 1;
export const VALID_COMPLETION: u32 = 2;
export const VALID_FINISH: u32 = 16;
export const VALID_ERROR: u32 = 32;
export const TOKENS_UNKNOWN: u32 = 0xFFFFFFFF;

// ---- Buffers ------------------------------------------------------------

const BUF = 65536;
let inPtr: usize = memory.data(BUF);
let inCap: u32 = BUF;
let outPtr: usize = memory.data(BUF);
let outCap: u32 = BUF;
// Scratch areas for builders and records (grown with heap.alloc when needed).
let bodyPtr: usize = memory.data(BUF);
let bodyCap: u32 = BUF;
let headPtr: usize = memory.data(4096);
let recPtr: usize = memory.data(BUF);
let recCap: u32 = BUF;
let textPtr: usize = memory.data(BUF);
let textCap: u32 = BUF;

function pack(status: u32, v: u32): i64 {
  return ((<i64>status) << 32) | <i64>v;
}

function failMsg(status: u32, msg: string): i64 {
  let n: u32 = 0;
  for (let i = 0; i < msg.length && <u32>i < outCap; i++) {
    store<u8>(outPtr + i, <u8>msg.charCodeAt(i));
    n++;
  }
  return pack(status, n);
}

// ---- The adapter ----------------------------------------------------------

export class Event {
  index: u32 = 0;
  flags: u16 = 0;
  end: bool = false;
  namePtr: usize = 0;
  nameLen: u32 = 0;
  dataPtr: usize = 0;
  dataLen: u32 = 0;
}

export class BuildIn {
  flags: u32 = 0;
  traceRow: i64 = 0;
  offsetNs: i64 = 0;
  inputTokens: u32 = 0;
  maxTokens: u32 = 0;
  session: u32 = 0;
  turn: u32 = 0;
  blockSize: u32 = 0;
  nHash: u32 = 0;
  hashPtr: usize = 0;
  rawPtr: usize = 0;
  rawLen: u32 = 0;
  historyPtr: usize = 0;
  historyLen: u32 = 0;
  seed: u64 = 0;
  promptTextBytes: u32 = 0;
  promptTokens: u32 = 0;
  stream(): bool { return (this.flags & BUILD_STREAM) != 0; }
}

export class Summary {
  valid: u32 = 0;
  promptTokens: u32 = 0;
  completionTokens: u32 = 0;
  reasoningTokens: u32 = 0;
  cachedTokens: u32 = 0;
  finish: u32 = 0;
  choices: u32 = 0;
  errorCode: u32 = 0;
  messagePtr: usize = 0;
  messageLen: u32 = 0;
}

export abstract class Adapter {
  // The description JSON without "abi", "builds", "parses".
  abstract describe(): string;
  builds(): bool { return true; }
  parses(): bool { return true; }
  maxRecordsPerEvent(): u32 { return 4; }
  // Returns null on success, else an error message.
  configure(ptr: usize, len: u32): string | null { return null; }
  build(req: BuildIn, w: Writer): string | null { return "this adapter does not build requests"; }
  open(ctx: u32, flags: u32): void {}
  parse(ctx: u32, ev: Event, out: Records): string | null { return "this adapter does not parse responses"; }
  close(ctx: u32, s: Summary): string | null { return null; }
}

let adapter: Adapter | null = null;

export function register(a: Adapter): void {
  adapter = a;
}

// ---- Writer ---------------------------------------------------------------

export class Writer {
  method: u16 = POST;
  nhead: u16 = 0;
  headLen: u32 = 0;
  nholes: u32 = 0;
  holes: StaticArray<u32> = new StaticArray<u32>(64 * 2);
  bodyLen: u32 = 0;
  pathPtr: usize = memory.data(1024);
  pathLen: u32 = 0;

  reset(): void {
    this.method = POST; this.nhead = 0; this.headLen = 0; this.nholes = 0; this.bodyLen = 0; this.pathLen = 0;
  }
  private ensure(n: u32): void {
    if (this.bodyLen + n <= bodyCap) return;
    let c = bodyCap * 2;
    while (c < this.bodyLen + n) c *= 2;
    const p = heap.alloc(c);
    memory.copy(p, bodyPtr, this.bodyLen);
    bodyPtr = p;
    bodyCap = c;
  }
  // Appends an ASCII string.
  str(s: string): void {
    this.ensure(<u32>s.length);
    for (let i = 0; i < s.length; i++) store<u8>(bodyPtr + this.bodyLen + i, <u8>s.charCodeAt(i));
    this.bodyLen += s.length;
  }
  bytes(p: usize, n: u32): void {
    this.ensure(n);
    memory.copy(bodyPtr + this.bodyLen, p, n);
    this.bodyLen += n;
  }
  uint(v: u64): void {
    const t = memory.data(24);
    let i = 20;
    do { i--; store<u8>(t + i, <u8>(48 + v % 10)); v /= 10; } while (v > 0);
    this.bytes(t + i, 20 - i);
  }
  // Appends bytes as a quoted JSON string.
  quoted(p: usize, n: u32): void {
    this.str("\"");
    for (let i: u32 = 0; i < n; i++) {
      const c = load<u8>(p + i);
      if (c == 34 || c == 92) { this.str("\\"); this.bytes(p + i, 1); }
      else if (c == 10) this.str("\\n");
      else if (c == 13) this.str("\\r");
      else if (c == 9) this.str("\\t");
      else if (c < 32) { this.str("\\u00"); this.str(HEX.charAt(c >> 4)); this.str(HEX.charAt(c & 15)); }
      else this.bytes(p + i, 1);
    }
    this.str("\"");
  }
  path(s: string): void {
    for (let i = 0; i < s.length && i < 1024; i++) store<u8>(this.pathPtr + i, <u8>s.charCodeAt(i));
    this.pathLen = min(<u32>s.length, 1024);
  }
  // Appends an ASCII string to the path.
  pathStr(s: string): void {
    const n = min(<u32>s.length, 1024 - this.pathLen);
    for (let i: u32 = 0; i < n; i++) store<u8>(this.pathPtr + this.pathLen + i, <u8>s.charCodeAt(i));
    this.pathLen += n;
  }
  // Appends bytes to the path (e.g. a model name).
  pathBytes(p: usize, n: u32): void {
    n = min(n, 1024 - this.pathLen);
    memory.copy(this.pathPtr + this.pathLen, p, n);
    this.pathLen += n;
  }
  header(name: string, value: string): void {
    const h = headPtr + this.headLen;
    if (this.headLen + 8 + name.length + value.length > 4096) return;
    store<u32>(h, name.length);
    store<u32>(h + 4, value.length);
    for (let i = 0; i < name.length; i++) store<u8>(h + 8 + i, <u8>name.charCodeAt(i));
    for (let i = 0; i < value.length; i++) store<u8>(h + 8 + name.length + i, <u8>value.charCodeAt(i));
    this.headLen += 8 + name.length + value.length;
    this.nhead++;
  }
  prompt(kind: u32): void {
    if (this.nholes >= 64) return;
    this.holes[this.nholes * 2] = this.bodyLen;
    this.holes[this.nholes * 2 + 1] = kind;
    this.nholes++;
  }
  // Appends the members of a JSON object as ",members".
  members(p: usize, n: u32): void {
    let i: u32 = 0, j = n;
    while (i < j && isWS(load<u8>(p + i))) i++;
    while (j > i && isWS(load<u8>(p + j - 1))) j--;
    if (j - i < 2 || load<u8>(p + i) != 123) return;
    i++; j--;
    while (i < j && isWS(load<u8>(p + i))) i++;
    while (j > i && isWS(load<u8>(p + j - 1))) j--;
    if (i >= j) return;
    this.str(",");
    this.bytes(p + i, j - i);
  }
}

const HEX = "0123456789abcdef";
const writer = new Writer();
const buildIn = new BuildIn();
const event = new Event();
const summary = new Summary();

// ---- Records ----------------------------------------------------------------

export class Records {
  n: u32 = 0;
  len: u32 = 0;
  textLen: u32 = 0;
  event: u32 = 0;
  added: u32 = 0;
  limit: u32 = 4;

  add(kind: u8, flags: u8, choice: u16, textBytes: u32, tokens: u32, aux0: u32, aux1: u32): void {
    if (this.added >= this.limit || this.len + 24 > recCap) return;
    this.added++;
    this.n++;
    const r = recPtr + this.len;
    store<u8>(r, kind);
    store<u8>(r + 1, flags);
    store<u16>(r + 2, choice);
    store<u32>(r + 4, this.event);
    store<u32>(r + 8, textBytes);
    store<u32>(r + 12, tokens);
    store<u32>(r + 16, aux0);
    store<u32>(r + 20, aux1);
    this.len += 24;
  }
  // Adds a record whose decoded text (JSON string value at p, n) is
  // captured when capture is set.
  addJSONText(kind: u8, p: usize, n: u32, capture: bool): void {
    const before = this.added;
    const len = jsonUnescape(p, n, capture ? textPtr + this.textLen : 0, capture ? textCap - this.textLen : 0);
    if (capture) {
      this.add(kind, FLAG_TEXT_CAPTURED, 0, len, TOKENS_UNKNOWN, 0, 0);
      if (this.added > before) this.textLen += len;
    } else {
      this.add(kind, 0, 0, len, TOKENS_UNKNOWN, 0, 0);
    }
  }
}

const records = new Records();

// ---- ABI exports --------------------------------------------------------

export function reprise_abi_v1(): void {}

export function rp_scratch(which: i32, n: i32): usize {
  if (which == 1) {
    if (<u32>n > outCap) { outPtr = heap.alloc(<usize>n); outCap = <u32>n; }
    return outPtr;
  }
  if (<u32>n > inCap) { inPtr = heap.alloc(<usize>n); inCap = <u32>n; }
  return inPtr;
}

function writeASCII(p: usize, s: string): u32 {
  for (let i = 0; i < s.length; i++) store<u8>(p + i, <u8>s.charCodeAt(i));
  return s.length;
}

export function rp_describe(): i64 {
  const a = adapter;
  if (a == null) return failMsg(4, "no adapter registered");
  const d = a.describe();
  let end = d.lastIndexOf("}");
  if (end < 0) return failMsg(4, "describe: not a JSON object");
  let n = writeASCII(outPtr, d.substring(0, end));
  n += writeASCII(outPtr + n, a.builds() ? ",\"builds\":true" : ",\"builds\":false");
  n += writeASCII(outPtr + n, a.parses() ? ",\"parses\":true" : ",\"parses\":false");
  n += writeASCII(outPtr + n, ",\"max_records_per_event\":");
  n += writeASCII(outPtr + n, a.maxRecordsPerEvent().toString());
  n += writeASCII(outPtr + n, ",\"abi\":1}");
  return pack(0, n);
}

export function rp_configure(n: i32): i64 {
  const err = adapter!.configure(inPtr, <u32>n);
  if (err != null) return failMsg(4, err);
  return pack(0, 0);
}

export function rp_build(n: i32): i64 {
  const b = inPtr;
  if (n < 72) return failMsg(2, "build input shorter than its header");
  const hs = load<u32>(b);
  const r = buildIn;
  r.flags = load<u32>(b + 4);
  r.traceRow = load<i64>(b + 8);
  r.offsetNs = load<i64>(b + 16);
  r.inputTokens = load<u32>(b + 24);
  r.maxTokens = load<u32>(b + 28);
  r.session = load<u32>(b + 32);
  r.turn = load<u32>(b + 36);
  r.blockSize = load<u32>(b + 40);
  r.nHash = load<u32>(b + 44);
  r.rawLen = load<u32>(b + 48);
  r.historyLen = load<u32>(b + 52);
  r.seed = load<u64>(b + 56);
  r.promptTextBytes = load<u32>(b + 64);
  r.promptTokens = load<u32>(b + 68);
  if (hs < 72 || <u64>hs + <u64>r.nHash * 8 + <u64>r.rawLen + <u64>r.historyLen > <u64>n) return failMsg(2, "build input sections run past its length");
  r.hashPtr = b + hs;
  r.rawPtr = r.hashPtr + r.nHash * 8;
  r.historyPtr = r.rawPtr + r.rawLen;
  const w = writer;
  w.reset();
  const err = adapter!.build(r, w);
  if (err != null) return failMsg(4, err);
  const total: u32 = 24 + w.pathLen + w.headLen + w.nholes * 12 + w.bodyLen;
  if (total > outCap) return pack(1, total);
  const o = outPtr;
  store<u32>(o, 24);
  store<u16>(o + 4, w.method);
  store<u16>(o + 6, w.nhead);
  store<u32>(o + 8, w.pathLen);
  store<u32>(o + 12, w.bodyLen);
  store<u32>(o + 16, w.nholes);
  store<u32>(o + 20, 0);
  let off: usize = o + 24;
  memory.copy(off, w.pathPtr, w.pathLen); off += w.pathLen;
  memory.copy(off, headPtr, w.headLen); off += w.headLen;
  for (let i: u32 = 0; i < w.nholes; i++) {
    store<u32>(off, w.holes[i * 2]);
    store<u32>(off + 4, w.holes[i * 2 + 1]);
    store<u32>(off + 8, 0);
    off += 12;
  }
  memory.copy(off, bodyPtr, w.bodyLen);
  return pack(0, total);
}

export function rp_open(ctx: i32, flags: i32): i64 {
  adapter!.open(<u32>ctx, <u32>flags);
  return pack(0, 0);
}

export function rp_parse(ctx: i32, n: i32): i64 {
  const b = inPtr;
  if (n < 16) return failMsg(2, "parse batch shorter than its header");
  const count = load<u32>(b), first = load<u32>(b + 4), bflags = load<u32>(b + 8);
  const o = records;
  o.n = 0; o.len = 0; o.textLen = 0;
  o.limit = adapter!.maxRecordsPerEvent();
  let off: u32 = 16;
  for (let i: u32 = 0; i < count; i++) {
    if (off + 8 > <u32>n) return failMsg(2, "parse batch truncated");
    const dl = load<u32>(b + off), nl = <u32>load<u16>(b + off + 4);
    const ev = event;
    ev.flags = load<u16>(b + off + 6);
    const start = off + 8;
    if (<u64>start + <u64>nl + <u64>dl > <u64>n) return failMsg(2, "parse batch event runs past its length");
    ev.index = first + i;
    ev.end = (bflags & 1) != 0 && i == count - 1;
    ev.namePtr = b + start; ev.nameLen = nl;
    ev.dataPtr = b + start + nl; ev.dataLen = dl;
    off = (start + nl + dl + 3) & ~3;
    o.event = first + i;
    o.added = 0;
    const err = adapter!.parse(<u32>ctx, ev, o);
    if (err != null) return failMsg(4, err);
  }
  const total: u32 = 8 + o.len + o.textLen;
  if (total > outCap) return failMsg(4, "records exceed the output buffer");
  store<u32>(outPtr, o.n);
  store<u32>(outPtr + 4, o.textLen);
  memory.copy(outPtr + 8, recPtr, o.len);
  memory.copy(outPtr + 8 + o.len, textPtr, o.textLen);
  return pack(0, total);
}

export function rp_close(ctx: i32): i64 {
  const s = summary;
  s.valid = 0; s.promptTokens = 0; s.completionTokens = 0; s.reasoningTokens = 0; s.cachedTokens = 0;
  s.finish = 0; s.choices = 0; s.errorCode = 0; s.messagePtr = 0; s.messageLen = 0;
  const err = adapter!.close(<u32>ctx, s);
  if (err != null) return failMsg(4, err);
  const ml = min(s.messageLen, 1024);
  const o = outPtr;
  store<u32>(o, 48);
  store<u32>(o + 4, s.valid);
  store<u32>(o + 8, s.promptTokens);
  store<u32>(o + 12, s.completionTokens);
  store<u32>(o + 16, s.reasoningTokens);
  store<u32>(o + 20, s.cachedTokens);
  store<u32>(o + 24, s.finish);
  store<u32>(o + 28, s.choices);
  store<u32>(o + 32, s.errorCode);
  store<u32>(o + 36, ml);
  store<u32>(o + 40, 0);
  store<u32>(o + 44, 0);
  memory.copy(o + 48, s.messagePtr, ml);
  return pack(0, 48 + ml);
}

// ---- Host imports -----------------------------------------------------------

// @ts-ignore: decorator
@external("reprise", "log_enabled")
export declare function logEnabled(level: i32): i32;
// @ts-ignore: decorator
@external("reprise", "log")
export declare function log(level: i32, ptr: usize, len: i32): void;
// @ts-ignore: decorator
@external("reprise", "token_count")
export declare function tokenCount(ptr: usize, len: i32): i32;
// @ts-ignore: decorator
@external("reprise", "random_u64")
export declare function randomU64(): i64;

// ---- JSON scanner over (ptr, len) -----------------------------------------

// The last lookup's value: valPtr/valLen (valLen 0 = not found).
export let valPtr: usize = 0;
export let valLen: u32 = 0;

export function isWS(c: u8): bool {
  return c == 32 || c == 9 || c == 10 || c == 13;
}

function ws(p: usize, n: u32, i: u32): u32 {
  while (i < n && isWS(load<u8>(p + i))) i++;
  return i;
}

// Index just past the value at i, or 0.
function valueEnd(p: usize, n: u32, i: u32): u32 {
  if (i >= n) return 0;
  const c = load<u8>(p + i);
  if (c == 34) {
    for (let j = i + 1; j < n; j++) {
      const d = load<u8>(p + j);
      if (d == 92) j++;
      else if (d == 34) return j + 1;
    }
    return 0;
  }
  if (c == 123 || c == 91) {
    let depth = 0;
    for (let j = i; j < n; j++) {
      const d = load<u8>(p + j);
      if (d == 34) { // skip the string inline
        j++;
        while (j < n && load<u8>(p + j) != 34) {
          if (load<u8>(p + j) == 92) j++;
          j++;
        }
        if (j >= n) return 0;
      } else if (d == 123 || d == 91) depth++;
      else if (d == 125 || d == 93) {
        depth--;
        if (depth == 0) return j + 1;
      }
    }
    return 0;
  }
  let j = i;
  while (j < n) {
    const d = load<u8>(p + j);
    if (d == 44 || d == 125 || d == 93 || isWS(d)) break;
    j++;
  }
  return j > i ? j : 0;
}

// Whether the JSON string at (p, n) equals the ASCII key s (no escapes).
export function strEq(p: usize, n: u32, s: string): bool {
  if (n != <u32>s.length + 2 || load<u8>(p) != 34) return false;
  for (let i = 0; i < s.length; i++) if (load<u8>(p + 1 + i) != <u8>s.charCodeAt(i)) return false;
  return true;
}

// Looks up key in the object at (p, n); sets valPtr/valLen, returns found.
export function get(p: usize, n: u32, key: string): bool {
  valPtr = 0; valLen = 0;
  let i = ws(p, n, 0);
  if (i >= n || load<u8>(p + i) != 123) return false;
  i = ws(p, n, i + 1);
  let found = false;
  while (i < n && load<u8>(p + i) != 125) {
    if (load<u8>(p + i) != 34) return found;
    const ke = valueEnd(p, n, i);
    if (ke == 0) return found;
    const kp = p + i, kl = ke - i;
    i = ws(p, n, ke);
    if (i >= n || load<u8>(p + i) != 58) return found;
    i = ws(p, n, i + 1);
    const ve = valueEnd(p, n, i);
    if (ve == 0) return found;
    if (strEq(kp, kl, key)) { valPtr = p + i; valLen = ve - i; found = true; }
    i = ws(p, n, ve);
    if (i < n && load<u8>(p + i) == 44) i = ws(p, n, i + 1);
  }
  return found;
}

// One-pass iteration over an object's members (use it on hot paths
// instead of several get calls):
//
//   let pos = objectStart(p, n);
//   while ((pos = objectNext(p, n, pos)) != 0) {
//     if (keyIs("text")) { ... valPtr, valLen ... }
//   }
export let keyPtr: usize = 0;
export let keyLen: u32 = 0;

// Returns the position of the first member of the object at (p, n), or 0
// when it is not an object.
export function objectStart(p: usize, n: u32): u32 {
  const i = ws(p, n, 0);
  if (i >= n || load<u8>(p + i) != 123) return 0;
  return ws(p, n, i + 1);
}

// Reads the member at pos into keyPtr/keyLen (raw, with quotes) and
// valPtr/valLen, and returns the next position; 0 at the end.
export function objectNext(p: usize, n: u32, pos: u32): u32 {
  let i = pos;
  if (i == 0 || i >= n || load<u8>(p + i) != 34) return 0;
  const ke = valueEnd(p, n, i);
  if (ke == 0) return 0;
  keyPtr = p + i; keyLen = ke - i;
  i = ws(p, n, ke);
  if (i >= n || load<u8>(p + i) != 58) return 0;
  i = ws(p, n, i + 1);
  const ve = valueEnd(p, n, i);
  if (ve == 0) return 0;
  valPtr = p + i; valLen = ve - i;
  i = ws(p, n, ve);
  if (i < n && load<u8>(p + i) == 44) i = ws(p, n, i + 1);
  return i;
}

// Whether the current key (from objectNext) is the ASCII s.
export function keyIs(s: string): bool {
  return strEq(keyPtr, keyLen, s);
}

export function isString(p: usize, n: u32): bool {
  return n >= 2 && load<u8>(p) == 34;
}

export function isNull(p: usize, n: u32): bool {
  return n == 0 || (n == 4 && load<u8>(p) == 110);
}

function hexv(c: u8): i32 {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function hex4(p: usize, n: u32, i: u32): i32 {
  if (i + 4 > n) return -1;
  let r = 0;
  for (let k: u32 = 0; k < 4; k++) {
    const h = hexv(load<u8>(p + i + k));
    if (h < 0) return -1;
    r = (r << 4) | h;
  }
  return r;
}

function putByte(dst: usize, cap: u32, o: u32, c: u8): void {
  if (dst != 0 && o < cap) store<u8>(dst + o, c);
}

// Decodes the JSON string at (p, n) into dst (capacity cap; dst 0 only
// measures) and returns the decoded length.
export function jsonUnescape(p: usize, n: u32, dst: usize, cap: u32): u32 {
  if (!isString(p, n)) return 0;
  p += 1; n -= 2;
  let o: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    let c = load<u8>(p + i);
    if (c != 92 || i + 1 >= n) { putByte(dst, cap, o++, c); continue; }
    i++;
    c = load<u8>(p + i);
    if (c == 110) c = 10;
    else if (c == 116) c = 9;
    else if (c == 114) c = 13;
    else if (c == 98) c = 8;
    else if (c == 102) c = 12;
    else if (c == 117) {
      let r = hex4(p, n, i + 1);
      let w: u32 = 4;
      if (r < 0) { r = 0xFFFD; w = 0; }
      else if (r >= 0xD800 && r < 0xDC00 && i + 10 < n && load<u8>(p + i + 5) == 92 && load<u8>(p + i + 6) == 117) {
        const r2 = hex4(p, n, i + 7);
        if (r2 >= 0xDC00 && r2 < 0xE000) { r = ((r - 0xD800) << 10) + (r2 - 0xDC00) + 0x10000; w = 10; }
        else r = 0xFFFD;
      } else if (r >= 0xD800 && r < 0xE000) r = 0xFFFD;
      i += w;
      if (r < 0x80) putByte(dst, cap, o++, <u8>r);
      else if (r < 0x800) { putByte(dst, cap, o++, <u8>(0xC0 | (r >> 6))); putByte(dst, cap, o++, <u8>(0x80 | (r & 0x3F))); }
      else if (r < 0x10000) { putByte(dst, cap, o++, <u8>(0xE0 | (r >> 12))); putByte(dst, cap, o++, <u8>(0x80 | ((r >> 6) & 0x3F))); putByte(dst, cap, o++, <u8>(0x80 | (r & 0x3F))); }
      else { putByte(dst, cap, o++, <u8>(0xF0 | (r >> 18))); putByte(dst, cap, o++, <u8>(0x80 | ((r >> 12) & 0x3F))); putByte(dst, cap, o++, <u8>(0x80 | ((r >> 6) & 0x3F))); putByte(dst, cap, o++, <u8>(0x80 | (r & 0x3F))); }
      continue;
    }
    putByte(dst, cap, o++, c);
  }
  return o;
}
