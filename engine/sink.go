package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reprise-bench/reprise/internal/record"
)

// Sink receives a run's records in batches, from one goroutine (the
// engine's collector, never a sender). The sink owns each batch after the
// call: the engine never touches it again. WriteEvents is only called when
// events are collected. Close flushes and completes the files.
// arrowio.RunWriter implements it.
type Sink interface {
	WriteRequests(batch []record.Request) error
	WriteEvents(batch []record.Event) error
	Close() error
}

// JSONLSink writes records.jsonl (and events.jsonl) with the column names
// of docs/format/records.md. It is the fallback when Parquet output is not
// wanted.
type JSONLSink struct {
	reqF, evF *os.File
	req, ev   *bufio.Writer
	dir       string
	events    bool
}

var _ Sink = (*JSONLSink)(nil)

// NewJSONLSink creates records.jsonl (and events.jsonl when events is set)
// in dir.
func NewJSONLSink(dir string, events bool) (*JSONLSink, error) {
	s := &JSONLSink{dir: dir, events: events}
	f, err := os.Create(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		return nil, err
	}
	s.reqF, s.req = f, bufio.NewWriterSize(f, 256<<10)
	if events {
		f, err := os.Create(filepath.Join(dir, "events.jsonl"))
		if err != nil {
			s.reqF.Close()
			return nil, err
		}
		s.evF, s.ev = f, bufio.NewWriterSize(f, 256<<10)
	}
	return s, nil
}

// jsonRequest mirrors record.Request with the documented column names.
type jsonRequest struct {
	RequestID             uint64  `json:"request_id"`
	TraceRow              int64   `json:"trace_row"`
	SessionID             string  `json:"session_id"`
	Turn                  int32   `json:"turn"`
	Phase                 string  `json:"phase"`
	SenderID              int32   `json:"sender_id"`
	IntendedNS            int64   `json:"intended_ns"`
	DispatchedNS          int64   `json:"dispatched_ns"`
	SentNS                int64   `json:"sent_ns"`
	WroteNS               int64   `json:"wrote_ns"`
	HeadersNS             int64   `json:"headers_ns"`
	FirstEventNS          int64   `json:"first_event_ns"`
	FirstTokenNS          int64   `json:"first_token_ns"`
	FirstOutputTokenNS    int64   `json:"first_output_token_ns"`
	SecondTokenNS         int64   `json:"second_token_ns"`
	LastTokenNS           int64   `json:"last_token_ns"`
	EndNS                 int64   `json:"end_ns"`
	TTFTNS                int64   `json:"ttft_ns"`
	TTFONS                int64   `json:"ttfo_ns"`
	TTSTNS                int64   `json:"ttst_ns"`
	ITLNS                 float64 `json:"itl_ns"`
	E2ENS                 int64   `json:"e2e_ns"`
	LatenessNS            int64   `json:"lateness_ns"`
	LatencyFromIntendedNS int64   `json:"latency_from_intended_ns"`
	SessionDelayNS        int64   `json:"session_delay_ns"`
	InputTokens           int32   `json:"input_tokens"`
	OutputTokens          int32   `json:"output_tokens"`
	ReasoningTokens       int32   `json:"reasoning_tokens"`
	MaxTokens             int32   `json:"max_tokens"`
	TraceInputTokens      int32   `json:"trace_input_tokens"`
	ServerPromptTokens    int32   `json:"server_prompt_tokens"`
	ServerCompletion      int32   `json:"server_completion_tokens"`
	ServerReasoning       int32   `json:"server_reasoning_tokens"`
	ServerCached          int32   `json:"server_cached_tokens"`
	ExpectedCached        int32   `json:"expected_cached_tokens"`
	Events                int32   `json:"events"`
	ContentEvents         int32   `json:"content_events"`
	Reads                 int32   `json:"reads"`
	MaxEventsRead         int32   `json:"max_events_per_read"`
	BytesReceived         int64   `json:"bytes_received"`
	BytesSent             int64   `json:"bytes_sent"`
	StatusCode            int32   `json:"status_code"`
	ErrorKind             string  `json:"error_kind"`
	ErrorMessage          string  `json:"error_message"`
	FinishReason          string  `json:"finish_reason"`
	ConnReused            bool    `json:"conn_reused"`
	Retries               int32   `json:"retries"`
	BlockedNS             int64   `json:"blocked_ns"`
	DNSNS                 int64   `json:"dns_ns"`
	ConnectNS             int64   `json:"connect_ns"`
	AdapterNS             int64   `json:"adapter_ns"`
}

type jsonEvent struct {
	RequestID    uint64 `json:"request_id"`
	Seq          int32  `json:"seq"`
	TimeNS       int64  `json:"time_ns"`
	Kind         string `json:"kind"`
	Tokens       int32  `json:"tokens"`
	Bytes        int32  `json:"bytes"`
	EventsInRead int32  `json:"events_in_read"`
}

// WriteRequests implements Sink.
func (s *JSONLSink) WriteRequests(batch []record.Request) error {
	enc := json.NewEncoder(s.req)
	for i := range batch {
		r := &batch[i]
		if err := enc.Encode(jsonRequest{
			r.RequestID, r.TraceRow, r.SessionID, r.Turn, r.Phase.String(), r.SenderID,
			r.IntendedNS, r.DispatchedNS, r.SentNS, r.WroteNS, r.HeadersNS, r.FirstEventNS, r.FirstTokenNS,
			r.FirstOutputTokenNS, r.SecondTokenNS, r.LastTokenNS, r.EndNS,
			r.TTFTNS, r.TTFONS, r.TTSTNS, r.ITLNS, r.E2ENS, r.LatenessNS, r.LatencyFromIntendedNS, r.SessionDelayNS,
			r.InputTokens, r.OutputTokens, r.ReasoningTokens, r.MaxTokens, r.TraceInputTokens,
			r.ServerPromptTokens, r.ServerCompletionTokens, r.ServerReasoningTokens, r.ServerCachedTokens, r.ExpectedCachedTokens,
			r.Events, r.ContentEvents, r.Reads, r.MaxEventsRead, r.BytesReceived, r.BytesSent,
			r.StatusCode, string(r.ErrorKind), r.ErrorMessage, r.FinishReason,
			r.ConnReused, r.Retries, r.BlockedNS, r.DNSNS, r.ConnectNS, r.AdapterNS,
		}); err != nil {
			return fmt.Errorf("write records.jsonl: %w", err)
		}
	}
	return nil
}

// WriteEvents implements Sink.
func (s *JSONLSink) WriteEvents(batch []record.Event) error {
	if s.ev == nil {
		return nil
	}
	enc := json.NewEncoder(s.ev)
	for i := range batch {
		e := &batch[i]
		if err := enc.Encode(jsonEvent{e.RequestID, e.Seq, e.TimeNS, e.Kind.String(), e.Tokens, e.Bytes, e.EventsInRead}); err != nil {
			return fmt.Errorf("write events.jsonl: %w", err)
		}
	}
	return nil
}

// Close implements Sink.
func (s *JSONLSink) Close() error {
	var errs []error
	errs = append(errs, s.req.Flush(), s.reqF.Close())
	if s.ev != nil {
		errs = append(errs, s.ev.Flush(), s.evF.Close())
	}
	return errors.Join(errs...)
}
