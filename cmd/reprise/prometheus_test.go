package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// prometheusPath finds Prometheus: $REPRISE_PROMETHEUS, else prometheus
// on PATH. The test fails without it, as the report's browser test does
// without Chromium: make test installs Debian's prometheus package
// (scripts/need-tools.sh).
func prometheusPath(t *testing.T) string {
	if p := os.Getenv("REPRISE_PROMETHEUS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	t.Fatal("no prometheus for the live-metrics test: install it (Debian/Ubuntu: apt-get install prometheus; " +
		"make test does this when run as root) or set REPRISE_PROMETHEUS to its binary")
	return ""
}

// promServer is a Prometheus the test started.
type promServer struct {
	base string
}

// startPrometheus starts Prometheus with a temporary storage directory,
// scraping targets every 200 ms, and waits until it is ready.
func startPrometheus(t *testing.T, targets ...string) *promServer {
	t.Helper()
	bin := prometheusPath(t)
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, a := range targets {
		quoted[i] = strconv.Quote(a)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n"+
		"  - job_name: reprise\n    static_configs:\n      - targets: [%s]\n", strings.Join(quoted, ", "))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p := &promServer{base: "http://" + addr}
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus exited before it was ready: %v\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
	}
}

// eval runs an instant PromQL query at time at and returns how many
// series it gave, or Prometheus's error (a query it cannot parse).
func (p *promServer) eval(t *testing.T, q string, at time.Time) (int, string) {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q) + "&time=" + strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if r.Status != "success" {
		return 0, r.Status + ": " + r.Error
	}
	return len(r.Data.Result), ""
}

// lastSample returns the time of the latest sample of the series sel
// selects (over the last hour).
func (p *promServer) lastSample(t *testing.T, sel string) time.Time {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(sel+"[1h]"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s[1h]: %v", sel, err)
	}
	var last float64
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			if ts, ok := v[0].(float64); ok && ts > last {
				last = ts
			}
		}
	}
	if last == 0 {
		t.Fatalf("query %s[1h]: no sample", sel)
	}
	return time.Unix(0, int64(last*1e9))
}

// query runs an instant PromQL query and returns its one value, or false
// when the result is empty.
func (p *promServer) query(t *testing.T, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s: %s", q, err, r.Error, b)
	}
	switch len(r.Data.Result) {
	case 0:
		return 0, false
	case 1:
	default:
		t.Fatalf("query %s: %d series, want one: %s", q, len(r.Data.Result), b)
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %q: %v", q, s, err)
	}
	return v, true
}

// TestPrometheusScrapesReplay replays against the mock server in two
// shards, each serving --metrics-addr, lets a real Prometheus scrape
// them, and checks through Prometheus's HTTP API that the sum over the
// shards is the run: the request count and the TTFT histogram (count,
// sum and every bucket) equal what the two run directories' records and
// summaries say.
func TestPrometheusScrapesReplay(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 3 * time.Millisecond })
	addrs := []string{freeAddr(t), freeAddr(t)}
	prom := startPrometheus(t, addrs...)
	root := t.TempDir()
	var runID string
	var want struct {
		ok, errs, ttftCount int
		ttftSum             float64
		buckets             []int
		out                 int64
	}
	want.buckets = make([]int, len(livemetrics.LatencyBuckets))
	for i, addr := range addrs {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "16", "--osl", "8",
			"--request-rate", "40", "--concurrency", "3", "--request-count", "30", "--warmup-requests", "2", "--shard", fmt.Sprintf("%d/2", i),
			"--no-server-metrics", "--format", "jsonl", "--quiet", "-o", dir,
			"--metrics-addr", addr, "--metrics-linger", "10m")
		if code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, stderr)
		}
		rr, err := arrowio.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			RunID string `json:"run_id"`
		}
		mb, err := rr.Manifest()
		if err != nil || json.Unmarshal(mb, &m) != nil || m.RunID == "" {
			t.Fatalf("shard %d: manifest run_id: %v %s", i, err, mb)
		}
		if runID != "" && m.RunID != runID {
			t.Fatalf("shard %d: run_id %s, shard 0's %s", i, m.RunID, runID)
		}
		runID = m.RunID
		// summary.json (docs/format/summary.md): every entry a
		// {"unit", "avg", …, "count"}.
		type entry struct {
			Count int     `json:"count"`
			Avg   float64 `json:"avg"`
			Sum   float64 `json:"sum"`
		}
		var raw map[string]json.RawMessage
		sb, err := rr.Summary()
		if err == nil {
			err = json.Unmarshal(sb, &raw)
		}
		s := map[string]entry{}
		for _, k := range []string{"request_count", "error_request_count", "time_to_first_token"} {
			var e entry
			if err == nil {
				err = json.Unmarshal(raw[k], &e)
			}
			s[k] = e
		}
		if err != nil {
			t.Fatalf("shard %d: summary.json: %v", i, err)
		}
		want.ok += int(s["request_count"].Avg)
		want.errs += int(s["error_request_count"].Avg)
		shardSum := want.ttftSum
		ttftCount := 0
		for r, err := range rr.Requests() {
			if err != nil {
				t.Fatal(err)
			}
			if r.Phase != record.PhaseProfile || !r.OK() || r.PlannedCancel() || r.FirstTokenNS == 0 {
				continue
			}
			v := float64(r.TTFTNS) / 1e9
			ttftCount++
			want.ttftSum += v
			for b, le := range livemetrics.LatencyBuckets {
				if v <= le {
					want.buckets[b]++
				}
			}
			want.out += r.OutputLength()
		}
		if st := s["time_to_first_token"]; ttftCount != st.Count || ttftCount == 0 || relDiff((want.ttftSum-shardSum)*1e3, st.Sum) > 1e-6 {
			t.Fatalf("shard %d: %d records with a TTFT summing to %v s; summary.json's count %d, sum %v ms", i, ttftCount, want.ttftSum-shardSum, st.Count, st.Sum)
		}
		want.ttftCount += ttftCount
	}
	if want.ok != 30 {
		t.Fatalf("the shards' summaries count %d requests, want 30", want.ok)
	}

	// The shards are gone: their last samples are read with
	// last_over_time, as a dashboard after the run reads them.
	sel := fmt.Sprintf(`{run_id=%q}`, runID)
	last := func(metric, extra string) string {
		s := sel
		if extra != "" {
			s = fmt.Sprintf(`{run_id=%q,%s}`, runID, extra)
		}
		return fmt.Sprintf("sum(last_over_time(%s%s[1h]))", metric, s)
	}
	value := func(q string) float64 {
		t.Helper()
		v, ok := prom.query(t, q)
		if !ok {
			t.Fatalf("query %s: no result", q)
		}
		return v
	}
	// Each shard lingered until a scrape begun after its end had been
	// answered; Prometheus may commit that scrape a moment later.
	for {
		if v, ok := prom.query(t, last(livemetrics.NameRequests, `phase="profile",outcome="ok"`)); ok && v == float64(want.ok) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	checks := []struct {
		name string
		q    string
		want float64
	}{
		{"failed requests", last(livemetrics.NameRequests, `phase="profile",outcome="error"`), float64(want.errs)},
		{"warmup requests", last(livemetrics.NameRequests, `phase="warmup"`), 2},
		{"TTFT count", last(livemetrics.NameTTFT+"_count", ""), float64(want.ttftCount)},
		{"output tokens", last(livemetrics.NameOutputTokens, ""), float64(want.out)},
	}
	for b, le := range livemetrics.LatencyBuckets {
		checks = append(checks, struct {
			name string
			q    string
			want float64
		}{fmt.Sprintf("TTFT bucket le=%v", le), last(livemetrics.NameTTFT+"_bucket", leMatch(le)), float64(want.buckets[b])})
	}
	if want.errs == 0 {
		// No failure: no error series exists at all (each is 0).
		checks[0].want = 0
	}
	for _, c := range checks {
		if got := value(c.q); got != c.want {
			t.Errorf("%s: Prometheus says %v (%s), the run directories %v", c.name, got, c.q, c.want)
		}
	}
	if got := value(last(livemetrics.NameTTFT+"_sum", "")); relDiff(got, want.ttftSum) > 1e-9 {
		t.Errorf("TTFT sum: Prometheus says %v s, the records %v s", got, want.ttftSum)
	}
	// Every query of the Grafana dashboard parses, and those of the
	// client's panels give series at the end of the run: at the last
	// scrape that reached a shard (a later, failed one marks the series
	// stale, and a dashboard then shows the run up to there).
	end := prom.lastSample(t, livemetrics.NameRunInfo+sel)
	for _, p := range dashboardPanels(t) {
		for _, q := range p.Targets {
			e := grafanaVars(q.Expr, runID)
			n, perr := prom.eval(t, e, end)
			if perr != "" {
				t.Errorf("panel %q, query %s: Prometheus refuses %s: %s", p.Title, q.RefID, e, perr)
				continue
			}
			client := true
			for _, name := range promMetrics(e) {
				client = client && (strings.HasPrefix(name, "reprise_") || strings.HasPrefix(name, "process_"))
			}
			if client && n == 0 {
				t.Errorf("panel %q, query %s: %s gives nothing at the end of the run", p.Title, q.RefID, e)
			}
		}
	}
	// Every shard was scraped, each with its own shard label.
	if got := value(fmt.Sprintf(`count(last_over_time(%s%s[1h]))`, livemetrics.NameRunInfo, sel)); got != 2 {
		t.Errorf("run info series: %v, want one per shard", got)
	}
}

// leMatch selects the bucket of upper bound le, as the text format
// spells it ("1") or as OpenMetrics does ("1.0").
func leMatch(le float64) string {
	s := strconv.FormatFloat(le, 'f', -1, 64)
	return fmt.Sprintf(`le=~%q`, strings.ReplaceAll(s, ".", `\.`)+`|`+strings.ReplaceAll(s, ".", `\.`)+`\.0`)
}

func relDiff(a, b float64) float64 {
	d := a - b
	if d < 0 {
		d = -d
	}
	if b == 0 {
		return d
	}
	if b < 0 {
		b = -b
	}
	return d / b
}

// TestMetricsAddrErrors: a malformed --metrics-addr, a negative linger
// and a port in use each exit 2 naming the flag, with nothing sent.
func TestMetricsAddrErrors(t *testing.T) {
	srv := startMockServer(t, nil)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-addr", "9464"}, `--metrics-addr "9464": want HOST:PORT`},
		{[]string{"--metrics-addr", ":0", "--metrics-linger", "-1s"}, "--metrics-linger -1s: want a duration ≥ 0"},
		{[]string{"--metrics-addr", busy.Addr().String()}, "--metrics-addr: listen " + busy.Addr().String()},
	} {
		args := append([]string{"replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "16", "--osl", "2",
			"--concurrency", "1", "--request-count", "3", "--no-server-metrics", "--quiet", "-o", filepath.Join(t.TempDir(), "run")}, c.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if n := len(srv.Log()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}
