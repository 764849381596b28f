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

// TestLoadOf: 20 requests sent one every 100 ms (a span of 1.9 s), each
// 110 ms long: 20 requests over 2.01 s, 1.094 in flight, 11 tokens each.
func TestLoadOf(t *testing.T) {
	s := Summarize(qualityRecords(20, 0, 0, 1), RunInfo{}, Options{Streaming: true})
	l := LoadOf(s)
	rate := 20 / 2.01
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"streams", l.Streams, rate * 0.11}, {"events/s", l.EventsPerSec, rate * 11}, {"requests/s", l.RequestsPerSec, rate}} {
		if abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestLoadClosedLoop: N streams of back-to-back requests have N in
// flight whatever the number of rounds (2 here), where the send rate
// alone would count twice as many.
func TestLoadClosedLoop(t *testing.T) {
	const streams, rounds = 8, 2
	var rs []record.Request
	for i := range streams * rounds {
		r := qualityRecords(1, 0, 0, 1)[0]
		r.RequestID = uint64(i)
		shift := int64(i%streams)*1e6 + int64(i/streams)*110e6 // staggered by 1 ms, back to back
		for _, p := range []*int64{&r.IntendedNS, &r.DispatchedNS, &r.SentNS, &r.FirstTokenNS, &r.LastTokenNS, &r.EndNS} {
			*p += shift
		}
		rs = append(rs, r)
	}
	l := LoadOf(Summarize(rs, RunInfo{}, Options{Streaming: true}))
	// 16 sends over 117 ms of sends + 110 ms: 7.75 in flight.
	if want := 16 / 0.227 * 0.11; abs(l.Streams-want) > 1e-9 || l.Streams < 7 || l.Streams > 8 {
		t.Errorf("streams %v, want %v", l.Streams, want)
	}
}

// TestCalibratedTable: with a calibration the table shows the error bars
// beside TTFT, ITL and request latency, the calibration, and a warning
// when the run went past its safe load.
func TestCalibratedTable(t *testing.T) {
	cal := &Calibration{File: "cal.json", Host: "h", Created: time.Unix(1_800_000_000, 0).UTC(), MaxErrorMS: 1,
		SafeLoad: Load{Streams: 0.5, EventsPerSec: 500, RequestsPerSec: 20},
		Errors:   map[string]ErrorBar{"time_to_first_token": {0.01, 0.25}, "inter_token_latency": {0, 0.02}, "request_latency": {0.01, 0.5}}}
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

// TestCalibratedTableGood: a run within its calibration's safe load, and
// good, keeps the ±err column, and the Calibration line says how old the
// calibration was when the run started.
func TestCalibratedTableGood(t *testing.T) {
	created := time.Unix(1_800_000_000, 0).UTC()
	cal := &Calibration{File: "/home/u/.cache/reprise/calibration-h.json", Host: "h", Created: created, MaxErrorMS: 1,
		SafeLoad: Load{Streams: 4, EventsPerSec: 5000, RequestsPerSec: 200},
		Errors:   map[string]ErrorBar{"time_to_first_token": {0.01, 0.25}, "inter_token_latency": {0, 0.02}, "request_latency": {0.01, 0.5}}}
	info := RunInfo{Start: created.Add(50*time.Hour + 30*time.Minute)}
	var b bytes.Buffer
	if err := Summarize(qualityRecords(20, 0, 0, 1), info, Options{Streaming: true, Calibration: cal}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"±err p99\n", "±0.25\n", "Calibration                        /home/u/.cache/reprise/calibration-h.json (h, made 2027-01-15, 2d 2h before the run)",
		"Measurement quality                good"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Degraded for another reason (late): the column goes, and a line says
	// why.
	b.Reset()
	if err := Summarize(qualityRecords(20, 0, 3*time.Millisecond, 1), info, Options{Streaming: true, Calibration: cal}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if strings.Contains(out, "±err p99\n") || strings.Contains(out, "±0.25") {
		t.Errorf("a degraded run shows the calibration's errors:\n%s", out)
	}
	if !strings.Contains(out, "note: no ±err column: the measurement quality is degraded (below)") {
		t.Errorf("the table does not say why the ±err column is left out:\n%s", out)
	}
}

// TestTableRates: the two rates say what they divide; a closed loop has
// no intended rate.
func TestTableRates(t *testing.T) {
	for _, c := range []struct {
		mode       string
		want, none []string
	}{
		{"rate", []string{"Request throughput (req/s)         9.95 (ok requests / benchmark duration)",
			"Send rate intended / achieved      10.00 / 10.00 req/s (sends / send window, first to last send)"}, nil},
		{"concurrency", []string{"Send rate (req/s)                  10.00 (sends / send window, first to last send; a closed loop has no intended rate)"},
			[]string{"intended /"}},
	} {
		var b bytes.Buffer
		if err := Summarize(qualityRecords(20, 0, 0, 1), RunInfo{Mode: c.mode}, Options{Streaming: true}).WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: table lacks %q:\n%s", c.mode, w, b.String())
			}
		}
		for _, w := range c.none {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: table has %q:\n%s", c.mode, w, b.String())
			}
		}
	}
}

// TestTableNoOutput: an embeddings run generates nothing, so the table has
// no output-length or output-throughput rows (all zeros otherwise).
func TestTableNoOutput(t *testing.T) {
	rs := qualityRecords(20, 0, 0, 1)
	for i := range rs {
		rs[i].OutputTokens, rs[i].ServerCompletionTokens, rs[i].InputTokens = 0, 0, 64
	}
	var b bytes.Buffer
	if err := Summarize(rs, RunInfo{EndpointKind: "embeddings", InputsPerRequest: 4}, Options{}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, none := range []string{"Output sequence length", "E2E output token throughput", "Output token throughput", "Output tokens (OSL, ITL) from"} {
		if strings.Contains(out, none) {
			t.Errorf("embeddings table has %q:\n%s", none, out)
		}
	}
	for _, want := range []string{"Input sequence length", "Input throughput (inputs/s)", "Request latency"} {
		if !strings.Contains(out, want) {
			t.Errorf("embeddings table lacks %q:\n%s", want, out)
		}
	}
}
