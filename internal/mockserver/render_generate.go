// Hot path: the events and bodies of the native generate APIs (SGLang /generate,
// TGI /generate and /generate_stream), which generate.go streams; allocation budget:
// TestStreamAllocsGenerate.

package mockserver

import "strconv"

// fillerID is the output token id the mock reports for token k.
func fillerID(k int) int { return 1000 + k&63 }

// sglangChunk appends SGLang's chunk after k+1 tokens (cumulative).
func (r *renderer) sglangChunk(b []byte, k int, prompt, cached int, finish string) []byte {
	b = append(b, `{"text":"`...)
	b = appendFiller(b, 0, 0, k+1)
	b = append(b, `","output_ids":[`...)
	for i := 0; i <= k; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(fillerID(i)), 10)
	}
	b = append(b, `],"meta_info":{"id":"`...)
	b = append(b, r.id...)
	b = append(b, `","finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"type":"`...)
		b = append(b, finish...)
		if finish == "length" {
			b = append(b, `","length":`...)
			b = strconv.AppendInt(b, int64(k+1), 10)
			b = append(b, '}')
		} else {
			b = append(b, `","matched":2}`...)
		}
	}
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(k+1), 10)
	b = append(b, `,"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	return append(b, `,"weight_version":"default"}}`...)
}

// tgiFinish is TGI's spelling of a finish reason.
func tgiFinish(f string) string {
	if f == "stop" {
		return "eos_token"
	}
	return f
}

// tgiToken appends TGI's event for token k; the last carries
// generated_text and details.
func (r *renderer) tgiToken(b []byte, k int, last bool, prompt int, finish string) []byte {
	b = append(b, `data:{"index":`...)
	b = strconv.AppendInt(b, int64(k+1), 10)
	b = append(b, `,"token":{"id":`...)
	b = strconv.AppendInt(b, int64(fillerID(k)), 10)
	b = append(b, `,"text":"`...)
	b = append(b, filler(k, 0)...)
	b = append(b, `","logprob":-0.25,"special":false},"generated_text":`...)
	if !last {
		return append(b, "null,\"details\":null}\n\n"...)
	}
	b = append(b, '"')
	b = appendFiller(b, 0, 0, k+1)
	b = append(b, `","details":{"finish_reason":"`...)
	b = append(b, tgiFinish(finish)...)
	b = append(b, `","generated_tokens":`...)
	b = strconv.AppendInt(b, int64(k+1), 10)
	b = append(b, `,"seed":null,"input_length":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	return append(b, "}}\n\n"...)
}

// generateBody appends a whole SGLang or TGI /generate answer.
func (r *renderer) generateBody(b []byte, ch choiceText) []byte {
	n := ch.reasoning + ch.content
	if r.gen == apiSGLang {
		return r.sglangChunk(b, n-1, r.prompt, r.cached, ch.finish)
	}
	b = append(b, `{"generated_text":"`...)
	b = appendFiller(b, 0, 0, n)
	b = append(b, `","details":{"finish_reason":"`...)
	b = append(b, tgiFinish(ch.finish)...)
	b = append(b, `","generated_tokens":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, `,"seed":null,"prefill":[],"tokens":[]}}`...)
}
