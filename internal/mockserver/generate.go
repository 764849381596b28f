// Hot path: the token loop of a streamed SGLang /generate or TGI
// /generate_stream answer; its allocation budget is
// TestStreamAllocsGenerate.

package mockserver

import (
	"context"
	"net/http"
)

// The native generate APIs (docs/format/mock-server.md):
//
// SGLang /generate streams one `data: {...}` per token with the text and
// output_ids so far (cumulative, the server's default) and meta_info
// (prompt_tokens, completion_tokens, cached_tokens, finish_reason: null,
// then {"type": "length"|"stop"}), then `data: [DONE]`.
//
// TGI /generate_stream streams one `data:{...}` (no space) per token with
// its token object; the last one also carries generated_text and details
// (finish_reason, generated_tokens, input_length). No [DONE].

// streamGenerate writes a streamed SGLang or TGI answer (one choice) and
// returns its finish reason ("" when it did not finish). Faults strike
// after half the tokens, as in stream.
func (s *Server) streamGenerate(ctx context.Context, st *reqState, run *runInfo) string {
	sk := &st.hs
	s.setHeaders(st.hs.w.Header(), true)
	lg := &st.log
	lg.Status = http.StatusOK
	rd := &st.rd
	total := st.lens[0]
	finish := st.finish[0]
	faultAt := st.faults.strikeAt(total)
	off := run.first
	decodeStart := off
	for k := range total {
		if !s.nextToken(ctx, st, sk, run, k, &off) {
			return ""
		}
		last := k == total-1
		if rd.gen == apiSGLang {
			f := ""
			if last {
				f = finish
			}
			st.buf = append(st.buf[:0], "data: "...)
			st.buf = rd.sglangChunk(st.buf, k, run.prompt, run.cached, f)
			st.buf = append(st.buf, "\n\n"...)
		} else {
			st.buf = rd.tgiToken(st.buf[:0], k, last, run.prompt, finish)
		}
		if !s.emit(st, sk, EventContent, 0) {
			return ""
		}
		s.tokenWritten(st, k, off)
		if k == faultAt && !s.midStreamFault(ctx, st, sk, run, &off, last, 0) {
			return ""
		}
	}
	s.met.decodeNS.Add(int64(off - decodeStart))
	if rd.gen == apiSGLang {
		st.buf = appendDone(st.buf[:0])
		if !s.emit(st, sk, EventDone, 0) {
			return ""
		}
	}
	if !s.flushPending(st, sk) {
		return ""
	}
	lg.FinishReason = finish
	return finish
}
