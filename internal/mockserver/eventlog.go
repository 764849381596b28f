package mockserver

import (
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

// EventLogVersion is the version of the JSONL oracle log format
// (docs/format/mock-server.md). It is the "v" field of every line.
const EventLogVersion = 1

// EventKind is the kind of one response write recorded by the oracle.
type EventKind uint8

// The event kinds. Every streamed SSE event is one event; a non-streamed or
// error response is one EventBody.
const (
	EventHeaders   EventKind = iota // headers flushed alone (slow-headers)
	EventRole                       // the role-only first delta of a chat stream
	EventContent                    // one output token as content / text
	EventReasoning                  // one output token as reasoning_content
	EventFinish                     // the chunk carrying finish_reason
	EventUsage                      // the separate usage chunk (choices:[])
	EventDone                       // data: [DONE]
	EventError                      // an error event inside a 200 stream
	EventMalformed                  // a deliberately unparseable SSE line
	EventBody                       // a whole non-streamed response (or error response)
	EventReset                      // the connection was reset (RST)
	EventEnvelope                   // a Responses API event carrying no token (created, item added, done)
	EventPartial                    // a partial image of a streamed image generation
	EventMedia                      // a final image, a chunk of speech audio, a video's content
)

var eventKindNames = [...]string{"headers", "role", "content", "reasoning", "finish", "usage", "done",
	"error", "malformed", "body", "reset", "envelope", "partial", "media"}

// String returns the kind's name in the JSONL log: "content", "done", ….
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is one response write: its kind, the choice it belongs to, the
// times the write began and the write and its flush to the socket returned
// (Unix ns), and the time the latency model scheduled it for (Unix ns; 0 =
// as soon as possible, e.g. error bodies). The bytes left the server
// within [StartNS, TimeNS]; a server descheduled around its write widens
// that interval, never moves it. TimeNS − DueNS is the server's own
// lateness: timer wake-up and scheduling delay, never negative.
type Event struct {
	Kind    EventKind
	Choice  int32
	StartNS int64
	TimeNS  int64
	DueNS   int64
}

// RequestLog is the oracle's record of one request. Times are Unix ns on
// the server's clock (wall clock at start + monotonic elapsed); 0 = did not
// happen. Token counts are the server's truth, as reported in usage.
type RequestLog struct {
	Seq             uint64 // arrival order, from 0
	ClientRequestID string // the X-Request-Id header, echoed
	RemoteAddr      string // the client's address (ip:port): one per connection
	ResponseID      string // the id field of the response body
	Endpoint        string // request path
	Stream          bool
	Status          int    // HTTP status; 0 when reset before headers
	Fault           string // injected faults, as in X-Reprise-Fault; "" = none
	Error           string // the error message sent, if any
	FinishReason    string // of choice 0
	ReceivedNS      int64  // request body fully read
	AdmittedNS      int64  // left the queue (max-num-seqs)
	EndNS           int64  // last write returned, or the failure
	PromptTokens    int
	CachedTokens    int
	OutputTokens    int // all choices, including reasoning tokens
	ReasoningTokens int
	// Media is the truth of a generation endpoint's request (images,
	// video, transcription, speech); nil for the others.
	Media *MediaLog
	// AccuracyItem is the id of the graded item the prompt asked ("" for
	// none); AccuracyRight whether it was answered right, InFlight the
	// requests in flight that decided it (this one included).
	AccuracyItem  string
	AccuracyRight bool
	InFlight      int
	// InputMedia are the images, audio clips and videos the request
	// carried, in order (design 0022); nil for none. The JSONL line has
	// "input_media" only when there are some.
	InputMedia []InputMediaLog
	// InputTokens are the tokens of each input of an embeddings request,
	// or of each passage of a rankings request, in order, and QueryTokens
	// the rankings query's (the builtin tokenizer's counts); nil and 0 for
	// the other endpoints. The JSONL line has "input_tokens" (and
	// "query_tokens") only when there are some.
	InputTokens []int
	QueryTokens int
	Events      []Event
}

// FirstTokenNS returns the time of the first content or reasoning event,
// or of the body of a non-streamed response; 0 if none.
func (r *RequestLog) FirstTokenNS() int64 {
	for _, e := range r.Events {
		if e.Kind == EventContent || e.Kind == EventReasoning || (e.Kind == EventBody && r.Status == 200) {
			return e.TimeNS
		}
	}
	return 0
}

// TokenTimes appends the times of the content and reasoning events of
// choice c to dst.
func (r *RequestLog) TokenTimes(dst []int64, c int32) []int64 {
	for _, e := range r.Events {
		if (e.Kind == EventContent || e.Kind == EventReasoning) && e.Choice == c {
			dst = append(dst, e.TimeNS)
		}
	}
	return dst
}

// oracle collects request logs in memory and/or as JSONL. Safe for
// concurrent use. Each request's line is written with one Write when the
// request is done, so a reader following the file (tail -f) sees it then.
type oracle struct {
	mu   sync.Mutex
	keep bool
	logs []RequestLog
	w    io.Writer
	line []byte
	err  error // the first write error; the JSONL log stops there
}

func newOracle(keep bool, w io.Writer) *oracle {
	return &oracle{keep: keep, w: w}
}

func (o *oracle) enabled() bool { return o.keep || o.w != nil }

// add records r. It returns the JSONL log's write error the first time
// one happens (later lines are dropped), else nil.
func (o *oracle) add(r *RequestLog) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var err error
	if o.w != nil && o.err == nil {
		o.line = appendLogLine(o.line[:0], r)
		_, o.err = o.w.Write(o.line)
		err = o.err
	}
	if o.keep {
		o.logs = append(o.logs, *r)
	}
	return err
}

// flush returns the JSONL log's write error, if any. Lines are written as
// they come; there is nothing to flush.
func (o *oracle) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

func (o *oracle) snapshot() []RequestLog {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]RequestLog(nil), o.logs...)
}

func (o *oracle) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.logs = nil
}

// appendLogLine encodes r as one JSONL line (docs/format/mock-server.md).
func appendLogLine(b []byte, r *RequestLog) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, EventLogVersion, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, `,"request_id":`...)
	b = jsonx.AppendString(b, r.ClientRequestID)
	if r.RemoteAddr != "" {
		b = append(b, `,"remote_addr":`...)
		b = jsonx.AppendString(b, r.RemoteAddr)
	}
	b = append(b, `,"response_id":`...)
	b = jsonx.AppendString(b, r.ResponseID)
	b = append(b, `,"endpoint":`...)
	b = jsonx.AppendString(b, r.Endpoint)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"fault":`...)
	b = jsonx.AppendString(b, r.Fault)
	b = append(b, `,"error":`...)
	b = jsonx.AppendString(b, r.Error)
	b = append(b, `,"finish_reason":`...)
	b = jsonx.AppendString(b, r.FinishReason)
	for _, f := range [...]struct {
		k string
		v int64
	}{{"received_ns", r.ReceivedNS}, {"admitted_ns", r.AdmittedNS}, {"end_ns", r.EndNS},
		{"prompt_tokens", int64(r.PromptTokens)}, {"cached_tokens", int64(r.CachedTokens)},
		{"output_tokens", int64(r.OutputTokens)}, {"reasoning_tokens", int64(r.ReasoningTokens)}} {
		b = append(b, `,"`...)
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, f.v, 10)
	}
	if r.AccuracyItem != "" {
		b = append(b, `,"accuracy_item":`...)
		b = jsonx.AppendString(b, r.AccuracyItem)
		b = append(b, `,"accuracy_right":`...)
		b = strconv.AppendBool(b, r.AccuracyRight)
		b = append(b, `,"in_flight":`...)
		b = strconv.AppendInt(b, int64(r.InFlight), 10)
	}
	if len(r.InputMedia) > 0 {
		b = append(b, `,"input_media":[`...)
		for i, m := range r.InputMedia {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"kind":`...)
			b = jsonx.AppendString(b, m.Kind)
			b = append(b, `,"format":`...)
			b = jsonx.AppendString(b, m.Format)
			b = append(b, `,"width":`...)
			b = strconv.AppendInt(b, int64(m.Width), 10)
			b = append(b, `,"height":`...)
			b = strconv.AppendInt(b, int64(m.Height), 10)
			b = append(b, `,"duration_ns":`...)
			b = strconv.AppendInt(b, int64(m.Duration), 10)
			b = append(b, `,"bytes":`...)
			b = strconv.AppendInt(b, int64(m.Bytes), 10)
			if a := m.AudioTrack; a != nil {
				b = append(b, `,"audio_track":{"codec":`...)
				b = jsonx.AppendString(b, a.Codec)
				b = append(b, `,"sample_rate":`...)
				b = strconv.AppendInt(b, int64(a.SampleRate), 10)
				b = append(b, `,"channels":`...)
				b = strconv.AppendInt(b, int64(a.Channels), 10)
				b = append(b, `,"duration_ns":`...)
				b = strconv.AppendInt(b, int64(a.Duration), 10)
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendInputTokens(b, r)
	b = append(b, `,"events":[`...)
	for i, e := range r.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"kind":"`...)
		b = append(b, e.Kind.String()...)
		b = append(b, `","choice":`...)
		b = strconv.AppendInt(b, int64(e.Choice), 10)
		b = append(b, `,"start_ns":`...)
		b = strconv.AppendInt(b, e.StartNS, 10)
		b = append(b, `,"t_ns":`...)
		b = strconv.AppendInt(b, e.TimeNS, 10)
		b = append(b, `,"due_ns":`...)
		b = strconv.AppendInt(b, e.DueNS, 10)
		b = append(b, '}')
	}
	b = append(b, ']')
	if m := r.Media; m != nil {
		b = append(b, `,"media":{"job_id":`...)
		b = jsonx.AppendString(b, m.JobID)
		b = append(b, `,"status":`...)
		b = jsonx.AppendString(b, m.Status)
		for _, f := range [...]struct {
			k string
			v int64
		}{{"items", int64(m.Items)}, {"partials", int64(m.Partials)}, {"bytes", m.Bytes}, {"audio_ns", m.AudioNS},
			{"width", int64(m.Width)}, {"height", int64(m.Height)}, {"frames", int64(m.Frames)},
			{"queued_ns", m.QueuedNS}, {"started_ns", m.StartedNS}, {"done_ns", m.DoneNS}} {
			b = append(b, `,"`...)
			b = append(b, f.k...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, f.v, 10)
		}
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

// appendInputTokens appends the "input_tokens" and "query_tokens" keys of
// an embeddings or rankings request's line (nothing for the others).
func appendInputTokens(b []byte, r *RequestLog) []byte {
	if len(r.InputTokens) > 0 {
		b = append(b, `,"input_tokens":[`...)
		for i, n := range r.InputTokens {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	}
	if r.QueryTokens != 0 {
		b = append(b, `,"query_tokens":`...)
		b = strconv.AppendInt(b, int64(r.QueryTokens), 10)
	}
	return b
}

// MediaLog is the oracle's truth of one request to a generation endpoint.
// Times are Unix ns on the server's clock; 0 = did not happen.
type MediaLog struct {
	Items    int   // final images; 1 per speech output or video content
	Partials int   // partial images streamed
	Bytes    int64 // decoded bytes of the final media (PNG, audio data, video content)
	AudioNS  int64 // audio made (speech) or received (transcription)
	Width    int   // image or video width
	Height   int
	Frames   int    // video frames
	JobID    string // video job
	Status   string // the job status this response reported
	// QueuedNS, StartedNS and DoneNS are the job's submit, start and end
	// of generation.
	QueuedNS, StartedNS, DoneNS int64
}

// InputMediaLog is one image, audio clip or video a request carried, as the
// mock server decoded it (design 0022): Kind "image", "audio" or
// "video"; Format from its bytes ("png", "jpeg", "wav", "mp3", …; "url"
// for a remote URL, not fetched); Width and Height of an image; Duration
// of an audio clip; Bytes of the media (before base64); AudioTrack, a
// video's audio track as its container describes it (nil: none).
type InputMediaLog struct {
	Kind          string
	Format        string
	Width, Height int
	Duration      time.Duration
	Bytes         int
	AudioTrack    *media.AudioTrack
}
