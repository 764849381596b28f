package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reprise-bench/reprise/trace/media"
)

// logLine is one JSONL line of the oracle log as it is decoded.
type logLine struct {
	V               *int            `json:"v"`
	Seq             uint64          `json:"seq"`
	RequestID       string          `json:"request_id"`
	RemoteAddr      string          `json:"remote_addr"`
	ResponseID      string          `json:"response_id"`
	Endpoint        string          `json:"endpoint"`
	Stream          bool            `json:"stream"`
	Status          int             `json:"status"`
	Fault           string          `json:"fault"`
	Error           string          `json:"error"`
	FinishReason    string          `json:"finish_reason"`
	ReceivedNS      int64           `json:"received_ns"`
	AdmittedNS      int64           `json:"admitted_ns"`
	EndNS           int64           `json:"end_ns"`
	PromptTokens    int             `json:"prompt_tokens"`
	CachedTokens    int             `json:"cached_tokens"`
	OutputTokens    int             `json:"output_tokens"`
	ReasoningTokens int             `json:"reasoning_tokens"`
	AccuracyItem    string          `json:"accuracy_item"`
	AccuracyRight   bool            `json:"accuracy_right"`
	InFlight        int             `json:"in_flight"`
	Events          []logEvt        `json:"events"`
	Media           *logMedia       `json:"media"`
	InputMedia      []logInputMedia `json:"input_media"`
	InputTokens     []int           `json:"input_tokens"`
	QueryTokens     int             `json:"query_tokens"`
}

type logMedia struct {
	JobID     string `json:"job_id"`
	Status    string `json:"status"`
	Items     int    `json:"items"`
	Partials  int    `json:"partials"`
	Bytes     int64  `json:"bytes"`
	AudioNS   int64  `json:"audio_ns"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Frames    int    `json:"frames"`
	QueuedNS  int64  `json:"queued_ns"`
	StartedNS int64  `json:"started_ns"`
	DoneNS    int64  `json:"done_ns"`
}

type logInputMedia struct {
	Kind       string `json:"kind"`
	Format     string `json:"format"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	DurationNS int64  `json:"duration_ns"`
	Bytes      int    `json:"bytes"`
	AudioTrack *struct {
		Codec      string `json:"codec"`
		SampleRate int    `json:"sample_rate"`
		Channels   int    `json:"channels"`
		DurationNS int64  `json:"duration_ns"`
	} `json:"audio_track"`
}

type logEvt struct {
	Kind    string `json:"kind"`
	Choice  int32  `json:"choice"`
	StartNS int64  `json:"start_ns"`
	TimeNS  int64  `json:"t_ns"`
	DueNS   int64  `json:"due_ns"`
}

// LogLineError is a line of the JSONL oracle log that could not be read:
// its line number (from 1, as counted by the caller), the field at fault
// ("" for the line as a whole) and why.
type LogLineError struct {
	Line  int
	Field string
	Err   error
}

func (e *LogLineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("oracle log line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("oracle log line %d: %s: %v", e.Line, e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *LogLineError) Unwrap() error { return e.Err }

// ParseLogLine decodes one line of the JSONL oracle log
// (docs/format/mock-server.md) written by `reprise mock-server
// --event-log`; line is its number, for the error. Unknown keys are
// ignored; a line of another version, an unknown event kind or a
// malformed value is a [*LogLineError].
func ParseLogLine(b []byte, line int) (RequestLog, error) {
	var l logLine
	if err := json.Unmarshal(bytes.TrimSpace(b), &l); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return RequestLog{}, &LogLineError{Line: line, Field: te.Field, Err: fmt.Errorf("want a %s", te.Type)}
		}
		return RequestLog{}, &LogLineError{Line: line, Err: err}
	}
	if l.V == nil || *l.V != EventLogVersion {
		v := "missing"
		if l.V != nil {
			v = fmt.Sprint(*l.V)
		}
		return RequestLog{}, &LogLineError{Line: line, Field: "v", Err: fmt.Errorf("version %s: this reader reads version %d; use the reprise that wrote the log", v, EventLogVersion)}
	}
	r := RequestLog{Seq: l.Seq, ClientRequestID: l.RequestID, RemoteAddr: l.RemoteAddr, ResponseID: l.ResponseID, Endpoint: l.Endpoint,
		Stream: l.Stream, Status: l.Status, Fault: l.Fault, Error: l.Error, FinishReason: l.FinishReason,
		ReceivedNS: l.ReceivedNS, AdmittedNS: l.AdmittedNS, EndNS: l.EndNS, PromptTokens: l.PromptTokens,
		CachedTokens: l.CachedTokens, OutputTokens: l.OutputTokens, ReasoningTokens: l.ReasoningTokens,
		AccuracyItem: l.AccuracyItem, AccuracyRight: l.AccuracyRight, InFlight: l.InFlight,
		InputTokens: l.InputTokens, QueryTokens: l.QueryTokens}
	if m := l.Media; m != nil {
		r.Media = &MediaLog{JobID: m.JobID, Status: m.Status, Items: m.Items, Partials: m.Partials, Bytes: m.Bytes,
			AudioNS: m.AudioNS, Width: m.Width, Height: m.Height, Frames: m.Frames,
			QueuedNS: m.QueuedNS, StartedNS: m.StartedNS, DoneNS: m.DoneNS}
	}
	for _, m := range l.InputMedia {
		im := InputMediaLog{Kind: m.Kind, Format: m.Format, Width: m.Width, Height: m.Height, Duration: time.Duration(m.DurationNS), Bytes: m.Bytes}
		if a := m.AudioTrack; a != nil {
			im.AudioTrack = &media.AudioTrack{Codec: a.Codec, SampleRate: a.SampleRate, Channels: a.Channels, Duration: time.Duration(a.DurationNS)}
		}
		r.InputMedia = append(r.InputMedia, im)
	}
	if len(l.Events) > 0 {
		r.Events = make([]Event, len(l.Events))
	}
	for i, e := range l.Events {
		k, ok := kindByName(e.Kind)
		if !ok {
			return RequestLog{}, &LogLineError{Line: line, Field: fmt.Sprintf("events[%d].kind", i),
				Err: fmt.Errorf("unknown kind %q", e.Kind)}
		}
		r.Events[i] = Event{Kind: k, Choice: e.Choice, StartNS: e.StartNS, TimeNS: e.TimeNS, DueNS: e.DueNS}
	}
	return r, nil
}

func kindByName(s string) (EventKind, bool) {
	for i, n := range eventKindNames {
		if n == s {
			return EventKind(i), true
		}
	}
	return 0, false
}
