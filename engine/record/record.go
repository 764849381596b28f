// Package record defines the rows a run produces: one [Request] per request
// and one [Event] per response event. The engine fills them, arrowio writes
// them (records.parquet, events.parquet), and summaries are computed from
// them, live or read back from files. docs/format/records.md is the
// contract for their columns.
//
// Conventions: every time is Unix nanoseconds on one clock (the run's wall
// clock at start plus monotonic elapsed time), 0 meaning "did not happen"
// (null in files). Durations are nanoseconds. Server-reported counts are -1
// when the server did not report them (null in files).
package record

import "math"

// Phase tells warmup requests from measured ones.
type Phase uint8

// The phases.
const (
	PhaseProfile Phase = iota
	PhaseWarmup
)

func (p Phase) String() string {
	if p == PhaseWarmup {
		return "warmup"
	}
	return "profile"
}

// ErrorKind classifies a failed request. The empty kind means success.
type ErrorKind string

// The error kinds. They are a stable contract (docs/format/records.md).
const (
	ErrNone         ErrorKind = ""
	ErrHTTPStatus   ErrorKind = "http_status"   // non-2xx response before any stream
	ErrConnect      ErrorKind = "connect"       // dial, DNS or TLS failure
	ErrReset        ErrorKind = "reset"         // connection reset or EOF before the response ended
	ErrTimeout      ErrorKind = "timeout"       // --timeout elapsed
	ErrStreamError  ErrorKind = "stream_error"  // error event inside a 200 stream
	ErrMalformed    ErrorKind = "malformed"     // unparseable response or SSE framing
	ErrNoContent    ErrorKind = "no_content"    // completed without any content token
	ErrAdapter      ErrorKind = "adapter_error" // adapter trap, timeout or bad output
	ErrCancelled    ErrorKind = "cancelled"     // cancelled by the user, at the end of grace, or as planned (--cancel-rate, CancelAfterNS > 0)
	ErrBuild        ErrorKind = "build"         // the request could not be built
	ErrNotDelivered ErrorKind = "skipped"       // --late skip dropped it; never sent
	ErrTooLarge     ErrorKind = "too_large"     // response over a --max-response-* or --max-event-bytes cap
	ErrJobFailed    ErrorKind = "job_failed"    // an asynchronous job (video) reported it failed
)

// Request is one request's result row. The zero value is a request that
// never ran; fields are filled as the request progresses.
type Request struct {
	RequestID uint64 // run-unique, dense from 0 in dispatch order
	TraceRow  int64  // trace.Row.Index; -1 for synthetic load
	SessionID string
	Turn      int32
	Phase     Phase
	SenderID  int32 // which long-lived sender ran it
	// Target is the index of the target it was sent to (0 with one
	// target: Options.URL is target 0, its further targets follow).
	Target int32

	// Timeline (Unix ns; 0 = did not happen).
	IntendedNS         int64 // when the schedule meant to send it
	DispatchedNS       int64 // when the dispatcher handed it to a sender
	SentNS             int64 // just before the HTTP request was written
	WroteNS            int64 // request fully written
	HeadersNS          int64 // response headers received
	FirstEventNS       int64 // first response event (any kind)
	FirstTokenNS       int64 // first content or reasoning event (TTFT point)
	FirstOutputTokenNS int64 // first non-reasoning content event (TTFO point)
	SecondTokenNS      int64
	LastTokenNS        int64 // last content or reasoning event
	EndNS              int64 // response fully read, or the error

	// Derived latencies (ns; 0 when undefined, e.g. ITL with one token).
	TTFTNS                int64 // FirstToken - Sent
	TTFONS                int64 // FirstOutputToken - Sent
	TTSTNS                int64 // SecondToken - FirstToken
	ITLNS                 float64
	E2ENS                 int64 // LastToken - Sent (non-streaming: End - Sent)
	LatenessNS            int64 // Dispatched - Intended
	LatencyFromIntendedNS int64 // LastToken - Intended (coordinated-omission corrected)
	SessionDelayNS        int64 // part of the wait caused by our own previous turn

	// Token counts by the client tokenizer. OutputTokens and
	// ReasoningTokens count every choice of the response (n > 1 included).
	InputTokens     int32
	OutputTokens    int32 // excluding reasoning
	ReasoningTokens int32
	MaxTokens       int32 // requested output length; 0 when not set
	// TraceInputTokens is the input length the trace row gives (the
	// synthetic load's draw), -1 when unknown. It differs from
	// InputTokens, the prompt actually sent, when a multi-turn session
	// grows its history (the wire prompt carries earlier turns and
	// responses), with --isl-correction, or for rows sent as they are.
	TraceInputTokens int32

	// Token counts reported by the server (-1 = not reported).
	ServerPromptTokens     int32
	ServerCompletionTokens int32
	ServerReasoningTokens  int32
	ServerCachedTokens     int32
	// ExpectedCachedTokens is what the trace's prefix structure predicts
	// the server could reuse (infinite cache, leading-run), -1 = unknown.
	ExpectedCachedTokens int32
	// OutputTokensSource says which count the request's output length
	// (OSL) and ITL use; TokensUnknown in rows of files written before it
	// existed.
	OutputTokensSource TokenSource
	// ServerMinusClientOutputTokens is ServerCompletionTokens minus the
	// client tokenizer's OutputTokens + ReasoningTokens, when the server
	// reported usage and the client counted; NoTokenDiff otherwise.
	ServerMinusClientOutputTokens int32
	// ServerExtras is server-specific JSON the adapter passed on verbatim
	// (llama.cpp's per-request timings object); "" when none.
	ServerExtras string

	// Stream shape.
	Events        int32 // response events parsed
	ContentEvents int32 // events carrying content or reasoning
	Reads         int32 // body reads
	MaxEventsRead int32 // most events completed by one read (coalescing)
	// ReadLagNS is the longest any read of the response waited between
	// the kernel receiving its bytes and reprise reading them (0 when
	// reads are stamped on return: no kernel timestamps). Event times are
	// the kernel's, so this lag is not in them; it says how far behind
	// the client machine was.
	ReadLagNS     int64
	BytesReceived int64
	BytesSent     int64

	// CancelAfterNS is the planned cancellation delay of the request
	// (--cancel-after; 0 = none planned). A request so planned whose
	// response had not ended by then has ErrorKind ErrCancelled.
	CancelAfterNS int64

	// Dependent requests (design 0008). All three count from 1 so that
	// 0, the zero value, means none (a trace without dependencies); the
	// columns task_id, parent_request_id and depth hold them less one.
	// Task is the request's task (the connected part of the dependency
	// graph it belongs to, 1, 2, … in trace order); ReleasedBy is
	// RequestID + 1 of the dependency whose completion released it (the
	// last to complete), 0 for a root; Level is its depth + 1 (1 for a
	// root, else 1 + the deepest level of its dependencies).
	Task       int64
	ReleasedBy uint64
	Level      int32
	// DependsOn lists the RequestIDs of every request this one waited
	// for (its dependencies, in the trace's wait_for order; ReleasedBy − 1
	// is one of them), nil for a root or a trace without dependencies.
	// The slice may be shared with other records: never modify it.
	DependsOn []uint64

	// The images, audio clips and videos the request carried (design
	// 0022; columns input_images … input_video_bytes), zero for a text
	// request: counts, bytes (before base64), the images' summed pixels
	// and "WxH" sizes (comma-separated, "?" for a URL), the clips' summed
	// length.
	InputImages      int32
	InputImageBytes  int64
	InputImagePixels int64
	InputImageSizes  string
	InputAudios      int32
	InputAudioBytes  int64
	InputAudioNS     int64
	InputVideos      int32
	InputVideoBytes  int64

	// Outcome.
	StatusCode   int32
	ErrorKind    ErrorKind
	ErrorMessage string
	FinishReason string

	// HTTP phases (ns; 0 when not applicable, e.g. DNS on a reused conn).
	ConnReused bool
	// Retries counts re-sends of this request. A request is sent again
	// only when the attempt before provably never reached the server:
	// its write on a reused keep-alive connection failed before the
	// kernel accepted a byte. So the server saw at most one attempt.
	Retries int32
	// RetryErrors holds the errors of the attempts given up before the
	// last one, "; "-separated; "" when Retries is 0.
	RetryErrors string

	BlockedNS int64 // waiting for a connection from the pool
	DNSNS     int64
	ConnectNS int64 // TCP connect (and TLS when used)
	AdapterNS int64 // time spent in the endpoint adapter (build + parse)

	// Generation endpoints (design 0023); 0 = none (null in files).
	// MediaItems counts the final images of an image request, 1 for a
	// speech output or a downloaded video; MediaPartials the partial
	// images streamed before them; MediaBytes the decoded bytes of the
	// final media. AudioNS is the audio a request made (speech) or sent
	// (transcription). FirstMediaNS is the time from SentNS to the event
	// that carried the first media (a partial or final image, the first
	// audio bytes).
	MediaItems    int32
	MediaPartials int32
	MediaBytes    int64
	AudioNS       int64
	FirstMediaNS  int64
	// Asynchronous jobs (video): JobQueueNS runs from the submit's
	// response to the first poll that found the job started,
	// JobGenerationNS from then to the first poll that found it done,
	// JobDownloadNS is the content download (send to end); JobPolls
	// counts the status polls sent. A poll's answer bounds each time
	// from above by up to one poll interval.
	JobQueueNS      int64
	JobGenerationNS int64
	JobDownloadNS   int64
	JobPolls        int32
	// Accuracy (docs/design/0021-accuracy.md): set on a graded request
	// (Graded), zero otherwise. AccuracyItem is the item's stable id
	// (pairs the items of two runs), AccuracyExpected the right answer,
	// AccuracyAnswer what the grader extracted from the response ("" for
	// nothing, or a failed request) and AccuracyCorrect the grade.
	Graded           bool
	AccuracyCorrect  bool
	AccuracyTask     string
	AccuracyItem     string
	AccuracyExpected string
	AccuracyAnswer   string
}

// NoTokenDiff is Request.ServerMinusClientOutputTokens when there is no
// difference to report (null in files).
const NoTokenDiff = math.MinInt32

// TokenSource says where a request's output token count comes from.
type TokenSource uint8

// The token sources.
const (
	TokensUnknown TokenSource = iota // not recorded (older files)
	TokensServer                     // the server's usage.completion_tokens
	TokensClient                     // the client tokenizer, over every choice
	TokensEvents                     // one per content event: no tokenizer, no usage
)

var tokenSourceNames = [...]string{"", "server", "client", "events"}

// String returns the name files use ("" for TokensUnknown).
func (s TokenSource) String() string {
	if int(s) < len(tokenSourceNames) {
		return tokenSourceNames[s]
	}
	return ""
}

// OutputLength is the request's output sequence length (OSL), the one its
// ITL was computed with: the server's completion tokens when
// OutputTokensSource is TokensServer, else OutputTokens + ReasoningTokens.
func (r *Request) OutputLength() int64 {
	if r.OutputTokensSource == TokensServer && r.ServerCompletionTokens >= 0 {
		return int64(r.ServerCompletionTokens)
	}
	return int64(r.OutputTokens) + int64(r.ReasoningTokens)
}

// OK reports whether the request succeeded.
func (r *Request) OK() bool { return r.ErrorKind == ErrNone }

// PlannedCancel reports whether the request was cancelled as the run
// planned (--cancel-rate): not a failure of the server.
func (r *Request) PlannedCancel() bool { return r.ErrorKind == ErrCancelled && r.CancelAfterNS > 0 }

// EventKind is the class of one response event.
type EventKind uint8

// The event kinds, shared with the adapter ABI (docs/format/adapter-abi.md).
const (
	EventIgnore EventKind = iota
	EventContent
	EventReasoning
	EventToolCall
	EventUsage
	EventError
	EventFinish
	EventMeta // role-only delta, keep-alive comment
)

var eventKindNames = [...]string{"ignore", "content", "reasoning", "tool_call", "usage", "error", "finish", "meta"}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is one response event of one request (events.parquet).
type Event struct {
	RequestID uint64
	Seq       int32 // 0-based within the request
	TimeNS    int64 // Unix ns of the read that completed it
	Kind      EventKind
	// Choice is the choice the row is about (content, reasoning, tool
	// call or finish of that choice), -1 for rows of no choice (usage,
	// errors, role chunks, comments). An event carrying several choices
	// has one row per choice, with the same Seq.
	Choice int32
	// Tokens is the output tokens the row carried as the client counted
	// them: the client tokenizer's tokens whose last byte arrived in the
	// event (so a request's rows add up to OutputTokens +
	// ReasoningTokens), or one per content event without a tokenizer and
	// usage; -1 when unknown (tool-call arguments, counts from usage).
	Tokens       int32
	Bytes        int32 // payload bytes
	EventsInRead int32 // events completed by the same read
}

// SetMedia sets r's media fields from m.
func (r *Request) SetMedia(m *Media) {
	r.InputImages, r.InputImageBytes, r.InputImagePixels, r.InputImageSizes = m.Images, m.ImageBytes, m.ImagePixels, m.ImageSizes
	r.InputAudios, r.InputAudioBytes, r.InputAudioNS = m.Audios, m.AudioBytes, m.AudioNS
	r.InputVideos, r.InputVideoBytes = m.Videos, m.VideoBytes
}

// Media returns r's media fields.
func (r *Request) Media() Media {
	return Media{Images: r.InputImages, ImageBytes: r.InputImageBytes, ImagePixels: r.InputImagePixels, ImageSizes: r.InputImageSizes,
		Audios: r.InputAudios, AudioBytes: r.InputAudioBytes, AudioNS: r.InputAudioNS, Videos: r.InputVideos, VideoBytes: r.InputVideoBytes}
}

// Media counts one request's images, audio clips and videos. Bytes are
// the media's own (before base64); an http(s) URL passed through counts
// as an item of 0 bytes.
type Media struct {
	Images      int32
	ImageBytes  int64
	ImagePixels int64  // sum of width × height
	ImageSizes  string // "WxH" per image, comma-separated ("?" for a URL)
	Audios      int32
	AudioBytes  int64
	AudioNS     int64 // sum of the clips' lengths
	Videos      int32
	VideoBytes  int64
}
