//! anthropic-messages: the Anthropic Messages API (`POST /v1/messages`),
//! streaming with extended thinking (thinking blocks → reasoning records),
//! tool use, usage from `message_start`/`message_delta`, and `error`
//! events. Build (scripts/wasm.sh):
//!
//! ```sh
//! sh ../../../sdk-wasm/rust/rustc-wasm.sh \
//!   ../anthropic-messages.wasm main.rs   # wasm32-wasip1, or wasm32-wasi on rustc < 1.78
//! ```
//!
//! Options (`--adapter-config`): `{"api_key": "…", "anthropic_version": "2023-06-01",
//! "thinking_budget": 2048, "max_tokens_default": 1024}`.
#![no_main]

#[path = "../../../sdk-wasm/rust/reprise_adapter.rs"]
mod rp;

use std::collections::HashMap;

#[derive(Default)]
struct Stream {
    flags: u32,
    sum: rp::Summary,
}

#[derive(Default)]
struct Anthropic {
    model: Vec<u8>,
    api_key: String,
    version: String,
    thinking_budget: u32,
    max_tokens_default: u32,
    extra: Vec<u8>,
    streams: HashMap<u32, Stream>,
    text: Vec<u8>,
}

impl Anthropic {
    fn error_code(kind: Option<&[u8]>) -> u32 {
        match kind {
            Some(k) if rp::str_eq(k, "overloaded_error") => 529,
            Some(k) if rp::str_eq(k, "rate_limit_error") => 429,
            Some(k) if rp::str_eq(k, "invalid_request_error") => 400,
            Some(k) if rp::str_eq(k, "authentication_error") => 401,
            Some(k) if rp::str_eq(k, "permission_error") => 403,
            Some(k) if rp::str_eq(k, "not_found_error") => 404,
            Some(k) if rp::str_eq(k, "request_too_large") => 413,
            Some(k) if rp::str_eq(k, "api_error") => 500,
            _ => 500,
        }
    }
}

fn set_error(st: &mut Stream, err: &[u8], out: &mut rp::Records) {
    let code = Anthropic::error_code(rp::get(err, "type"));
    st.sum.valid |= rp::VALID_ERROR;
    st.sum.error_code = code;
    st.sum.message.clear();
    if let Some(m) = rp::get(err, "message") {
        rp::unescape(m, &mut st.sum.message);
    }
    let mut r = rp::Record::new(rp::ERROR);
    r.aux0 = code;
    out.add(r);
}

fn usage(st: &mut Stream, u: &[u8], out: &mut rp::Records) {
    let s = &mut st.sum;
    let mut any = false;
    if let Some(n) = rp::uint(rp::get(u, "input_tokens")) {
        // Anthropic counts cached tokens apart from input_tokens; the prompt is their sum.
        let cached = rp::uint(rp::get(u, "cache_read_input_tokens")).unwrap_or(0);
        let created = rp::uint(rp::get(u, "cache_creation_input_tokens")).unwrap_or(0);
        s.prompt_tokens = n.saturating_add(cached).saturating_add(created);
        s.valid |= rp::VALID_PROMPT;
        if rp::get(u, "cache_read_input_tokens").is_some() {
            s.cached_tokens = cached;
            s.valid |= rp::VALID_CACHED;
        }
        any = true;
    }
    if let Some(n) = rp::uint(rp::get(u, "output_tokens")) {
        s.completion_tokens = n;
        s.valid |= rp::VALID_COMPLETION;
        any = true;
    }
    if any {
        out.add(rp::Record::new(rp::USAGE));
    }
}

fn finish(st: &mut Stream, reason: Option<&[u8]>, out: &mut rp::Records) {
    if let Some(r) = reason {
        if rp::is_string(r) {
            let mut rec = rp::Record::new(rp::FINISH);
            rec.aux0 = rp::finish_code(r);
            st.sum.finish = rec.aux0;
            st.sum.valid |= rp::VALID_FINISH;
            out.add(rec);
        }
    }
}

impl rp::Adapter for Anthropic {
    const MAX_RECORDS_PER_EVENT: u32 = 8;

    fn describe(&self) -> &'static str {
        r#"{"name":"anthropic-messages","version":"1","path":"/v1/messages","framing":"sse"}"#
    }

    fn configure(&mut self, c: &[u8]) -> Result<(), String> {
        self.model.clear();
        if let Some(m) = rp::get(c, "model") {
            rp::unescape(m, &mut self.model);
        }
        let opts = rp::get(c, "options").unwrap_or(b"{}");
        let mut s = Vec::new();
        self.api_key = match rp::get(opts, "api_key") {
            Some(v) => {
                rp::unescape(v, &mut s);
                String::from_utf8(s.clone()).map_err(|_| "api_key: not UTF-8".to_string())?
            }
            None => String::new(),
        };
        s.clear();
        self.version = match rp::get(opts, "anthropic_version") {
            Some(v) => {
                rp::unescape(v, &mut s);
                String::from_utf8(s).map_err(|_| "anthropic_version: not UTF-8".to_string())?
            }
            None => "2023-06-01".into(),
        };
        self.thinking_budget = rp::uint(rp::get(opts, "thinking_budget")).unwrap_or(0);
        self.max_tokens_default = rp::uint(rp::get(opts, "max_tokens_default")).unwrap_or(1024);
        if self.thinking_budget > 0 && self.thinking_budget < 1024 {
            return Err(format!("thinking_budget {}: Anthropic requires at least 1024", self.thinking_budget));
        }
        self.extra.clear();
        if !rp::is_null(rp::get(c, "extra_body")) {
            let e = rp::get(c, "extra_body").unwrap();
            if rp::trim(e).first() != Some(&b'{') {
                return Err("extra_body: want a JSON object".into());
            }
            self.extra.extend_from_slice(e);
        }
        Ok(())
    }

    fn build(&mut self, r: &rp::BuildIn, w: &mut rp::Writer) -> Result<(), String> {
        w.path("/v1/messages");
        w.header("Content-Type", "application/json");
        w.header("anthropic-version", &self.version);
        if !self.api_key.is_empty() {
            w.header("x-api-key", &self.api_key);
        }
        if r.stream() {
            w.header("Accept", "text/event-stream");
        }
        w.str("{\"model\":");
        w.quoted(&self.model);
        let mut max = if r.max_tokens > 0 { r.max_tokens } else { self.max_tokens_default };
        if self.thinking_budget > 0 && max <= self.thinking_budget {
            // max_tokens must exceed the thinking budget.
            max = self.thinking_budget + max;
        }
        w.str(",\"max_tokens\":");
        w.uint(max as u64);
        if let Some(m) = rp::get(r.raw, "messages").filter(|m| !rp::is_null(Some(m))) {
            w.str(",\"messages\":");
            w.raw(m);
        } else if let Some(t) = rp::get(r.raw, "text_input").filter(|t| rp::is_string(t)) {
            w.str(",\"messages\":[{\"role\":\"user\",\"content\":");
            w.raw(t);
            w.str("}]");
        } else {
            w.str(",\"messages\":[{\"role\":\"user\",\"content\":\"");
            w.prompt(rp::HOLE_TEXT);
            w.str("\"}]");
        }
        if self.thinking_budget > 0 {
            w.str(",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":");
            w.uint(self.thinking_budget as u64);
            w.str("}");
        }
        w.str(if r.stream() { ",\"stream\":true" } else { ",\"stream\":false" });
        let extra = self.extra.clone();
        w.members(&extra);
        if let Some(x) = rp::get(r.raw, "extra") {
            w.members(x);
        }
        w.str("}");
        Ok(())
    }

    fn open(&mut self, ctx: u32, flags: u32) {
        self.streams.insert(ctx, Stream { flags, sum: rp::Summary { choices: 1, ..Default::default() } });
    }

    fn parse(&mut self, ctx: u32, ev: &rp::Event, out: &mut rp::Records) -> Result<(), String> {
        let st = self.streams.get_mut(&ctx).ok_or("context not open")?;
        let capture = st.flags & rp::OPEN_CAPTURE != 0;
        if ev.flags & rp::EV_COMMENT != 0 {
            out.add(rp::Record::new(rp::META));
            return Ok(());
        }
        let d = rp::trim(ev.data);
        if d.is_empty() || ev.flags & rp::EV_DONE != 0 {
            return Ok(());
        }
        // One pass over the event's members (the hot path: one event per
        // delta); only an event that is not a well-formed object is looked
        // at again.
        let (mut t, mut delta, mut index): (&[u8], &[u8], Option<&[u8]>) = (b"", b"{}", None);
        let object = rp::members(d, |k, v| match k {
            b"\"type\"" => t = v,
            b"\"delta\"" => delta = v,
            b"\"index\"" => index = Some(v),
            _ => {}
        });
        if !object && rp::get(d, "type").is_none() {
            if ev.flags & rp::EV_NON_OK != 0 {
                st.sum.valid |= rp::VALID_ERROR;
                st.sum.error_code = 500;
                return Ok(());
            }
            return Err(format!("event {}: not a JSON object", ev.index));
        }
        let text = &mut self.text;
        if t == b"\"content_block_delta\"" {
            let (mut dt, mut val): (&[u8], Option<&[u8]>) = (b"", None);
            rp::members(delta, |k, v| match k {
                b"\"type\"" => dt = v,
                b"\"text\"" | b"\"thinking\"" | b"\"partial_json\"" => val = Some(v),
                _ => {}
            });
            let kind = match dt {
                b"\"text_delta\"" => rp::CONTENT,
                b"\"thinking_delta\"" => rp::REASONING,
                b"\"input_json_delta\"" => rp::TOOL_CALL,
                _ => {
                    // signature_delta and future delta types carry no output text.
                    out.add(rp::Record::new(rp::META));
                    return Ok(());
                }
            };
            text.clear();
            // Decode only when capturing; otherwise measure.
            let n = match val {
                Some(v) if capture && kind != rp::TOOL_CALL => rp::unescape(v, text),
                Some(v) => rp::str_len(v),
                None => 0,
            };
            let mut r = rp::Record::new(kind);
            r.text_bytes = n as u32;
            if kind == rp::TOOL_CALL {
                r.aux1 = rp::uint(index).unwrap_or(0);
                out.add(r);
            } else if n > 0 {
                out.add_text(r, text, capture);
            } else {
                out.add(rp::Record::new(rp::META));
            }
        } else if rp::str_eq(t, "content_block_start") {
            let block = rp::get(d, "content_block").unwrap_or(b"{}");
            if rp::str_eq(rp::get(block, "type").unwrap_or(b""), "tool_use") {
                let mut r = rp::Record::new(rp::TOOL_CALL);
                r.aux1 = rp::uint(rp::get(d, "index")).unwrap_or(0);
                r.text_bytes = rp::get(block, "name").map(|v| {
                    text.clear();
                    rp::unescape(v, text) as u32
                }).unwrap_or(0);
                out.add(r);
            } else {
                out.add(rp::Record::new(rp::META));
            }
        } else if rp::str_eq(t, "message_start") {
            let msg = rp::get(d, "message").unwrap_or(b"{}");
            if let Some(u) = rp::get(msg, "usage") {
                usage(st, u, out);
            }
        } else if rp::str_eq(t, "message_delta") {
            finish(st, rp::get_path(d, &["delta", "stop_reason"]), out);
            if let Some(u) = rp::get(d, "usage") {
                usage(st, u, out);
            }
        } else if rp::str_eq(t, "ping") {
            out.add(rp::Record::new(rp::META));
        } else if rp::str_eq(t, "error") {
            set_error(st, rp::get(d, "error").unwrap_or(b"{}"), out);
        } else if rp::str_eq(t, "message") {
            // A whole non-streaming response.
            rp::each(rp::get(d, "content").unwrap_or(b"[]"), |block| {
                let bt = rp::get(block, "type").unwrap_or(b"");
                let (kind, field) = if rp::str_eq(bt, "text") {
                    (rp::CONTENT, "text")
                } else if rp::str_eq(bt, "thinking") {
                    (rp::REASONING, "thinking")
                } else if rp::str_eq(bt, "tool_use") {
                    (rp::TOOL_CALL, "name")
                } else {
                    return;
                };
                text.clear();
                let n = rp::get(block, field).map(|v| rp::unescape(v, text)).unwrap_or(0);
                let mut r = rp::Record::new(kind);
                r.text_bytes = n as u32;
                if kind == rp::TOOL_CALL {
                    out.add(r);
                } else {
                    out.add_text(r, text, capture);
                }
            });
            finish(st, rp::get(d, "stop_reason"), out);
            if let Some(u) = rp::get(d, "usage") {
                usage(st, u, out);
            }
        }
        // content_block_stop, message_stop and unknown types: no record (ignore).
        Ok(())
    }

    fn close(&mut self, ctx: u32, s: &mut rp::Summary) -> Result<(), String> {
        let st = self.streams.remove(&ctx).ok_or("context not open")?;
        *s = st.sum;
        Ok(())
    }
}

rp::export_adapter!(Anthropic);
