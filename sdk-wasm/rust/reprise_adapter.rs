//! Rust SDK for reprise endpoint adapters, ABI v1 (docs/format/adapter-abi.md
//! in the reprise repository). A single module with no dependencies: include
//! it with `#[path = "…/reprise_adapter.rs"] mod rp;`, implement [`Adapter`]
//! for a `Default` type and call `rp::export_adapter!(MyType);`. Build a
//! reactor (no `_start`) with `rustc-wasm.sh` (beside this file):
//!
//! ```sh
//! sh rustc-wasm.sh my.wasm src/main.rs   # picks a rustc with a WASI std;
//! # its target is wasm32-wasip1, or wasm32-wasi on rustc < 1.78
//! ```
//!
//! The crate root needs `#![no_main]`.
#![allow(dead_code)]

pub const POST: u16 = 0;
pub const GET: u16 = 1;
pub const PUT: u16 = 2;
pub const HOLE_TEXT: u32 = 1;
pub const HOLE_TOKENS: u32 = 2;
pub const HOLE_MESSAGES: u32 = 3;
pub const BUILD_STREAM: u32 = 1;
pub const OPEN_STREAM: u32 = 1;
pub const OPEN_CAPTURE: u32 = 2;
pub const EV_COMMENT: u16 = 1;
pub const EV_DONE: u16 = 2;
pub const EV_WHOLE_BODY: u16 = 4;
pub const EV_NON_OK: u16 = 8;
pub const IGNORE: u8 = 0;
pub const CONTENT: u8 = 1;
pub const REASONING: u8 = 2;
pub const TOOL_CALL: u8 = 3;
pub const USAGE: u8 = 4;
pub const ERROR: u8 = 5;
pub const FINISH: u8 = 6;
pub const META: u8 = 7;
pub const FLAG_TEXT_CAPTURED: u8 = 1;
pub const FLAG_TOKENS_EXACT: u8 = 2;
pub const FLAG_REFUSAL: u8 = 4;
pub const FINISH_UNKNOWN: u32 = 0;
pub const FINISH_STOP: u32 = 1;
pub const FINISH_LENGTH: u32 = 2;
pub const FINISH_TOOL_CALLS: u32 = 3;
pub const FINISH_CONTENT_FILTER: u32 = 4;
pub const FINISH_ERROR: u32 = 5;
pub const VALID_PROMPT: u32 = 1;
pub const VALID_COMPLETION: u32 = 2;
pub const VALID_REASONING: u32 = 4;
pub const VALID_CACHED: u32 = 8;
pub const VALID_FINISH: u32 = 16;
pub const VALID_ERROR: u32 = 32;
pub const TOKENS_UNKNOWN: u32 = 0xFFFF_FFFF;

/// One request's fields (ABI §3); slices borrow the input buffer.
pub struct BuildIn<'a> {
    pub flags: u32,
    pub trace_row: i64,
    pub offset_ns: i64,
    pub input_tokens: u32,
    pub max_tokens: u32,
    pub session: u32,
    pub turn: u32,
    pub block_size: u32,
    pub hash_ids: &'a [u8],
    pub raw: &'a [u8],
    pub history: &'a [u8],
    pub seed: u64,
    pub prompt_text_bytes: u32,
    pub prompt_tokens: u32,
}

impl<'a> BuildIn<'a> {
    pub fn stream(&self) -> bool {
        self.flags & BUILD_STREAM != 0
    }
    pub fn hash_id(&self, i: usize) -> u64 {
        u64::from_le_bytes(self.hash_ids[i * 8..i * 8 + 8].try_into().unwrap())
    }
}

/// The request being built.
#[derive(Default)]
pub struct Writer {
    method: u16,
    nhead: u16,
    nholes: u32,
    path: Vec<u8>,
    heads: Vec<u8>,
    holes: Vec<u8>,
    pub body: Vec<u8>,
}

impl Writer {
    pub fn method(&mut self, m: u16) {
        self.method = m;
    }
    pub fn path(&mut self, p: &str) {
        self.path.clear();
        self.path.extend_from_slice(p.as_bytes());
    }
    pub fn header(&mut self, name: &str, value: &str) {
        self.heads.extend_from_slice(&(name.len() as u32).to_le_bytes());
        self.heads.extend_from_slice(&(value.len() as u32).to_le_bytes());
        self.heads.extend_from_slice(name.as_bytes());
        self.heads.extend_from_slice(value.as_bytes());
        self.nhead += 1;
    }
    pub fn raw(&mut self, b: &[u8]) {
        self.body.extend_from_slice(b);
    }
    pub fn str(&mut self, s: &str) {
        self.body.extend_from_slice(s.as_bytes());
    }
    /// Appends s as a quoted JSON string.
    pub fn quoted(&mut self, s: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.body.push(b'"');
        for &c in s {
            match c {
                b'"' | b'\\' => self.body.extend_from_slice(&[b'\\', c]),
                b'\n' => self.body.extend_from_slice(b"\\n"),
                b'\r' => self.body.extend_from_slice(b"\\r"),
                b'\t' => self.body.extend_from_slice(b"\\t"),
                c if c < 0x20 => self.body.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
                c => self.body.push(c),
            }
        }
        self.body.push(b'"');
    }
    pub fn uint(&mut self, v: u64) {
        self.body.extend_from_slice(v.to_string().as_bytes());
    }
    /// Marks a prompt hole of the given kind at the end of the body.
    pub fn prompt(&mut self, kind: u32) {
        self.holes.extend_from_slice(&(self.body.len() as u32).to_le_bytes());
        self.holes.extend_from_slice(&kind.to_le_bytes());
        self.holes.extend_from_slice(&0u32.to_le_bytes());
        self.nholes += 1;
    }
    /// Appends the members of a JSON object as ",members".
    pub fn members(&mut self, obj: &[u8]) {
        let t = trim(obj);
        if t.len() < 2 || t[0] != b'{' {
            return;
        }
        let inner = trim(&t[1..t.len() - 1]);
        if !inner.is_empty() {
            self.body.push(b',');
            self.body.extend_from_slice(inner);
        }
    }
    fn reset(&mut self) {
        self.method = POST;
        self.nhead = 0;
        self.nholes = 0;
        self.path.clear();
        self.heads.clear();
        self.holes.clear();
        self.body.clear();
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&24u32.to_le_bytes());
        out.extend_from_slice(&self.method.to_le_bytes());
        out.extend_from_slice(&self.nhead.to_le_bytes());
        out.extend_from_slice(&(self.path.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.body.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.nholes.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.path);
        out.extend_from_slice(&self.heads);
        out.extend_from_slice(&self.holes);
        out.extend_from_slice(&self.body);
    }
}

/// One framed event (ABI §4).
pub struct Event<'a> {
    pub index: u32,
    pub flags: u16,
    pub end: bool,
    pub name: &'a [u8],
    pub data: &'a [u8],
}

#[derive(Clone, Copy)]
pub struct Record {
    pub kind: u8,
    pub flags: u8,
    pub choice: u16,
    pub text_bytes: u32,
    pub tokens: u32,
    pub aux0: u32,
    pub aux1: u32,
}

impl Record {
    pub fn new(kind: u8) -> Record {
        Record { kind, flags: 0, choice: 0, text_bytes: 0, tokens: TOKENS_UNKNOWN, aux0: 0, aux1: 0 }
    }
}

/// The records of the batch being parsed.
#[derive(Default)]
pub struct Records {
    recs: Vec<u8>,
    text: Vec<u8>,
    n: u32,
    event: u32,
    added: u32,
    limit: u32,
}

impl Records {
    pub fn add(&mut self, r: Record) {
        self.add_with(r, &[]);
    }
    /// Adds r with its decoded text captured when `capture` (r.text_bytes = text.len()).
    pub fn add_text(&mut self, mut r: Record, text: &[u8], capture: bool) {
        if capture {
            r.flags |= FLAG_TEXT_CAPTURED;
            r.text_bytes = text.len() as u32;
            self.add_with(r, text);
        } else {
            self.add_with(r, &[]);
        }
    }
    fn add_with(&mut self, r: Record, text: &[u8]) {
        if self.added >= self.limit {
            return;
        }
        self.added += 1;
        self.n += 1;
        let mut t = [0u8; 24];
        t[0] = r.kind;
        t[1] = r.flags;
        t[2..4].copy_from_slice(&r.choice.to_le_bytes());
        t[4..8].copy_from_slice(&self.event.to_le_bytes());
        t[8..12].copy_from_slice(&r.text_bytes.to_le_bytes());
        t[12..16].copy_from_slice(&r.tokens.to_le_bytes());
        t[16..20].copy_from_slice(&r.aux0.to_le_bytes());
        t[20..24].copy_from_slice(&r.aux1.to_le_bytes());
        self.recs.extend_from_slice(&t);
        self.text.extend_from_slice(text);
    }
}

/// Final summary (ABI §5).
#[derive(Default, Clone)]
pub struct Summary {
    pub valid: u32,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub reasoning_tokens: u32,
    pub cached_tokens: u32,
    pub finish: u32,
    pub choices: u32,
    pub error_code: u32,
    pub message: Vec<u8>,
    pub extras: Vec<u8>,
}

/// An adapter. `describe` returns the description JSON without "abi",
/// "builds" and "parses" (the SDK adds them from `BUILDS`/`PARSES`).
pub trait Adapter: Default {
    const BUILDS: bool = true;
    const PARSES: bool = true;
    const MAX_RECORDS_PER_EVENT: u32 = 4;
    fn describe(&self) -> &'static str;
    fn configure(&mut self, _config: &[u8]) -> Result<(), String> {
        Ok(())
    }
    fn build(&mut self, _req: &BuildIn, _w: &mut Writer) -> Result<(), String> {
        Err("this adapter does not build requests".into())
    }
    fn open(&mut self, _ctx: u32, _flags: u32) {}
    fn parse(&mut self, _ctx: u32, _ev: &Event, _out: &mut Records) -> Result<(), String> {
        Err("this adapter does not parse responses".into())
    }
    fn close(&mut self, _ctx: u32, _s: &mut Summary) -> Result<(), String> {
        Ok(())
    }
}

// ---- Host imports --------------------------------------------------------

#[link(wasm_import_module = "reprise")]
extern "C" {
    #[link_name = "log_enabled"]
    fn rp_log_enabled(level: i32) -> i32;
    #[link_name = "log"]
    fn rp_log(level: i32, p: *const u8, n: i32);
    #[link_name = "token_count"]
    fn rp_token_count(p: *const u8, n: i32) -> i32;
    #[link_name = "random_u64"]
    fn rp_random_u64() -> i64;
}

pub const LEVEL_DEBUG: i32 = -4;
pub const LEVEL_INFO: i32 = 0;
pub const LEVEL_WARN: i32 = 4;
pub const LEVEL_ERROR: i32 = 8;

/// Reports whether the host logs `level`; check before formatting.
pub fn log_enabled(level: i32) -> bool {
    unsafe { rp_log_enabled(level) != 0 }
}
pub fn log(level: i32, msg: &str) {
    unsafe { rp_log(level, msg.as_ptr(), msg.len() as i32) }
}
/// Tokens in text under the run's tokenizer; -1 without one.
pub fn token_count(text: &[u8]) -> i32 {
    unsafe { rp_token_count(text.as_ptr(), text.len() as i32) }
}
/// Next value of the deterministic per-request random stream.
pub fn random_u64() -> u64 {
    unsafe { rp_random_u64() as u64 }
}

// ---- ABI plumbing (used by export_adapter!) -------------------------------

pub struct Host<A: Adapter> {
    pub adapter: A,
    pub inbuf: Vec<u8>,
    pub outbuf: Vec<u8>,
    scratch: Vec<u8>,
    writer: Writer,
    records: Records,
}

impl<A: Adapter> Host<A> {
    pub fn new() -> Self {
        Host { adapter: A::default(), inbuf: vec![0; 65536], outbuf: vec![0; 65536], scratch: Vec::new(), writer: Writer::default(), records: Records::default() }
    }
    fn pack(st: u32, v: usize) -> i64 {
        (((st as u64) << 32) | (v as u32 as u64)) as i64
    }
    fn fail(&mut self, st: u32, msg: &str) -> i64 {
        let n = msg.len().min(self.outbuf.len());
        self.outbuf[..n].copy_from_slice(&msg.as_bytes()[..n]);
        Self::pack(st, n)
    }
    fn result_scratch(&mut self) -> i64 {
        let n = self.scratch.len();
        if n > self.outbuf.len() {
            return Self::pack(1, n);
        }
        self.outbuf[..n].copy_from_slice(&self.scratch);
        Self::pack(0, n)
    }
    pub fn scratch_ptr(&mut self, which: i32, n: i32) -> *mut u8 {
        let b = if which == 1 { &mut self.outbuf } else { &mut self.inbuf };
        if n as usize > b.len() {
            b.resize(n as usize, 0);
        }
        b.as_mut_ptr()
    }
    pub fn describe(&mut self) -> i64 {
        let d = self.adapter.describe().trim_end();
        if !d.ends_with('}') {
            return self.fail(4, "describe: not a JSON object");
        }
        let mut s = String::from(&d[..d.len() - 1]);
        s.push_str(&format!(",\"abi\":1,\"builds\":{},\"parses\":{},\"max_records_per_event\":{}}}", A::BUILDS, A::PARSES, A::MAX_RECORDS_PER_EVENT));
        self.scratch.clear();
        self.scratch.extend_from_slice(s.as_bytes());
        self.result_scratch()
    }
    pub fn configure(&mut self, n: i32) -> i64 {
        let cfg = self.inbuf[..n as usize].to_vec();
        match self.adapter.configure(&cfg) {
            Ok(()) => Self::pack(0, 0),
            Err(e) => self.fail(4, &e),
        }
    }
    pub fn build(&mut self, n: i32) -> i64 {
        let b = &self.inbuf[..n as usize];
        if b.len() < 72 {
            return self.fail(2, "build input shorter than its header");
        }
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let hs = u32at(0) as usize;
        let nh = u32at(44) as usize;
        let rl = u32at(48) as usize;
        let hl = u32at(52) as usize;
        if hs < 72 || hs + nh * 8 + rl + hl > b.len() {
            return self.fail(2, "build input sections run past its length");
        }
        let raw_at = hs + nh * 8;
        let req = BuildIn {
            flags: u32at(4),
            trace_row: u64at(8) as i64,
            offset_ns: u64at(16) as i64,
            input_tokens: u32at(24),
            max_tokens: u32at(28),
            session: u32at(32),
            turn: u32at(36),
            block_size: u32at(40),
            hash_ids: &b[hs..raw_at],
            raw: &b[raw_at..raw_at + rl],
            history: &b[raw_at + rl..raw_at + rl + hl],
            seed: u64at(56),
            prompt_text_bytes: u32at(64),
            prompt_tokens: u32at(68),
        };
        self.writer.reset();
        if let Err(e) = self.adapter.build(&req, &mut self.writer) {
            return self.fail(4, &e);
        }
        self.writer.encode(&mut self.scratch);
        self.result_scratch()
    }
    pub fn open(&mut self, ctx: i32, flags: i32) -> i64 {
        self.adapter.open(ctx as u32, flags as u32);
        Self::pack(0, 0)
    }
    pub fn parse(&mut self, ctx: i32, n: i32) -> i64 {
        let n = n as usize;
        if n < 16 || n > self.inbuf.len() {
            return self.fail(2, "parse batch shorter than its header");
        }
        let inbuf = core::mem::take(&mut self.inbuf);
        let r = self.parse_batch(ctx as u32, &inbuf[..n]);
        self.inbuf = inbuf;
        match r {
            Ok(v) => v,
            Err(e) => self.fail(4, &e),
        }
    }
    fn parse_batch(&mut self, ctx: u32, b: &[u8]) -> Result<i64, String> {
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let (count, first, bflags) = (u32at(0), u32at(4), u32at(8));
        let rec = &mut self.records;
        rec.recs.clear();
        rec.text.clear();
        rec.n = 0;
        rec.limit = A::MAX_RECORDS_PER_EVENT;
        let mut off = 16usize;
        for i in 0..count {
            if off + 8 > b.len() {
                return Err("parse batch truncated".into());
            }
            let dl = u32at(off) as usize;
            let nl = u16::from_le_bytes([b[off + 4], b[off + 5]]) as usize;
            let fl = u16::from_le_bytes([b[off + 6], b[off + 7]]);
            let start = off + 8;
            if start + nl + dl > b.len() {
                return Err("parse batch event runs past its length".into());
            }
            let ev = Event { index: first + i, flags: fl, end: bflags & 1 != 0 && i == count - 1, name: &b[start..start + nl], data: &b[start + nl..start + nl + dl] };
            off = (start + nl + dl + 3) & !3;
            rec.event = first + i;
            rec.added = 0;
            self.adapter.parse(ctx, &ev, rec)?;
        }
        let total = 8 + rec.recs.len() + rec.text.len();
        if total > self.outbuf.len() {
            return Err("records exceed the output buffer".into());
        }
        self.outbuf[0..4].copy_from_slice(&rec.n.to_le_bytes());
        self.outbuf[4..8].copy_from_slice(&(rec.text.len() as u32).to_le_bytes());
        self.outbuf[8..8 + rec.recs.len()].copy_from_slice(&rec.recs);
        self.outbuf[8 + rec.recs.len()..total].copy_from_slice(&rec.text);
        Ok(Self::pack(0, total))
    }
    pub fn close(&mut self, ctx: i32) -> i64 {
        let mut s = Summary::default();
        if let Err(e) = self.adapter.close(ctx as u32, &mut s) {
            return self.fail(4, &e);
        }
        let ml = s.message.len().min(1024);
        let xl = if s.extras.len() > 4096 { 0 } else { s.extras.len() };
        let o = &mut self.scratch;
        o.clear();
        for v in [48, s.valid, s.prompt_tokens, s.completion_tokens, s.reasoning_tokens, s.cached_tokens, s.finish, s.choices, s.error_code, ml as u32, xl as u32, 0] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        o.extend_from_slice(&s.message[..ml]);
        o.extend_from_slice(&s.extras[..xl]);
        self.result_scratch()
    }
}

/// Exports the ABI for adapter type `$t` (which implements [`Adapter`] and `Default`).
#[macro_export]
macro_rules! export_adapter {
    ($t:ty) => {
        static mut RP_HOST: Option<rp::Host<$t>> = None;
        fn rp_host() -> &'static mut rp::Host<$t> {
            unsafe {
                if RP_HOST.is_none() {
                    RP_HOST = Some(rp::Host::new());
                }
                RP_HOST.as_mut().unwrap()
            }
        }
        #[no_mangle]
        pub extern "C" fn reprise_abi_v1() {}
        #[no_mangle]
        pub extern "C" fn rp_scratch(which: i32, n: i32) -> *mut u8 {
            rp_host().scratch_ptr(which, n)
        }
        #[no_mangle]
        pub extern "C" fn rp_describe() -> i64 {
            rp_host().describe()
        }
        #[no_mangle]
        pub extern "C" fn rp_configure(n: i32) -> i64 {
            rp_host().configure(n)
        }
        #[no_mangle]
        pub extern "C" fn rp_build(n: i32) -> i64 {
            rp_host().build(n)
        }
        #[no_mangle]
        pub extern "C" fn rp_open(ctx: i32, flags: i32) -> i64 {
            rp_host().open(ctx, flags)
        }
        #[no_mangle]
        pub extern "C" fn rp_parse(ctx: i32, n: i32) -> i64 {
            rp_host().parse(ctx, n)
        }
        #[no_mangle]
        pub extern "C" fn rp_close(ctx: i32) -> i64 {
            rp_host().close(ctx)
        }
    };
}
pub use export_adapter;

// ---- JSON scanner -----------------------------------------------------------

pub fn trim(b: &[u8]) -> &[u8] {
    let mut i = 0;
    let mut j = b.len();
    while i < j && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    while j > i && matches!(b[j - 1], b' ' | b'\t' | b'\n' | b'\r') {
        j -= 1;
    }
    &b[i..j]
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Index just past the value starting at i.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    let c = *b.get(i)?;
    match c {
        b'"' => {
            let mut j = i + 1;
            while j < b.len() {
                match b[j] {
                    b'\\' => j += 1,
                    b'"' => return Some(j + 1),
                    _ => {}
                }
                j += 1;
            }
            None
        }
        b'{' | b'[' => {
            let mut depth = 0i32;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        // Skip the string inline (no call per string).
                        j += 1;
                        while j < b.len() && b[j] != b'"' {
                            if b[j] == b'\\' {
                                j += 1;
                            }
                            j += 1;
                        }
                        if j >= b.len() {
                            return None;
                        }
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            if j > i {
                Some(j)
            } else {
                None
            }
        }
    }
}

/// Calls f for every member of a JSON object; false when obj is not one.
pub fn members<'a>(obj: &'a [u8], mut f: impl FnMut(&'a [u8], &'a [u8])) -> bool {
    let mut i = ws(obj, 0);
    if obj.get(i) != Some(&b'{') {
        return false;
    }
    i = ws(obj, i + 1);
    while i < obj.len() && obj[i] != b'}' {
        if obj[i] != b'"' {
            return false;
        }
        let ke = match value_end(obj, i) {
            Some(e) => e,
            None => return false,
        };
        let k = &obj[i..ke];
        i = ws(obj, ke);
        if obj.get(i) != Some(&b':') {
            return false;
        }
        i = ws(obj, i + 1);
        let ve = match value_end(obj, i) {
            Some(e) => e,
            None => return false,
        };
        f(k, &obj[i..ve]);
        i = ws(obj, ve);
        if obj.get(i) == Some(&b',') {
            i = ws(obj, i + 1);
        }
    }
    i < obj.len()
}

/// The raw value of `key` in object `obj` (last duplicate wins).
pub fn get<'a>(obj: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let mut found = None;
    members(obj, |k, v| {
        if str_eq(k, key) {
            found = Some(v)
        }
    });
    found
}

/// Follows keys through nested objects.
pub fn get_path<'a>(mut obj: &'a [u8], keys: &[&str]) -> Option<&'a [u8]> {
    for k in keys {
        obj = get(obj, k)?;
    }
    Some(obj)
}

/// Calls f for every element of a JSON array.
pub fn each<'a>(arr: &'a [u8], mut f: impl FnMut(&'a [u8])) -> bool {
    let mut i = ws(arr, 0);
    if arr.get(i) != Some(&b'[') {
        return false;
    }
    i = ws(arr, i + 1);
    while i < arr.len() && arr[i] != b']' {
        let e = match value_end(arr, i) {
            Some(e) => e,
            None => return false,
        };
        f(&arr[i..e]);
        i = ws(arr, e);
        if arr.get(i) == Some(&b',') {
            i = ws(arr, i + 1);
        }
    }
    true
}

pub fn is_string(v: &[u8]) -> bool {
    v.len() >= 2 && v[0] == b'"'
}
pub fn is_null(v: Option<&[u8]>) -> bool {
    matches!(v, None | Some(b"null"))
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    if i + 4 > b.len() {
        return None;
    }
    let mut r = 0u32;
    for k in 0..4 {
        r = r << 4 | (b[i + k] as char).to_digit(16)?;
    }
    Some(r)
}

/// Appends the decoded JSON string v to dst (escapes decoded, lone
/// surrogates as U+FFFD) and returns the decoded length.
pub fn unescape(v: &[u8], dst: &mut Vec<u8>) -> usize {
    if !is_string(v) {
        return 0;
    }
    let start = dst.len();
    let b = &v[1..v.len() - 1];
    if !b.contains(&b'\\') {
        dst.extend_from_slice(b);
        return b.len();
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c != b'\\' || i + 1 >= b.len() {
            dst.push(c);
            i += 1;
            continue;
        }
        i += 1;
        match b[i] {
            b'n' => dst.push(b'\n'),
            b't' => dst.push(b'\t'),
            b'r' => dst.push(b'\r'),
            b'b' => dst.push(8),
            b'f' => dst.push(12),
            b'u' => {
                let mut r = 0xFFFDu32;
                let mut w = 0;
                if let Some(r1) = hex4(b, i + 1) {
                    w = 4;
                    r = r1;
                    if (0xD800..0xDC00).contains(&r1) && i + 10 < b.len() && b[i + 5] == b'\\' && b[i + 6] == b'u' {
                        if let Some(r2) = hex4(b, i + 7) {
                            if (0xDC00..0xE000).contains(&r2) {
                                r = ((r1 - 0xD800) << 10) + (r2 - 0xDC00) + 0x10000;
                                w = 10;
                            }
                        }
                    }
                    if w == 4 && (0xD800..0xE000).contains(&r1) {
                        r = 0xFFFD;
                    }
                }
                let ch = char::from_u32(r).unwrap_or('\u{FFFD}');
                let mut t = [0u8; 4];
                dst.extend_from_slice(ch.encode_utf8(&mut t).as_bytes());
                i += w;
            }
            x => dst.push(x),
        }
        i += 1;
    }
    dst.len() - start
}

/// Decoded byte length of the JSON string v, without decoding when it has
/// no escapes.
pub fn str_len(v: &[u8]) -> usize {
    if !is_string(v) {
        return 0;
    }
    let inner = &v[1..v.len() - 1];
    if !inner.contains(&b'\\') {
        return inner.len();
    }
    let mut t = Vec::new();
    unescape(v, &mut t)
}

/// Whether the JSON string v decodes to s.
pub fn str_eq(v: &[u8], s: &str) -> bool {
    if !is_string(v) {
        return false;
    }
    let inner = &v[1..v.len() - 1];
    if !inner.contains(&b'\\') {
        return inner == s.as_bytes();
    }
    let mut t = Vec::new();
    unescape(v, &mut t);
    t == s.as_bytes()
}

/// A JSON number as a count (integer part; negative → 0; clamped).
pub fn uint(v: Option<&[u8]>) -> Option<u32> {
    let v = v?;
    let (neg, d) = if v.first() == Some(&b'-') { (true, &v[1..]) } else { (false, v) };
    if d.is_empty() || !d[0].is_ascii_digit() {
        return None;
    }
    let mut x = 0u64;
    for &c in d {
        if !c.is_ascii_digit() {
            break;
        }
        if x < 1 << 40 {
            x = x * 10 + (c - b'0') as u64;
        }
    }
    Some(if neg { 0 } else { x.min(0xFFFF_FFFE) as u32 })
}

/// Maps a finish/stop reason JSON string to a finish code.
pub fn finish_code(v: &[u8]) -> u32 {
    for (s, c) in [
        ("stop", FINISH_STOP), ("end_turn", FINISH_STOP), ("stop_sequence", FINISH_STOP), ("eos", FINISH_STOP),
        ("length", FINISH_LENGTH), ("max_tokens", FINISH_LENGTH), ("model_context_window_exceeded", FINISH_LENGTH),
        ("tool_calls", FINISH_TOOL_CALLS), ("tool_use", FINISH_TOOL_CALLS), ("function_call", FINISH_TOOL_CALLS),
        ("content_filter", FINISH_CONTENT_FILTER), ("refusal", FINISH_CONTENT_FILTER), ("error", FINISH_ERROR),
    ] {
        if str_eq(v, s) {
            return c;
        }
    }
    FINISH_UNKNOWN
}
