// Hot path: the events and bodies of the Responses API, which responses.go streams;
// allocation budget: TestStreamAllocs' responses case.

package mockserver

import (
	"strconv"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// appendResponsesUsage appends a Responses usage object.
func appendResponsesUsage(u []byte, prompt, cached, completion, reasoning int) []byte {
	u = append(u, `{"input_tokens":`...)
	u = strconv.AppendInt(u, int64(prompt), 10)
	u = append(u, `,"input_tokens_details":{"cached_tokens":`...)
	u = strconv.AppendInt(u, int64(cached), 10)
	u = append(u, `},"output_tokens":`...)
	u = strconv.AppendInt(u, int64(completion), 10)
	u = append(u, `,"output_tokens_details":{"reasoning_tokens":`...)
	u = strconv.AppendInt(u, int64(reasoning), 10)
	u = append(u, `},"total_tokens":`...)
	u = strconv.AppendInt(u, int64(prompt+completion), 10)
	return append(u, '}')
}

// respEvent appends an event's header up to and including its
// sequence_number: `event: T\ndata: {"type":"T","sequence_number":n`.
func respEvent(b []byte, typ string, seq int) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	return strconv.AppendInt(b, int64(seq), 10)
}

// itemID appends a reasoning ("rs_") or message ("msg_") item id.
func (r *renderer) itemID(b []byte, reasoning bool) []byte {
	if reasoning {
		b = append(b, "rs_"...)
	} else {
		b = append(b, "msg_"...)
	}
	return append(b, r.id[len("resp_"):]...)
}

// respItem appends an output item: reasoning (tokens [0, r)) or the
// message (tokens [from, to)); done with its text, else empty.
func (r *renderer) respItem(b []byte, reasoning bool, from, to int, done bool) []byte {
	b = append(b, `{"id":"`...)
	b = r.itemID(b, reasoning)
	if reasoning {
		b = append(b, `","type":"reasoning","summary":[],"content":[`...)
		if done {
			b = append(b, `{"type":"reasoning_text","text":"`...)
			b = appendFiller(b, 0, from, to)
			b = append(b, `"}`...)
		}
		return append(b, "]}"...)
	}
	status := `in_progress`
	if done {
		status = `completed`
	}
	b = append(b, `","type":"message","role":"assistant","status":"`...)
	b = append(b, status...)
	b = append(b, `","content":[`...)
	if done {
		b = append(b, `{"type":"output_text","text":"`...)
		b = appendFiller(b, 0, from, to)
		b = append(b, `","annotations":[]}`...)
	}
	return append(b, "]}"...)
}

// respObject appends the response object. final: status and usage as
// they end (length: incomplete), with the output items; else in_progress
// with no output and null usage.
func (r *renderer) respObject(b []byte, model string, created int64, ch choiceText, final bool) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, r.id...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, created, 10)
	switch {
	case !final:
		b = append(b, `,"status":"in_progress","incomplete_details":null`...)
	case ch.finish == "length":
		b = append(b, `,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}`...)
	default:
		b = append(b, `,"status":"completed","incomplete_details":null`...)
	}
	b = append(b, `,"model":"`...)
	b = jsonx.AppendContents(b, model)
	b = append(b, `","output":[`...)
	if final {
		if ch.reasoning > 0 {
			b = r.respItem(b, true, 0, ch.reasoning, true)
			b = append(b, ',')
		}
		b = r.respItem(b, false, ch.reasoning, ch.reasoning+ch.content, true)
	}
	b = append(b, `],"usage":`...)
	if final {
		b = append(b, r.usage...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// responsesBody appends a whole non-streamed Responses answer.
func (r *renderer) responsesBody(b []byte, model string, created int64, ch choiceText) []byte {
	return r.respObject(b, model, created, ch, true)
}

// respDelta appends an output_text or reasoning_text delta of token k.
func (r *renderer) respDelta(b []byte, seq, k int, reasoning bool) []byte {
	if reasoning {
		b = respEvent(b, "response.reasoning_text.delta", seq)
	} else {
		b = respEvent(b, "response.output_text.delta", seq)
	}
	b = append(b, `,"item_id":"`...)
	b = r.itemID(b, reasoning)
	if reasoning {
		b = append(b, `","output_index":0,"content_index":0,"delta":"`...)
	} else {
		b = append(b, `","output_index":`...)
		b = strconv.AppendInt(b, int64(r.msgIndex), 10)
		b = append(b, `,"content_index":0,"delta":"`...)
	}
	b = append(b, filler(k, 0)...)
	if reasoning {
		return append(b, "\"}\n\n"...)
	}
	return append(b, "\",\"logprobs\":[]}\n\n"...)
}
