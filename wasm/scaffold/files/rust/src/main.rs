//! my-adapter: a reprise endpoint adapter (ABI v1) for a JSON API that
//! streams {"text": "..."} events: POST /generate with {"model", "prompt",
//! "max_tokens", "stream"}. Change build and parse to your server's shapes.
//!
//! ```sh
//! sh rustc-wasm.sh my-adapter.wasm src/main.rs   # wasm32-wasip1, or wasm32-wasi on rustc < 1.78
//! ```
#![no_main]

#[path = "../../reprise_adapter.rs"]
mod rp;

use std::collections::HashMap;

#[derive(Default)]
struct MyAdapter {
    model: Vec<u8>,
    streams: HashMap<u32, (u32, rp::Summary)>,
    text: Vec<u8>,
}

impl rp::Adapter for MyAdapter {
    fn describe(&self) -> &'static str {
        r#"{"name":"my-adapter","version":"0.1.0","path":"/generate"}"#
    }

    fn configure(&mut self, c: &[u8]) -> Result<(), String> {
        self.model.clear();
        if let Some(m) = rp::get(c, "model") {
            rp::unescape(m, &mut self.model);
        }
        Ok(())
    }

    /// The prompt goes into a hole the host fills.
    fn build(&mut self, r: &rp::BuildIn, w: &mut rp::Writer) -> Result<(), String> {
        w.path("/generate");
        w.header("Content-Type", "application/json");
        w.str("{\"model\":");
        w.quoted(&self.model);
        w.str(",\"prompt\":\"");
        w.prompt(rp::HOLE_TEXT);
        w.str("\"");
        if r.max_tokens > 0 {
            w.str(",\"max_tokens\":");
            w.uint(r.max_tokens as u64);
        }
        w.str(if r.stream() { ",\"stream\":true}" } else { ",\"stream\":false}" });
        Ok(())
    }

    fn open(&mut self, ctx: u32, flags: u32) {
        self.streams.insert(ctx, (flags, rp::Summary { choices: 1, ..Default::default() }));
    }

    fn parse(&mut self, ctx: u32, ev: &rp::Event, out: &mut rp::Records) -> Result<(), String> {
        let (flags, s) = self.streams.get_mut(&ctx).ok_or("context not open")?;
        if ev.flags & rp::EV_COMMENT != 0 {
            out.add(rp::Record::new(rp::META));
            return Ok(());
        }
        if ev.flags & rp::EV_DONE != 0 {
            return Ok(());
        }
        if !rp::is_null(rp::get(ev.data, "error")) {
            s.valid |= rp::VALID_ERROR;
            s.error_code = 500;
            s.message.clear();
            rp::unescape(rp::get(ev.data, "error").unwrap(), &mut s.message);
            let mut r = rp::Record::new(rp::ERROR);
            r.aux0 = 500;
            out.add(r);
            return Ok(());
        }
        if let Some(t) = rp::get(ev.data, "text").filter(|t| rp::is_string(t) && t.len() > 2) {
            self.text.clear();
            rp::unescape(t, &mut self.text);
            let mut r = rp::Record::new(rp::CONTENT);
            r.text_bytes = self.text.len() as u32;
            out.add_text(r, &self.text, *flags & rp::OPEN_CAPTURE != 0);
        }
        if let Some(f) = rp::get(ev.data, "finish_reason").filter(|f| rp::is_string(f)) {
            let mut r = rp::Record::new(rp::FINISH);
            r.aux0 = rp::finish_code(f);
            s.finish = r.aux0;
            s.valid |= rp::VALID_FINISH;
            out.add(r);
        }
        if let Some(u) = rp::get(ev.data, "usage").filter(|u| !rp::is_null(Some(u))) {
            if let Some(n) = rp::uint(rp::get(u, "prompt_tokens")) {
                s.prompt_tokens = n;
                s.valid |= rp::VALID_PROMPT;
            }
            if let Some(n) = rp::uint(rp::get(u, "completion_tokens")) {
                s.completion_tokens = n;
                s.valid |= rp::VALID_COMPLETION;
            }
            out.add(rp::Record::new(rp::USAGE));
        }
        Ok(())
    }

    fn close(&mut self, ctx: u32, s: &mut rp::Summary) -> Result<(), String> {
        *s = self.streams.remove(&ctx).ok_or("context not open")?.1;
        Ok(())
    }
}

rp::export_adapter!(MyAdapter);
