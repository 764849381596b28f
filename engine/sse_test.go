package engine

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
)

type sseEvent struct {
	Name, Data string
	Flags      adapter.EventFlags
}

// frameAll feeds p to a fresh framer in pieces cut at cuts and returns the
// events (plus a trailing unterminated one when flush is set).
func frameAll(p []byte, cuts []int, flush bool) []sseEvent {
	f := sseFramer{max: math.MaxInt32}
	var out []sseEvent
	collect := func() {
		for i := range f.events {
			ev := f.event(i)
			out = append(out, sseEvent{string(ev.Name), string(ev.Data), ev.Flags})
		}
		f.clearCompleted()
	}
	last := 0
	for _, c := range cuts {
		if c <= last || c >= len(p) {
			continue
		}
		f.feed(p[last:c])
		collect()
		last = c
	}
	f.feed(p[last:])
	collect()
	if flush {
		f.flush()
		collect()
	}
	return out
}

var lineEnd = regexp.MustCompile("\r\n|\r|\n")

// refFrame is a slow, obvious SSE framer: normalize line ends, split into
// lines, apply the rules.
func refFrame(p []byte, flush bool) []sseEvent {
	s := lineEnd.ReplaceAllString(string(p), "\n")
	lines := strings.Split(s, "\n")
	complete := lines[:len(lines)-1] // the last piece has no line end
	if flush && lines[len(lines)-1] != "" {
		complete = append(complete, lines[len(lines)-1])
	}
	var out []sseEvent
	var data, name, cmt []string
	hasData, hasCmt := false, false
	dispatch := func() {
		switch {
		case hasData:
			d := strings.Join(data, "\n")
			var fl adapter.EventFlags
			if d == "[DONE]" {
				fl = adapter.EventDone
			}
			out = append(out, sseEvent{strings.Join(name, ""), d, fl})
		case hasCmt:
			out = append(out, sseEvent{"", strings.Join(cmt, "\n"), adapter.EventComment})
		}
		data, name, cmt, hasData, hasCmt = nil, nil, nil, false, false
	}
	for _, l := range complete {
		switch {
		case l == "":
			dispatch()
		case l[0] == ':':
			cmt = append(cmt, l[1:])
			hasCmt = true
		default:
			field, value, _ := strings.Cut(l, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "data":
				data = append(data, value)
				hasData = true
			case "event":
				name = []string{value}
			}
		}
	}
	if flush {
		dispatch()
	}
	return out
}

func TestSSEFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"basic", "data: a\n\ndata: b\n\n", []sseEvent{{"", "a", 0}, {"", "b", 0}}},
		{"crlf", "data: a\r\n\r\ndata:b\r\n\r\n", []sseEvent{{"", "a", 0}, {"", "b", 0}}},
		{"cr only", "data: a\r\rdata: b\r\r", []sseEvent{{"", "a", 0}, {"", "b", 0}}},
		{"multi-line data joined", "data: a\ndata: b\ndata\n\n", []sseEvent{{"", "a\nb\n", 0}}},
		{"event name and id/retry ignored", "event: error\nid: 3\nretry: 10\ndata: {\"x\":1}\n\n", []sseEvent{{"error", `{"x":1}`, 0}}},
		{"keep-alive comment", ": keepalive\n\ndata: x\n\n", []sseEvent{{"", " keepalive", adapter.EventComment}, {"", "x", 0}}},
		{"comment inside an event is dropped", "data: x\n: ping\n\n", []sseEvent{{"", "x", 0}}},
		{"done", "data: [DONE]\n\n", []sseEvent{{"", "[DONE]", adapter.EventDone}}},
		{"blank lines alone dispatch nothing", "\n\n\n", nil},
		{"only one leading space dropped", "data:  two\n\n", []sseEvent{{"", " two", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := frameAll([]byte(tt.in), nil, false)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			// Every split point gives the same events.
			for cut := 1; cut < len(tt.in); cut++ {
				if d := cmp.Diff(got, frameAll([]byte(tt.in), []int{cut}, false)); d != "" {
					t.Fatalf("split at %d:\n%s", cut, d)
				}
			}
			if d := cmp.Diff(refFrame([]byte(tt.in), false), got); d != "" {
				t.Errorf("reference framer disagrees:\n%s", d)
			}
		})
	}
}

// TestSSEFramerCap: a line, or an event's data (or comment) lines joined,
// longer than the framer's max stop it (over), whichever read the line
// ends in; exactly max bytes still frame.
func TestSSEFramerCap(t *testing.T) {
	const max = 16
	tests := []struct {
		name string
		in   string
		over bool
	}{
		{"line at max", "data: 1234567890\n\n", false},
		{"line over max", "data: 12345678901\n\n", true},
		{"other field over max", "id: 1234567890123\n", true},
		{"other field at max", "id: 123456789012\n\n", false},
		{"endless line", "data: " + strings.Repeat("x", 100), true},
		{"joined data at max", "data: 12345678\ndata: 1234567\n\n", false},
		{"joined data over max", "data: 12345678\ndata: 12345678\n\n", true},
		{"endless event", strings.Repeat("data: 1\n", 100), true},
		{"many events each under max", strings.Repeat("data: 1234567890\n\n", 20), false},
		{"comments at max", ":12345678\n:1234567\n\n", false},
		{"comments over max", ":12345678\n:12345678\n\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for cut := 0; cut < len(tt.in); cut++ {
				f := sseFramer{max: max}
				f.feed([]byte(tt.in[:cut]))
				f.clearCompleted()
				f.feed([]byte(tt.in[cut:]))
				if f.over != tt.over {
					t.Fatalf("cut at %d: over %v, want %v", cut, f.over, tt.over)
				}
				if len(f.line) > max || len(f.data) > max || len(f.comment) > max {
					t.Fatalf("cut at %d: holds %d, %d, %d bytes, more than %d", cut, len(f.line), len(f.data), len(f.comment), max)
				}
			}
		})
	}
}

// FuzzSSE: the framer equals the reference framer, and splitting the
// input into reads anywhere never changes the events.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b\n\n"), uint16(3), uint16(9))
	f.Add([]byte("data: a\r\n\r\n: ka\r\rdata: [DONE]\r\n\r\n"), uint16(1), uint16(14))
	f.Add([]byte("event: error\ndata: x\ndata: y\n\ndata: tail"), uint16(20), uint16(21))
	f.Fuzz(func(t *testing.T, p []byte, c1, c2 uint16) {
		whole := frameAll(p, nil, true)
		split := frameAll(p, []int{int(c1) % (len(p) + 1), int(c2) % (len(p) + 1)}, true)
		if d := cmp.Diff(whole, split); d != "" {
			t.Fatalf("split at %d,%d changes events:\n%s", c1, c2, d)
		}
		// A read ending in CR followed by LF: the reference sees CRLF too.
		if d := cmp.Diff(refFrame(p, true), whole); d != "" {
			t.Fatalf("%q: reference differs:\n%s", p, d)
		}
	})
}

// TestSSEAllocs: the per-read path (stamp, frame, classify, fold records)
// allocates nothing once buffers have grown.
func TestSSEAllocs(t *testing.T) {
	e := newTestEngine(t, "http://127.0.0.1:1", openai.Chat, nil)
	s, err := e.NewSender()
	if err != nil {
		t.Fatal(err)
	}
	read := []byte("data: " + `{"id":"c","object":"chat.completion.chunk","usage":null,"choices":[{"index":0,"finish_reason":null,"delta":{"content":"tok"}}]}` + "\n\n")
	read = bytes.Repeat(read, 3)
	s.ctxID++
	s.inst.Open(s.ctxID, adapter.OpenStream)
	step := func() {
		if len(s.evTime) > 1<<14 { // keep the tables bounded, as a response would
			s.evTime, s.evBytes, s.evRead, s.evKind = s.evTime[:0], s.evBytes[:0], s.evRead[:0], s.evKind[:0]
		}
		t0 := e.clock.Now()
		k := s.frame(read, t0)
		if err := s.parse(len(s.evTime)-k, k, 0); err != nil {
			t.Fatal(err)
		}
		s.framer.clearCompleted()
	}
	for range 1 << 15 {
		step()
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Errorf("%v allocations per read of 3 events, want 0", n)
	}
	if s.evKind[0] != record.EventContent {
		t.Errorf("kind %v", s.evKind[0])
	}
}

// BenchmarkStreamRead measures the client-side cost per event: one
// response of 256 events in 64 reads, through a real HTTP connection.
func BenchmarkStreamRead(b *testing.B) {
	var body bytes.Buffer
	for i := range 256 {
		body.WriteString(`data: {"id":"c","object":"chat.completion.chunk","usage":null,"choices":[{"index":0,"finish_reason":null,"delta":{"content":"t` + strings.Repeat("x", i%5) + `"}}]}` + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	payload := body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		step := len(payload) / 64
		for i := 0; i < len(payload); i += step {
			w.Write(payload[i:min(i+step, len(payload))])
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	e := newTestEngine(b, srv.URL, openai.Chat, nil)
	s, _ := e.NewSender()
	p := prepared(b, e, true)
	b.ReportAllocs()
	for b.Loop() {
		var r record.Request
		s.Do(context.Background(), p, &r)
		if r.ContentEvents != 256 {
			b.Fatalf("%d content events: %s", r.ContentEvents, r.ErrorMessage)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*257), "ns/event")
}
