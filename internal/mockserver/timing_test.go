package mockserver

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestTimingModel(t *testing.T) {
	m := timing{ttft: 50 * time.Millisecond, prefill: 100 * time.Microsecond, itl: 10 * time.Millisecond, perRunning: time.Millisecond}
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"ttft without prompt", m.firstToken(0, nil), 50 * time.Millisecond},
		{"ttft with 300 uncached tokens", m.firstToken(300, nil), 80 * time.Millisecond},
		{"itl alone", m.interToken(1, nil), 10 * time.Millisecond},
		{"itl with 4 others", m.interToken(5, nil), 14 * time.Millisecond},
		{"itl with a bogus count", m.interToken(0, nil), 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	const j = 2 * time.Millisecond
	for _, dist := range []JitterDist{JitterUniform, JitterNormal, JitterExponential} {
		jm := timing{itl: 10 * time.Millisecond, jitter: j, dist: dist}
		rng := rand.New(rand.NewPCG(1, 2))
		var sum time.Duration
		const n = 20000
		for range n {
			d := jm.interToken(1, rng)
			sum += d
			switch {
			case d < 0:
				t.Fatalf("%s: negative delay %v", dist, d)
			case dist == JitterUniform && (d < 8*time.Millisecond || d > 12*time.Millisecond):
				t.Fatalf("uniform: %v outside 10ms ± 2ms", d)
			case dist == JitterExponential && d < 10*time.Millisecond:
				t.Fatalf("exponential: %v below the base", d)
			}
		}
		mean := sum / n
		want := 10 * time.Millisecond
		if dist == JitterExponential {
			want += j
		}
		if diff := mean - want; diff < -100*time.Microsecond || diff > 100*time.Microsecond {
			t.Errorf("%s: mean %v, want %v", dist, mean, want)
		}
	}
	// Jitter never makes a delay negative.
	zero := timing{jitter: time.Second, dist: JitterNormal}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		if d := zero.firstToken(0, rng); d < 0 {
			t.Fatalf("negative TTFT %v", d)
		}
	}
}

// TestScheduleExact checks the latency model's schedule as the oracle
// records it (Event.DueNS): exact arithmetic, independent of machine load.
func TestScheduleExact(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.TTFT, c.PrefillPerToken, c.ITL = 7*time.Millisecond, 100*time.Microsecond, 3*time.Millisecond
	})
	body := `{"prompt":[` + strings.TrimSuffix(strings.Repeat("7,", 40), ",") + `],"max_tokens":6,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	mustDo(t, s, "POST", "/v1/completions", body)
	mustDo(t, s, "POST", "/v1/completions", body)
	var late []time.Duration
	for i, l := range logOf(t, s) {
		wantTTFT := 7*time.Millisecond + time.Duration(40-l.CachedTokens)*100*time.Microsecond
		var dues []int64
		for _, e := range l.Events {
			if e.DueNS == 0 || e.StartNS < e.DueNS || e.TimeNS < e.StartNS {
				t.Fatalf("request %d: event %v written in [%d, %d], due %d: no schedule, written early, or ending before it began",
					i, e.Kind, e.StartNS, e.TimeNS, e.DueNS)
			}
			late = append(late, time.Duration(e.TimeNS-e.DueNS))
			if e.Kind == EventContent {
				dues = append(dues, e.DueNS)
			}
		}
		if got := time.Duration(dues[0] - l.AdmittedNS); got != wantTTFT {
			t.Errorf("request %d (cached %d): first token due %v after admission, want %v", i, l.CachedTokens, got, wantTTFT)
		}
		for k := 1; k < len(dues); k++ {
			if d := time.Duration(dues[k] - dues[k-1]); d != 3*time.Millisecond {
				t.Errorf("request %d: token %d due %v after the previous, want 3ms", i, k, d)
			}
		}
		if i == 1 && l.CachedTokens != 32 {
			t.Errorf("second request cached %d tokens, want 32", l.CachedTokens)
		}
	}
	slices.Sort(late)
	t.Logf("server write lateness over %d events: p50 %v, max %v", len(late), late[len(late)/2], late[len(late)-1])
}

// attempt runs f until it returns nil, at most n times. Wall-clock checks
// get a few tries. If all fail on a machine whose timers are late (the
// median lateness of 1 ms sleeps is over 500 µs), or where the server's own
// log shows writes more than 2 ms after they were due (vCPU preemption on
// an oversubscribed VM), the deviation is the machine's, not the model's:
// the test is skipped with the numbers. TestScheduleExact checks the model
// itself without the clock.
func attempt(t *testing.T, n int, f func() (maxLate time.Duration, err error)) {
	t.Helper()
	var err error
	var late time.Duration
	for range n {
		if late, err = f(); err == nil {
			return
		}
		t.Logf("retrying: %v (server lateness up to %v)", err, late)
	}
	if noise := timerNoise(); noise > 500*time.Microsecond || late > 2*time.Millisecond {
		t.Skipf("this machine is too noisy for the tolerance: timers late by %v (median of 1ms sleeps), "+
			"server writes up to %v after their due time: %v", noise, late, err)
	}
	t.Error(err)
}

// maxLateness is the largest t_ns − due_ns in logs.
func maxLateness(logs []RequestLog) time.Duration {
	var m time.Duration
	for _, l := range logs {
		for _, e := range l.Events {
			if e.DueNS != 0 {
				m = max(m, time.Duration(e.TimeNS-e.DueNS))
			}
		}
	}
	return m
}

// timerNoise returns the median lateness of 1 ms sleeps.
func timerNoise() time.Duration {
	late := make([]time.Duration, 21)
	for i := range late {
		start := time.Now()
		time.Sleep(time.Millisecond)
		late[i] = time.Since(start) - time.Millisecond
	}
	slices.Sort(late)
	return late[len(late)/2]
}

// TestTimingFromEventLog checks the served timing against the configured
// model at low load, read from the server's own truth (the event log): the
// median TTFT within 2 ms of the configured 50 ms and the mean ITL within
// 1 ms of 10 ms. Deadlines are absolute, so the ITL mean carries only the
// lateness of two writes divided by 31. On a loaded machine a run may be
// retried twice.
func TestTimingFromEventLog(t *testing.T) {
	const body = `{"messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":32,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	attempt(t, 3, func() (time.Duration, error) {
		s := startServer(t, func(c *Config) { c.TTFT, c.ITL = DefaultTTFT, DefaultITL })
		for range 3 {
			mustDo(t, s, "POST", "/v1/chat/completions", body)
		}
		var ttfts []time.Duration
		logs := logOf(t, s)
		late := maxLateness(logs)
		for _, l := range logs {
			times := l.TokenTimes(nil, 0)
			if len(times) != 32 {
				t.Fatalf("%d token events, want 32", len(times))
			}
			ttft := time.Duration(l.FirstTokenNS() - l.ReceivedNS)
			if ttft < DefaultTTFT {
				t.Fatalf("TTFT %v is earlier than the configured %v", ttft, DefaultTTFT)
			}
			ttfts = append(ttfts, ttft)
			itl := time.Duration(times[31]-times[0]) / 31
			if d := itl - DefaultITL; d < -time.Millisecond || d > time.Millisecond {
				return late, fmt.Errorf("mean ITL %v, want %v ± 1ms", itl, DefaultITL)
			}
		}
		slices.Sort(ttfts)
		if med := ttfts[1]; med-DefaultTTFT > 2*time.Millisecond {
			return late, fmt.Errorf("median TTFT %v, want %v + at most 2ms (all %v)", med, DefaultTTFT, ttfts)
		}
		return late, nil
	})
}

// TestPrefillAndCacheTiming: the measured TTFT follows base + prefill per
// uncached token, and cached tokens skip prefill; a non-streamed body is
// written when its last token is due. The server never writes early, so
// lower bounds are exact; upper bounds allow 2 ms of lateness.
func TestPrefillAndCacheTiming(t *testing.T) {
	ids := strings.TrimSuffix(strings.Repeat("7,", 40), ",")
	body := `{"prompt":[` + ids + `],"max_tokens":1,"stream":true}`
	attempt(t, 3, func() (time.Duration, error) {
		s := startServer(t, func(c *Config) { c.TTFT = 5 * time.Millisecond; c.PrefillPerToken = time.Millisecond })
		mustDo(t, s, "POST", "/v1/completions", body)
		mustDo(t, s, "POST", "/v1/completions", body)
		logs := logOf(t, s)
		late := maxLateness(logs)
		for i, want := range []time.Duration{45 * time.Millisecond, 13 * time.Millisecond} { // 5 + 40, then 5 + (40-32)
			got := time.Duration(logs[i].FirstTokenNS() - logs[i].AdmittedNS)
			if got < want {
				t.Fatalf("request %d: TTFT %v earlier than %v", i, got, want)
			}
			if got > want+2*time.Millisecond {
				return late, fmt.Errorf("request %d (cached %d): TTFT from admission %v, want %v", i, logs[i].CachedTokens, got, want)
			}
		}
		s2 := startServer(t, func(c *Config) { c.TTFT = 5 * time.Millisecond; c.ITL = 2 * time.Millisecond })
		mustDo(t, s2, "POST", "/v1/completions", `{"prompt":"x","max_tokens":11,"ignore_eos":true}`)
		l := logOf(t, s2)[0]
		late = max(late, maxLateness([]RequestLog{l}))
		got, want := time.Duration(l.EndNS-l.AdmittedNS), 25*time.Millisecond
		if got < want {
			t.Fatalf("non-streamed body after %v, earlier than %v", got, want)
		}
		if got > want+2*time.Millisecond {
			return late, fmt.Errorf("non-streamed body after %v, want %v (TTFT + 10 ITL)", got, want)
		}
		return late, nil
	})
}

// TestAdmissionFIFO runs the admission queue in virtual time: max 2
// running, the rest admitted in arrival order as slots free up, and a
// cancelled waiter leaves the queue.
func TestAdmissionFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(2)
		var mu sync.Mutex
		var order []int
		done := make([]chan struct{}, 6)
		ctxs := make([]context.Context, 6)
		cancels := make([]context.CancelFunc, 6)
		for i := range 6 {
			done[i] = make(chan struct{})
			ctxs[i], cancels[i] = context.WithCancel(t.Context())
			go func() {
				if !a.acquire(ctxs[i]) {
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				<-done[i]
				a.release()
			}()
			synctest.Wait() // i is running or queued before i+1 arrives
		}
		if r, w := a.counts(); r != 2 || w != 4 {
			t.Fatalf("running %d waiting %d, want 2 and 4", r, w)
		}
		cancels[3]() // 3 gives up while queued
		synctest.Wait()
		if r, w := a.counts(); r != 2 || w != 3 {
			t.Fatalf("after a cancel: running %d waiting %d, want 2 and 3", r, w)
		}
		for _, i := range []int{1, 0, 2, 4, 5} {
			close(done[i])
			synctest.Wait()
		}
		if want := []int{0, 1, 2, 4, 5}; !slices.Equal(order, want) {
			t.Errorf("admission order %v, want %v", order, want)
		}
		if r, w := a.counts(); r != 0 || w != 0 {
			t.Errorf("at the end: running %d waiting %d", r, w)
		}
		for _, c := range cancels {
			c()
		}
	})
}

// TestConcurrentClients hammers the server from many clients with
// max-num-seqs 4 and checks every answer and, from the oracle, that never
// more than 4 requests ran at once.
func TestConcurrentClients(t *testing.T) {
	const maxSeqs = 4
	s := startServer(t, func(c *Config) {
		c.MaxNumSeqs = maxSeqs
		c.TTFT, c.ITL = 2*time.Millisecond, 500*time.Microsecond
	})
	bodies := []struct{ path, body string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"one two three"}],"max_tokens":5,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"one two three"}],"max_tokens":5,"ignore_eos":true}`},
		{"/v1/completions", `{"prompt":"one two three","max_tokens":5,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/completions", `{"prompt":[1,2,3],"max_tokens":5,"ignore_eos":true}`},
	}
	const clients, each = 16, 6
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				b := bodies[(c+i)%len(bodies)]
				r, err := do(t, s, "POST", b.path, b.body, RequestIDHeader, fmt.Sprintf("c%d-%d", c, i))
				if err != nil || r.err != nil || r.status != 200 {
					t.Errorf("client %d request %d: %v %v %d", c, i, err, r.err, r.status)
					return
				}
				if u := streamUsage(t, r.body, strings.Contains(b.body, `"stream":true`)); u.CompletionTokens != 5 {
					t.Errorf("client %d request %d: usage %+v", c, i, u)
				}
			}
		})
	}
	wg.Wait()
	logs := logOf(t, s)
	if len(logs) != clients*each {
		t.Fatalf("%d log entries, want %d", len(logs), clients*each)
	}
	ids := map[string]bool{}
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	queued := 0
	for _, l := range logs {
		ids[l.ClientRequestID] = true
		edges = append(edges, edge{l.AdmittedNS, 1}, edge{l.EndNS, -1})
		if l.AdmittedNS-l.ReceivedNS > int64(time.Millisecond) {
			queued++
		}
	}
	if len(ids) != clients*each {
		t.Errorf("%d distinct request ids echoed, want %d", len(ids), clients*each)
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta // ends before starts at the same instant
	})
	running, peak := 0, 0
	for _, e := range edges {
		running += e.delta
		peak = max(peak, running)
	}
	if peak > maxSeqs {
		t.Errorf("%d requests ran at once, max-num-seqs is %d", peak, maxSeqs)
	}
	if queued == 0 {
		t.Error("16 clients on 4 slots never queued")
	}
}

// TestMetricsUnderLoad: 12 long streams on 8 slots show as 8 running and 4
// waiting, as in the recorded metrics_under_load fixtures.
func TestMetricsUnderLoad(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor; c.MaxNumSeqs = 8; c.ITL = 20 * time.Millisecond })
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				mustDo(t, s, "POST", "/v1/completions", `{"prompt":"x","max_tokens":60,"ignore_eos":true,"stream":true}`)
			})
		}
		want := map[Flavor][]string{
			FlavorVLLM:     {`vllm:num_requests_running{model_name="reprise-mock"} 8`, `vllm:num_requests_waiting{model_name="reprise-mock"} 4`},
			FlavorLlamaCPP: {"llamacpp:requests_processing 8", "llamacpp:requests_deferred 4"},
		}[flavor]
		var m string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			m = string(mustDo(t, s, "GET", "/metrics", "").body)
			if strings.Contains(m, want[0]+"\n") && strings.Contains(m, want[1]+"\n") {
				break
			}
		}
		if !strings.Contains(m, want[0]+"\n") || !strings.Contains(m, want[1]+"\n") {
			t.Errorf("%s: metrics never showed %q:\n%s", flavor, want, m)
		}
		wg.Wait()
	}
}

// TestCoalesce: with Config.Coalesce, events due together share one write
// (and one oracle time); events of later steps still get their own.
func TestCoalesce(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor; c.Coalesce = true; c.ITL = 2 * time.Millisecond })
		r := mustDo(t, s, "POST", "/v1/chat/completions", faultChat)
		if u := streamUsage(t, r.body, true); u.CompletionTokens != 10 {
			t.Fatalf("%s: usage %+v", flavor, u)
		}
		l := lastLog(t, s)
		byTime := map[int64][]EventKind{}
		for _, e := range l.Events {
			if e.TimeNS == 0 {
				t.Fatalf("%s: event %v without a write time", flavor, e.Kind)
			}
			byTime[e.TimeNS] = append(byTime[e.TimeNS], e.Kind)
		}
		// role+token 1, tokens 2..9 alone, token 10+finish+usage+done.
		if len(byTime) != 10 {
			t.Errorf("%s: %d distinct write times, want 10: %v", flavor, len(byTime), byTime)
		}
		first, last := l.Events[0], l.Events[len(l.Events)-1]
		if l.Events[1].TimeNS != first.TimeNS || len(byTime[last.TimeNS]) != 4 {
			t.Errorf("%s: role and first token not written together, or the end not coalesced: %v", flavor, byTime)
		}
	}
}

// TestClientGoneFreesSlot: a client that leaves mid-stream or while queued
// frees its slot at once; Close ends streams in flight.
func TestClientGoneFreesSlot(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor; c.MaxNumSeqs = 1; c.ITL = 50 * time.Millisecond })
		long := `{"prompt":"x","max_tokens":1000,"ignore_eos":true,"stream":true}`
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/v1/completions", strings.NewReader(long))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
		// A second request queues behind the first; a third gives up while queued.
		ctx3, cancel3 := context.WithCancel(t.Context())
		go func() {
			req3, _ := http.NewRequestWithContext(ctx3, "POST", s.URL()+"/v1/completions", strings.NewReader(long))
			if r, err := http.DefaultClient.Do(req3); err == nil {
				r.Body.Close()
			}
		}()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, w := s.adm.counts(); w == 1 {
				break
			}
		}
		cancel3()
		cancel() // the first client leaves mid-stream
		resp.Body.Close()
		r := mustDo(t, s, "POST", "/v1/completions", `{"prompt":"x","max_tokens":2,"ignore_eos":true}`)
		if r.status != 200 {
			t.Fatalf("%s: after the clients left: status %d", flavor, r.status)
		}
		logs := logOf(t, s)
		gone := 0
		for _, l := range logs {
			if l.Error != "" && l.FinishReason == "" {
				gone++
			}
		}
		if len(logs) != 3 || gone != 2 {
			t.Errorf("%s: %d log entries, %d cut short; want 3 and 2", flavor, len(logs), gone)
		}
		if run, wait := s.adm.counts(); run != 0 || wait != 0 {
			t.Errorf("%s: running %d waiting %d after everything ended", flavor, run, wait)
		}

		// Close while a stream is in flight returns promptly.
		go func() {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL()+"/v1/completions", strings.NewReader(long))
			if r, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if run, _ := s.adm.counts(); run == 1 {
				break
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: close: %v", flavor, err)
		}
	}
}
