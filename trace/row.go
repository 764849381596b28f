package trace

import (
	"encoding/json"
	"time"
)

// Row is one request of a trace, normalised from any format.
//
// Times: Offset is the arrival relative to the trace's first kept row, in
// the trace's own time (before any speed-up). A row of a multi-turn session
// may instead (or also) carry Delay: the think time after the previous turn
// of the same session completed. HasOffset tells whether Offset is known.
//
// Ownership: HashIDs, Raw and WaitFor returned by Reader.Next point into buffers
// the Reader reuses on the next call to Next; callers that keep a Row across
// calls must Clone it (ReadAll does).
type Row struct {
	// Index is the 0-based position of the row among the data rows of the
	// source (header and blank lines excluded), for joins back to the file.
	Index int64
	// Line is the 1-based source line the row came from (for messages).
	Line int64

	Offset    time.Duration
	HasOffset bool
	Delay     time.Duration
	HasDelay  bool

	// InputTokens and OutputTokens are the trace's lengths in tokens.
	InputTokens  int
	OutputTokens int

	// SessionID groups the turns of one conversation; "" for independent
	// requests. Turn is the 0-based turn number within the session.
	// ParentID is the parent request's id where the format has one
	// (Bailian parent_chat_id), else -1. RequestID is the format's own
	// request id (Bailian chat_id), else -1.
	SessionID string
	Turn      int
	ParentID  int64
	RequestID int64

	// BlockSize is the number of tokens per hash id (512 Mooncake, 16
	// Bailian); 0 when the format has no prefix identity.
	BlockSize int
	// HashIDs are chained prefix-block ids, opaque 64-bit values (never
	// assume they are dense). nil when unknown.
	HashIDs []uint64
	// Cumulative is true when InputTokens already contains the session's
	// history (Bailian), so a replay must not append history again.
	Cumulative bool

	// WaitFor lists the RequestIDs of rows that must complete before this
	// row is sent (an AND-join); nil for a row that waits for nothing
	// (design 0008). Every id names a row on an earlier line. After the
	// last of them completed the row waits Delay (think time) and
	// ToolWait (tool time), then is sent.
	WaitFor  []int64
	ToolWait time.Duration

	// Kind is informational and filterable: Bailian type, BurstGPT model.
	Kind string
	// Failed marks a row the source says failed (BurstGPT zero output).
	Failed bool
	// Images is the number of images the request carried (Azure 2025
	// NumImages); 0 when the format does not say.
	Images int
	// Media counts the images, audio and video the row's own content
	// carries (Raw's "media" parts); zero when it carries none.
	Media MediaStats

	// Endpoint is the request kind a recording saw (EndpointChat or
	// EndpointCompletions, Mooncake endpoint); "" when the trace does not
	// say. TemplateTokens is how many of InputTokens the server added to
	// the prompt's text (a chat template, a BOS token; Mooncake
	// template_tokens): a replay synthesizes InputTokens − TemplateTokens
	// and the server adds them again.
	Endpoint       string
	TemplateTokens int

	// Raw carries the row's own request content verbatim: text_input,
	// messages, tools, payload and extra, as a JSON object with those keys
	// as the source spelled them, and "media": the row's images, audio and
	// videos as an array of OpenAI chat content parts (image_url with a
	// data URL or the row's http URL, input_audio, video_url), resolved
	// and checked when the row was read. nil when the row has none.
	Raw json.RawMessage
}

// Clone returns a deep copy of r that shares no memory with it.
func (r *Row) Clone() Row {
	c := *r
	if r.HashIDs != nil {
		c.HashIDs = append([]uint64(nil), r.HashIDs...)
	}
	if r.Raw != nil {
		c.Raw = append(json.RawMessage(nil), r.Raw...)
	}
	if r.WaitFor != nil {
		c.WaitFor = append([]int64(nil), r.WaitFor...)
	}
	return c
}
