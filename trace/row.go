package trace

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/trace/media"
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

// MediaStats counts the images, audio clips and videos one request
// carries, as the trace's rows give them (design 0022). Bytes are the
// media's own bytes (before base64); an http(s) URL passed through counts
// as an item of 0 bytes and unknown size.
type MediaStats struct {
	Images, ImageBytes int
	// ImagePixels is the sum of width × height over the images;
	// ImageSizes lists each image's "WxH" (comma-separated, "?" for a
	// URL).
	ImagePixels int64
	ImageSizes  string
	Audios      int
	AudioBytes  int
	// AudioDuration is the sum of the clips' lengths.
	AudioDuration time.Duration
	Videos        int
	VideoBytes    int
	// VideoDuration and VideoFrames sum the videos' lengths and frames
	// (from their containers; 0 for a URL).
	VideoDuration time.Duration
	VideoFrames   int64
}

// IsZero reports whether s counts no media.
func (s *MediaStats) IsZero() bool { return s.Images == 0 && s.Audios == 0 && s.Videos == 0 }

// Add counts it.
func (s *MediaStats) Add(it *media.Item) {
	switch it.Kind {
	case media.Image:
		s.Images++
		s.ImageBytes += it.Bytes()
		s.ImagePixels += int64(it.Width) * int64(it.Height)
		if s.ImageSizes != "" {
			s.ImageSizes += ","
		}
		if it.Width > 0 {
			s.ImageSizes += strconv.Itoa(it.Width) + "x" + strconv.Itoa(it.Height)
		} else {
			s.ImageSizes += "?"
		}
	case media.Audio:
		s.Audios++
		s.AudioBytes += it.Bytes()
		s.AudioDuration += it.Duration
	case media.Video:
		s.Videos++
		s.VideoBytes += it.Bytes()
		s.VideoDuration += it.Duration
		s.VideoFrames += int64(it.Frames)
	}
}

func (s *MediaStats) Merge(o *MediaStats) {
	s.Images += o.Images
	s.ImageBytes += o.ImageBytes
	s.ImagePixels += o.ImagePixels
	if o.ImageSizes != "" {
		if s.ImageSizes != "" {
			s.ImageSizes += ","
		}
		s.ImageSizes += o.ImageSizes
	}
	s.Audios += o.Audios
	s.AudioBytes += o.AudioBytes
	s.AudioDuration += o.AudioDuration
	s.Videos += o.Videos
	s.VideoBytes += o.VideoBytes
	s.VideoDuration += o.VideoDuration
	s.VideoFrames += o.VideoFrames
}

// resetRow clears row for the next row of line. HashIDs and Raw, when a
// row has them, point into the Reader's reused buffers.
func resetRow(row *Row, line int64) {
	*row = Row{Line: line, ParentID: -1, RequestID: -1}
}
