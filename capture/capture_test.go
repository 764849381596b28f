package capture_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/capture"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// sampleRows is how many rows of the vendored Mooncake conversation trace
// the tests replay.
const sampleRows = 10

// startProxy starts a Recorder in front of upstream on a free port of
// 127.0.0.1 and returns its URL, the recorder and the trace buffer.
func startProxy(t testing.TB, upstream string, mut func(*capture.Config)) (string, *capture.Recorder, *bytes.Buffer) {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream)
	cfg := capture.NewConfig()
	cfg.Upstream, cfg.Tokenizer = u, tok
	if mut != nil {
		mut(&cfg)
	}
	var out bytes.Buffer
	rec, err := capture.New(cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rec.NewServer()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), rec, &out
}

func startMock(t testing.TB) *mockserver.Server {
	t.Helper()
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
	srv, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestRecordReplayedMooncake: reprise replays the first rows of a Mooncake
// trace through the recording proxy in front of the mock server; the
// recorded trace (16-token blocks) has the source's lengths, row for row,
// and analyze-trace reports the same lengths and the same prefix-cache
// statistics (token hit ratio, hit tokens) as for the source (512-token
// blocks): the proxy's chained 16-token hashes see exactly the prefixes
// the trace's ids describe.
func TestRecordReplayedMooncake(t *testing.T) {
	mock := startMock(t)
	proxy, rec, out := startProxy(t, mock.URL(), nil)

	var src bytes.Buffer
	rows, _, err := trace.ReadAll(testfiles.Path(t, "traces/mooncake/conversation_trace.jsonl.zst"), trace.Options{MaxRows: sampleRows})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := trace.NewWriter(&src, trace.FormatMooncake)
	for i := range rows {
		w.Write(&rows[i])
	}
	w.Flush()

	o := reprise.NewOptions()
	o.URL, o.Model = proxy, mockserver.DefaultModel
	o.Trace.Path = filepath.Join(t.TempDir(), "sample.jsonl")
	if err := os.WriteFile(o.Trace.Path, src.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Replay.Speedup = 1000
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.ErrorRequestCount != 0 {
		t.Fatalf("%d requests failed", res.Summary.ErrorRequestCount)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if st := rec.Stats(); st.Recorded != sampleRows || st.Skipped != 0 {
		t.Fatalf("recorder stats %+v, want %d rows", st, sampleRows)
	}
	got, _, err := trace.ReadAllFrom(mustReader(t, out.Bytes(), 16))
	if err != nil {
		t.Fatalf("the recorded trace does not read: %v\n%.500s", err, out.Bytes())
	}
	a := analyze.Rows(rows, analyze.Config{BlockSize: 512})
	b := analyze.Rows(got, analyze.Config{BlockSize: 16})
	if diff := cmp.Diff(a.Lengths, b.Lengths); diff != "" {
		t.Errorf("lengths (-source +recorded):\n%s", diff)
	}
	if diff := cmp.Diff(a.ISL, b.ISL); diff != "" {
		t.Errorf("input lengths (-source +recorded):\n%s", diff)
	}
	if a.Cache == nil || b.Cache == nil {
		t.Fatal("no cache statistics")
	}
	if a.Cache.TokenHitRatio != b.Cache.TokenHitRatio || a.Cache.HitTokens != b.Cache.HitTokens {
		t.Errorf("prefix cache: source hit ratio %v (%d tokens), recorded %v (%d tokens)",
			a.Cache.TokenHitRatio, a.Cache.HitTokens, b.Cache.TokenHitRatio, b.Cache.HitTokens)
	}
	t.Logf("source token hit ratio %.4f, recorded %.4f", a.Cache.TokenHitRatio, b.Cache.TokenHitRatio)
}

func mustReader(t *testing.T, b []byte, block int) *trace.Reader {
	t.Helper()
	rd, err := trace.NewReader("recorded.jsonl", bytes.NewReader(b), trace.Options{BlockSize: block})
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// chat sends a streamed chat request through the proxy and returns the
// response text and the number of SSE data lines.
func chat(t *testing.T, proxy, session string, msgs ...string) (string, int) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"model": "` + mockserver.DefaultModel + `", "stream": true, "max_tokens": 8, "messages": [`)
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if i > 0 {
			b.WriteString(", ")
		}
		mj, _ := json.Marshal(m)
		b.WriteString(`{"role": "` + role + `", "content": ` + string(mj) + `}`)
	}
	b.WriteString("]}")
	req, _ := http.NewRequest(http.MethodPost, proxy+"/v1/chat/completions", strings.NewReader(b.String()))
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("X-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var text strings.Builder
	events := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		events++
		var ev struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(d), &ev) == nil && len(ev.Choices) > 0 {
			text.WriteString(ev.Choices[0].Delta.Content)
		}
	}
	return text.String(), events
}

// TestRecordSessionsAndDependencies: a chat request whose messages carry
// an earlier response waits for that request and continues its session
// (prefix continuation); a session header names the session; the
// streamed events reach the client one by one, as the server sent them.
func TestRecordSessionsAndDependencies(t *testing.T) {
	mock := startMock(t)
	proxy, rec, out := startProxy(t, mock.URL(), nil)
	first := strings.Repeat("Plan the work for the team and list the steps. ", 8)
	a, events := chat(t, proxy, "", first)
	if a == "" {
		t.Fatal("no response text")
	}
	// The record of a is written off the request path: wait for it, so
	// that b can find a's response (a later request always could).
	for deadline := time.Now().Add(5 * time.Second); rec.Stats().Recorded < 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	chat(t, proxy, "", first, a, "Now do step one.")
	chat(t, proxy, "team-7", "An unrelated question.")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	// The client can read a response's end just before the server logs it.
	if err := mock.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	logs := mock.Log()
	if len(logs) != 3 || len(logs[0].Events) != events {
		t.Errorf("the client saw %d events; the server sent %d", events, len(logs[0].Events))
	}
	rows, _, err := trace.ReadAllFrom(mustReader(t, out.Bytes(), 16))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows:\n%s", len(rows), out.Bytes())
	}
	byID := map[int64]trace.Row{}
	for _, r := range rows {
		byID[r.RequestID] = r
	}
	ra, rb, rc := byID[0], byID[1], byID[2]
	if len(rb.WaitFor) != 1 || rb.WaitFor[0] != 0 || rb.SessionID != ra.SessionID || rc.SessionID != "team-7" || ra.WaitFor != nil {
		t.Errorf("rows:\n%s", out.Bytes())
	}
	if ra.InputTokens != logs[0].PromptTokens || ra.OutputTokens != logs[0].OutputTokens {
		t.Errorf("lengths %d/%d, server %d/%d", ra.InputTokens, ra.OutputTokens, logs[0].PromptTokens, logs[0].OutputTokens)
	}
	// b's prompt starts with a's: its leading full blocks are a's.
	full := ra.InputTokens / 16
	for k := range full {
		if rb.HashIDs[k] != ra.HashIDs[k] {
			t.Fatalf("block %d of b is not a's", k)
		}
	}
}

// TestRecordArrivalOrder: rows are written in arrival order though the
// first request ends last; with more finished rows waiting than
// Config.ReorderRows, the request still in flight is passed over and its
// row written when it ends (Stats.Late).
func TestRecordArrivalOrder(t *testing.T) {
	for _, tc := range []struct {
		reorder int
		want    []int64 // request_ids in file order
		late    int64
	}{
		{0, []int64{0, 1, 2}, 0}, // the default holds both rows back
		{1, []int64{1, 2, 0}, 1}, // one row may wait: the second makes two
	} {
		release := make(chan struct{})
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte("slow")) {
				<-release
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}`)
		}))
		proxy, rec, out := startProxy(t, up.URL, func(c *capture.Config) { c.ReorderRows = tc.reorder })
		first := make(chan error, 1)
		go func() {
			_, err := postChat(proxy, "slow request here")
			first <- err
		}()
		// The slow request has its id once the recorder counted it.
		for deadline := time.Now().Add(10 * time.Second); rec.Stats().Requests < 1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first request never reached the proxy")
			}
		}
		for _, s := range []string{"fast one", "fast two"} {
			if _, err := postChat(proxy, s); err != nil {
				t.Fatal(err)
			}
		}
		// Both fast rows are settled: written, or held back for the first.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if st := rec.Stats(); st.Held+st.Recorded == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the fast rows were never settled: %+v", rec.Stats())
			}
		}
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		var got []int64
		for line := range strings.Lines(out.String()) {
			var row struct {
				RequestID int64 `json:"request_id"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			got = append(got, row.RequestID)
		}
		if !slices.Equal(got, tc.want) || rec.Stats().Late != tc.late {
			t.Errorf("ReorderRows %d: request_ids %v, late %d; want %v, late %d", tc.reorder, got, rec.Stats().Late, tc.want, tc.late)
		}
		up.Close()
	}
}

// postChat sends a one-message chat request and returns its status.
func postChat(proxy, content string) (int, error) {
	body := `{"model": "m", "messages": [{"role": "user", "content": "` + content + `"}]}`
	resp, err := http.Post(proxy+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestRecordLlamaCppFixture: the bytes llama.cpp's server sent for chat
// (streamed and not) and completions (text and token ids) requests,
// recorded through the proxy (testdata/llamacpp, README.md there), give
// the rows the proxy wrote then: the server's prompt counts, the 27 tokens
// its chat template adds (0 for completions), the endpoint and the block
// size. r50k_base is the GPT-2 vocabulary of the server's model.
func TestRecordLlamaCppFixture(t *testing.T) {
	type exchange struct {
		Path        string          `json:"path"`
		Request     json.RawMessage `json:"request"`
		Status      int             `json:"status"`
		ContentType string          `json:"content_type"`
		Response    string          `json:"response"`
	}
	data, err := os.ReadFile("testdata/llamacpp/exchanges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var exchanges []exchange
	for line := range strings.Lines(string(data)) {
		var e exchange
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		exchanges = append(exchanges, e)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for _, e := range exchanges {
			if e.Path == r.URL.Path && bytes.Equal(compactJSON(t, e.Request), compactJSON(t, body)) {
				w.Header().Set("Content-Type", e.ContentType)
				w.WriteHeader(e.Status)
				io.WriteString(w, e.Response)
				return
			}
		}
		http.Error(w, "no such exchange in the fixture", http.StatusNotFound)
	}))
	defer up.Close()
	tok, err := tokenizer.Load("r50k_base")
	if err != nil {
		t.Fatal(err)
	}
	proxy, rec, out := startProxy(t, up.URL, func(c *capture.Config) { c.Tokenizer = tok })
	for _, e := range exchanges {
		resp, err := http.Post(proxy+e.Path, "application/json", bytes.NewReader(e.Request))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != e.Response {
			t.Fatalf("%s: the proxy changed the response:\n%s\nwant\n%s", e.Path, got, e.Response)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/llamacpp/trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withoutTimestamps(t, string(want)), withoutTimestamps(t, out.String())); diff != "" {
		t.Errorf("recorded rows (-llama.cpp recording +now):\n%s", diff)
	}
}

func compactJSON(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withoutTimestamps returns the rows of a trace as maps, timestamp left out
// (a recording's own timing).
func withoutTimestamps(t *testing.T, s string) []map[string]any {
	var rows []map[string]any
	for line := range strings.Lines(s) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "timestamp")
		rows = append(rows, m)
	}
	return rows
}

// endlessStream is an upstream whose chat stream never ends: an event
// every millisecond until the client goes away.
func endlessStream(t *testing.T) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := io.WriteString(w, `data: {"choices": [{"delta": {"content": " tok"}}]}`+"\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	t.Cleanup(up.Close)
	return up
}

// cancelMidStream sends a streamed chat request through proxy, reads its
// first event and goes away.
func cancelMidStream(t *testing.T, proxy string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"model": "m", "stream": true, "max_tokens": 500, "messages": [{"role": "user", "content": "go on forever"}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, proxy+"/v1/chat/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
}

// TestRecordCloseAfterClientCancel: a client that goes away mid-stream
// (ReverseProxy then panics with http.ErrAbortHandler) does not keep
// Close waiting (issue 37, item 5).
func TestRecordCloseAfterClientCancel(t *testing.T) {
	proxy, rec, _ := startProxy(t, endlessStream(t).URL, nil)
	cancelMidStream(t, proxy)
	closed := make(chan error, 1)
	go func() { closed <- rec.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // a hang, not a timing: Close waits for nothing but the cancelled exchange
		t.Fatal("Close never returned after a client cancelled its stream")
	}
}

// TestRecordLeavesOutCancelledStreams: a stream the client cancelled is
// not written as a complete row (its output length would be what was
// sent before the client left); it is counted in Stats.Cancelled, and a
// stream the upstream cut short counts as not recorded (issue 37, item 8).
func TestRecordLeavesOutCancelledStreams(t *testing.T) {
	proxy, rec, out := startProxy(t, endlessStream(t).URL, nil)
	cancelMidStream(t, proxy)
	// An upstream that ends its stream without finishing it.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, `data: {"choices": [{"delta": {"content": " tok"}}]}`+"\n\n")
	}))
	defer cut.Close()
	proxy2, rec2, out2 := startProxy(t, cut.URL, nil)
	postChat(proxy2, "cut short")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec2.Close(); err != nil {
		t.Fatal(err)
	}
	if st := rec.Stats(); out.Len() != 0 || st.Recorded != 0 || st.Cancelled != 1 || st.Skipped != 0 {
		t.Errorf("cancelled stream: stats %+v, trace %q", st, out.String())
	}
	if st := rec2.Stats(); out2.Len() != 0 || st.Recorded != 0 || st.Cancelled != 0 || st.Skipped != 1 {
		t.Errorf("cut stream: stats %+v, trace %q", st, out2.String())
	}
}

// TestRecordForwardsWhatTheClientSent: the upstream gets the client's
// request as sent plus the client's address appended to X-Forwarded-For,
// the Accept-Encoding the client asked for and no other (a gzip response
// passes through compressed, and is still recorded), and an HTTP/2
// preface, which the proxy cannot forward, is refused without reaching the
// upstream (issue 37, item 9).
func TestRecordForwardsWhatTheClientSent(t *testing.T) {
	type seen struct{ xff, enc []string }
	got := make(chan seen, 8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got <- seen{r.Header.Values("X-Forwarded-For"), r.Header.Values("Accept-Encoding")}
		w.Header().Set("Content-Type", "application/json")
		body := `{"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}`
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, body)
			zw.Close()
			return
		}
		io.WriteString(w, body)
	}))
	defer up.Close()
	proxy, rec, out := startProxy(t, up.URL, nil)
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}} // sends exactly the headers given
	send := func(h http.Header) *http.Response {
		t.Helper()
		body := `{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`
		req, _ := http.NewRequest(http.MethodPost, proxy+"/v1/chat/completions", strings.NewReader(body))
		maps.Copy(req.Header, h)
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := send(http.Header{"X-Forwarded-For": {"10.1.2.3"}})
	resp.Body.Close()
	if s := <-got; !slices.Equal(s.xff, []string{"10.1.2.3, 127.0.0.1"}) || s.enc != nil {
		t.Errorf("upstream saw X-Forwarded-For %q, Accept-Encoding %q; want the client's address appended, no encoding", s.xff, s.enc)
	}
	resp = send(http.Header{"Accept-Encoding": {"gzip"}})
	zipped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if s := <-got; !slices.Equal(s.xff, []string{"127.0.0.1"}) || !slices.Equal(s.enc, []string{"gzip"}) {
		t.Errorf("upstream saw X-Forwarded-For %q, Accept-Encoding %q", s.xff, s.enc)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || len(zipped) < 2 || zipped[0] != 0x1f || zipped[1] != 0x8b {
		t.Errorf("the gzip response was not passed on as sent: %q %q", resp.Header.Get("Content-Encoding"), zipped)
	}
	// An HTTP/2 connection preface (h2c with prior knowledge).
	conn, err := net.Dial("tcp", strings.TrimPrefix(proxy, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	status, _ := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if !strings.HasPrefix(status, "HTTP/1.1 505 ") {
		t.Errorf("an HTTP/2 preface got %q, want 505 HTTP Version Not Supported", status)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		t.Errorf("the HTTP/2 preface reached the upstream: %+v", s)
	default:
	}
	if st := rec.Stats(); st.Recorded != 2 {
		t.Errorf("%d rows recorded, want 2 (the gzip response too):\n%s", st.Recorded, out.String())
	}
}

// TestRecordBounds: the bytes held for recording, the time a body takes
// to arrive and the time a keep-alive connection stays idle are bounded
// (issue 37, item 6).
func TestRecordBounds(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan string, 8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		arrived <- r.URL.Path
		if bytes.Contains(body, []byte("slow")) {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}`)
	}))
	defer up.Close()
	proxy, rec, _ := startProxy(t, up.URL, func(c *capture.Config) {
		c.MaxHeldBytes, c.BodyTimeout, c.IdleTimeout = 1000, 50*time.Millisecond, 50*time.Millisecond
	})
	pad := strings.Repeat("x", 800)

	t.Run("held bytes", func(t *testing.T) {
		first := make(chan int, 1)
		go func() {
			code, _ := postChat(proxy, "slow "+pad)
			first <- code
		}()
		<-arrived // its 800 bytes are held until it is recorded
		if code, err := postChat(proxy, "second "+pad); err != nil || code != http.StatusServiceUnavailable {
			t.Errorf("a body over the bytes held: status %d (%v), want 503", code, err)
		}
		close(release)
		if code := <-first; code != 200 {
			t.Fatalf("first request: status %d", code)
		}
		for deadline := time.Now().Add(10 * time.Second); rec.Stats().Recorded < 1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first request was never recorded")
			}
		}
		if code, err := postChat(proxy, "third "+pad); err != nil || code != 200 {
			t.Errorf("once the first was recorded: status %d (%v), want 200", code, err)
		}
		if n := len(arrived); n != 1 { // the third; the second never reached the upstream
			t.Errorf("%d more requests reached the upstream, want 1", n)
		}
		for len(arrived) > 0 {
			<-arrived
		}
	})

	raw := func(t *testing.T, req string) *bufio.Reader {
		conn, err := net.Dial("tcp", strings.TrimPrefix(proxy, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang, not a timing: the bounds are 50 ms
		io.WriteString(conn, req)
		return bufio.NewReader(conn)
	}
	t.Run("body timeout", func(t *testing.T) {
		br := raw(t, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":")
		if status, err := br.ReadString('\n'); !strings.HasPrefix(status, "HTTP/1.1 408 ") {
			t.Errorf("a body that stops coming: %q (%v), want 408", status, err)
		}
		if len(arrived) != 0 {
			t.Error("the slow body reached the upstream")
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		br := raw(t, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		<-arrived
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("an idle keep-alive connection: read %v, want EOF (closed by the proxy)", err)
		}
	})
}
