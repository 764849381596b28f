package summary

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// qualityRecords are n streamed requests, one every 100 ms, each 100 ms
// long with 11 tokens 10 ms apart (ITL 10 ms), with the given read lag,
// lateness and events per read.
func qualityRecords(n int, lag, late time.Duration, perRead int32) []record.Request {
	const t0 = int64(1_800_000_000_000_000_000)
	rs := make([]record.Request, n)
	for i := range rs {
		sent := t0 + int64(i)*100e6
		rs[i] = record.Request{RequestID: uint64(i), IntendedNS: sent - int64(late), DispatchedNS: sent, SentNS: sent,
			FirstTokenNS: sent + 10e6, LastTokenNS: sent + 110e6, EndNS: sent + 110e6, TTFTNS: 10e6, ITLNS: 10e6, E2ENS: 110e6,
			LatenessNS: int64(late), ReadLagNS: int64(lag), Reads: 11, MaxEventsRead: perRead, StatusCode: 200,
			OutputTokens: 11, ServerCompletionTokens: 11, OutputTokensSource: record.TokensServer,
			ServerPromptTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1}
	}
	return rs
}

// TestQualityRules: each rule of the verdict, alone, makes a run degraded
// with its reason; a run breaking none is good.
func TestQualityRules(t *testing.T) {
	cal := &Calibration{File: "cal.json", Host: "h", Created: time.Unix(1_800_000_000, 0).UTC(), MaxErrorMS: 1,
		SafeLoad: Load{Streams: 2, EventsPerSec: 500, RequestsPerSec: 20}}
	tight := *cal
	tight.SafeLoad = Load{Streams: 0.5, EventsPerSec: 500, RequestsPerSec: 20} // this load is ≈ 1.1 streams
	for _, c := range []struct {
		name    string
		recs    []record.Request
		cal     *Calibration
		reasons []string // substrings, one per reason; none = good
	}{
		{"clean", qualityRecords(20, 2*time.Millisecond, 100*time.Microsecond, 1), nil, nil},
		{"read lag over ITL", qualityRecords(20, 15*time.Millisecond, 0, 2), nil, []string{"client read lag p90 15 ms > median inter-token latency 10 ms"}},
		{"late", qualityRecords(20, 0, 3*time.Millisecond, 1), nil, []string{"schedule lateness p99 3 ms > 1 ms"}},
		{"coalesced, no read lag", qualityRecords(20, 0, 0, 3), nil, []string{"reads completing 3 events"}},
		{"coalesced with small read lag", qualityRecords(20, time.Millisecond, 0, 3), nil, nil},
		{"within calibration", qualityRecords(20, time.Millisecond, 0, 1), cal, nil},
		{"past calibration", qualityRecords(20, time.Millisecond, 0, 1), &tight, []string{"past the calibrated safe load (1.095 streams > 0.5"}},
		{"nothing measured", nil, nil, []string{"nothing was measured"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Summarize(c.recs, RunInfo{}, Options{Streaming: true, Calibration: c.cal})
			q := s.Quality()
			want := QualityGood
			if len(c.reasons) > 0 {
				want = QualityDegraded
			}
			if q.Verdict != want || len(q.Reasons) != len(c.reasons) {
				t.Fatalf("verdict %s, reasons %q; want %s with %d reasons", q.Verdict, q.Reasons, want, len(c.reasons))
			}
			for i, r := range c.reasons {
				if !strings.Contains(q.Reasons[i], r) {
					t.Errorf("reason %q, want it to contain %q", q.Reasons[i], r)
				}
			}
			if (c.cal != nil) != (q.Evidence.SafeLoad != nil) {
				t.Errorf("safe load in the evidence %v with calibration %v", q.Evidence.SafeLoad, c.cal)
			}
		})
	}
}

// TestLoadOf: the mean number of requests in flight is Little's law over
// the summary: 20 requests of 110 ms, one every 100 ms, span 2.01 s.
func TestLoadOf(t *testing.T) {
	s := Summarize(qualityRecords(20, 0, 0, 1), RunInfo{}, Options{Streaming: true})
	l := LoadOf(s)
	dur := 1.9 + 0.11
	if got, want := l.Streams, 20*0.11/dur; abs(got-want) > 1e-9 {
		t.Errorf("streams %v, want %v", got, want)
	}
	if got, want := l.EventsPerSec, 20*11/dur; abs(got-want) > 1e-9 {
		t.Errorf("events/s %v, want %v", got, want)
	}
	if got, want := l.RequestsPerSec, 20/dur; abs(got-want) > 1e-9 {
		t.Errorf("requests/s %v, want %v", got, want)
	}
}

// TestCalibratedTable: with a calibration the table shows the error bars
// beside TTFT, ITL and request latency, the calibration, and a warning
// when the run went past its safe load.
func TestCalibratedTable(t *testing.T) {
	cal := &Calibration{File: "cal.json", Host: "h", Created: time.Unix(1_800_000_000, 0).UTC(), MaxErrorMS: 1,
		SafeLoad: Load{Streams: 0.5, EventsPerSec: 500, RequestsPerSec: 20},
		Errors: map[string]ErrorBar{"time_to_first_token": {0.01, 0.25}, "inter_token_latency": {0, 0.02}, "request_latency": {0.01, 0.5}}}
	s := Summarize(qualityRecords(20, 0, 0, 1), RunInfo{}, Options{Streaming: true, Calibration: cal})
	var b bytes.Buffer
	if err := s.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, b.Bytes())
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
