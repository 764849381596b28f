package reprise

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// fixtureServer answers each "METHOD /path" with the recorded HTTP
// responses of testdata/servercontrol (what llama-server and
// llm-d-inference-sim sent; README.md there), one after the other, the
// last one repeatedly; other requests get 404.
func fixtureServer(t *testing.T, answers map[string][]string) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	served := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		mu.Lock()
		files := answers[key]
		i := served[key]
		served[key]++
		mu.Unlock()
		if len(files) == 0 {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join("testdata", "servercontrol", files[min(i, len(files)-1)]))
		if err != nil {
			t.Error(err)
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), r)
		if err != nil {
			t.Errorf("fixture %s: %v", files[i], err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		for k, v := range resp.Header {
			if k != "Content-Length" && k != "Connection" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestWaitForModelRealServers: the readiness probes against what the two
// real servers answered: llama.cpp's 503 "Loading model" on /health and
// /v1/models while it loads is waited out; an answer that never changes
// ends at the timeout with that answer in the error; 401 ends at once.
func TestWaitForModelRealServers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string][]string
		mode    string
		model   string
		polls   int    // on success
		wantErr string // "" = ready
		final   bool
	}{
		{name: "llama.cpp health while loading", mode: WaitHealth, model: "tiny", polls: 3,
			answers: map[string][]string{"GET /health": {"ll_health_loading.http", "ll_health_loading.http", "ll_health_ready.http"}}},
		{name: "llama.cpp models while loading", mode: WaitModels, model: "tiny", polls: 2,
			answers: map[string][]string{"GET /v1/models": {"ll_models_loading.http", "ll_models.http"}}},
		{name: "llama.cpp inference", mode: WaitInference, model: "tiny", polls: 1,
			answers: map[string][]string{"POST /v1/chat/completions": {"ll_inference.http"}}},
		{name: "both", mode: WaitBoth, model: "tiny", polls: 3,
			answers: map[string][]string{"GET /v1/models": {"ll_models_loading.http", "ll_models.http"}, "POST /v1/chat/completions": {"ll_inference.http"}}},
		{name: "simulator health", mode: WaitHealth, model: "tiny", polls: 1,
			answers: map[string][]string{"GET /health": {"sim_health.http"}}},
		{name: "never loads", mode: WaitHealth, model: "tiny",
			answers: map[string][]string{"GET /health": {"ll_health_loading.http"}}, wantErr: "last answer: GET /health: 503 Loading model"},
		{name: "another model", mode: WaitModels, model: "other",
			answers: map[string][]string{"GET /v1/models": {"sim_models.http"}}, wantErr: `GET /v1/models: 200 without "other" (serves tiny)`},
		{name: "simulator wrong model", mode: WaitInference, model: "other",
			answers: map[string][]string{"POST /v1/chat/completions": {"sim_inference_wrong_model.http"}}, wantErr: "404 The model `other` does not exist."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fixtureServer(t, tc.answers)
			timeout := time.Minute
			if tc.wantErr != "" {
				timeout = 500 * time.Millisecond
			}
			err := WaitForModel(context.Background(), ServerTarget{URL: srv.URL, Model: tc.model}, tc.mode, timeout, 20*time.Millisecond, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, ok := errors.AsType[*NotReadyError](err)
			if !ok || !strings.Contains(err.Error(), tc.wantErr) || e.Polls < 1 || e.Final != tc.final {
				t.Fatalf("err = %v; want a NotReadyError with %q", err, tc.wantErr)
			}
		})
	}
	t.Run("polls", func(t *testing.T) {
		var n int
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			if k < 4 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, `{"status":"ok"}`)
		}))
		defer srv.Close()
		if err := WaitForModel(context.Background(), ServerTarget{URL: srv.URL, Model: "m"}, WaitHealth, time.Minute, time.Millisecond, nil); err != nil || n != 4 {
			t.Fatalf("err %v after %d polls; want ready at the 4th", err, n)
		}
	})
	t.Run("401 is final", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"Invalid API key"}}`)
		}))
		defer srv.Close()
		err := WaitForModel(context.Background(), ServerTarget{URL: srv.URL, Model: "m"}, WaitModels, time.Hour, time.Hour, nil)
		e, ok := errors.AsType[*NotReadyError](err)
		if !ok || !e.Final || e.Polls != 1 || !strings.Contains(err.Error(), "401 Invalid API key (check --api-key") {
			t.Fatalf("err = %v; want a final NotReadyError after one poll", err)
		}
	})
}

// TestWaitForModelDeadServer: nothing listens at the port: the wait ends
// at its timeout saying so (connection refused), not with a vague
// timeout; a cancelled context ends it at once.
func TestWaitForModelDeadServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	err = WaitForModel(context.Background(), ServerTarget{URL: u, Model: "m"}, WaitModels, 500*time.Millisecond, 20*time.Millisecond, nil)
	if _, ok := errors.AsType[*NotReadyError](err); !ok || !strings.Contains(err.Error(), "connection refused (nothing listens at") {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitForModel(ctx, ServerTarget{URL: u, Model: "m"}, WaitModels, time.Hour, time.Hour, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	// Through Run: the options' wait comes first and nothing is created.
	o := NewOptions()
	o.URL, o.Model = u, "m"
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Server = ServerControlOptions{WaitForModel: 200 * time.Millisecond, WaitMode: WaitHealth, WaitInterval: 20 * time.Millisecond}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("Run: err = %v", err)
	}
	if _, err := os.Stat(o.Output.Dir); !os.IsNotExist(err) {
		t.Errorf("run directory created: %v", err)
	}
}

// TestResetCacheRealServers: neither real server has a cache reset; the
// error names every answer and says what to do for that server.
func TestResetCacheRealServers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string][]string
		want    []string
	}{
		{"llama.cpp", map[string][]string{"POST /reset_prefix_cache": {"ll_reset_prefix_cache.http"}, "POST /flush_cache": {"ll_flush_cache.http"}},
			[]string{"POST /reset_prefix_cache: 404 File Not Found", "POST /flush_cache: 404 File Not Found", "llama.cpp's server has no prefix-cache reset: restart it"}},
		{"simulator", map[string][]string{"POST /reset_prefix_cache": {"sim_reset_prefix_cache.http"}, "POST /flush_cache": {"sim_flush_cache.http"}},
			[]string{"POST /reset_prefix_cache: 404 Not Found", "POST /flush_cache: 404 Not Found", "VLLM_SERVER_DEV_MODE=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fixtureServer(t, tc.answers)
			_, err := ResetServerCache(context.Background(), ServerTarget{URL: srv.URL, Model: "tiny"}, "", 0)
			if _, ok := errors.AsType[*ServerControlError](err); !ok {
				t.Fatalf("err = %v; want a ServerControlError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v; want %q in it", err, w)
				}
			}
		})
	}
	t.Run("profiler", func(t *testing.T) {
		srv := fixtureServer(t, map[string][]string{"POST /start_profile": {"ll_start_profile.http"}})
		err := profilerCall(context.Background(), ServerTarget{URL: srv.URL}, true)
		if err == nil || !strings.Contains(err.Error(), "llama.cpp's server has no profiler endpoint") {
			t.Fatalf("err = %v", err)
		}
		srv = fixtureServer(t, map[string][]string{"POST /start_profile": {"sim_start_profile.http"}})
		err = profilerCall(context.Background(), ServerTarget{URL: srv.URL}, true)
		if err == nil || !strings.Contains(err.Error(), "VLLM_TORCH_PROFILER_DIR") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestResetCacheEmptiesMock: a first run fills the mock's prefix cache
// (every prompt shares a 256-token system prompt); the second, with
// ResetCache, POSTs /reset_prefix_cache before its first request, which
// drops those blocks: the cache is empty when the second run's first
// request arrives (its cached_tokens in the oracle log is 0) while its
// later requests hit the prefix that first request cached. SGLang's
// path empties it too.
func TestResetCacheEmptiesMock(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 0 })
	run := func(reset bool) {
		t.Helper()
		o := NewOptions()
		o.URL, o.Model = srv.URL(), mockserver.DefaultModel
		o.Synthetic = SyntheticLoad{ISL: 300, OSL: 2, SharedPrefix: 256}
		o.Replay.Concurrency, o.Replay.RequestCount = 1, 4
		o.Output.Dir = filepath.Join(t.TempDir(), "run")
		o.Telemetry.EndpointMetrics = false
		o.Server.ResetCache = reset
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	run(false)
	if srv.CachedBlocks() == 0 {
		t.Fatal("the first run cached nothing: the test proves nothing")
	}
	srv.ResetLog()
	run(true)
	ctl := srv.Controls()
	if len(ctl) != 1 || ctl[0].Kind != mockserver.ControlResetPrefixCache || ctl[0].Dropped == 0 || ctl[0].InFlight != 0 {
		t.Fatalf("controls = %+v; want one reset that dropped the first run's blocks with nothing in flight", ctl)
	}
	logs := srv.Log()
	if len(logs) != 4 {
		t.Fatalf("%d requests logged, want 4", len(logs))
	}
	for _, l := range logs {
		if l.ReceivedNS <= ctl[0].ReceivedNS {
			t.Errorf("request %d arrived before the reset", l.Seq)
		}
	}
	first := logs[0]
	for _, l := range logs {
		if l.Seq < first.Seq {
			first = l
		}
	}
	if first.CachedTokens != 0 {
		t.Errorf("the first request after the reset found %d cached tokens; want 0", first.CachedTokens)
	}
	hits := 0
	for _, l := range logs {
		if l.Seq != first.Seq && l.CachedTokens > 0 {
			hits++
		}
	}
	if hits != 3 {
		t.Errorf("%d of the 3 later requests hit the shared prefix; want 3", hits)
	}
	r, err := ResetServerCache(context.Background(), ServerTarget{URL: srv.URL()}, "/flush_cache", 0)
	if err != nil || r.Path != "/flush_cache" || r.Status != 200 || srv.CachedBlocks() != 0 {
		t.Fatalf("flush_cache: %+v, %v, %d blocks left", r, err, srv.CachedBlocks())
	}
}

// TestServerProfilerAroundRun: with Profiler, the mock sees
// /start_profile before the first request and /stop_profile after the
// last one ended.
func TestServerProfilerAroundRun(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	o := NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Synthetic = SyntheticLoad{ISL: 20, OSL: 4}
	o.Replay.Concurrency, o.Replay.RequestCount = 2, 6
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Telemetry.EndpointMetrics = false
	o.Server.Profiler = true
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ctl := srv.Controls()
	if len(ctl) != 2 || ctl[0].Kind != mockserver.ControlStartProfile || ctl[1].Kind != mockserver.ControlStopProfile || ctl[1].InFlight != 0 {
		t.Fatalf("controls = %+v; want start, then stop with nothing in flight", ctl)
	}
	for _, l := range srv.Log() {
		if l.ReceivedNS <= ctl[0].ReceivedNS || l.EndNS >= ctl[1].ReceivedNS {
			t.Errorf("request %d [%d, %d] outside the profile [%d, %d]", l.Seq, l.ReceivedNS, l.EndNS, ctl[0].ReceivedNS, ctl[1].ReceivedNS)
		}
	}
}
