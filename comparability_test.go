package reprise_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/compare"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/report"
)

// writeTrace writes rows rows 5 ms apart of 4 blocks of 16 tokens: rows
// i and i+groups share their first two blocks (groups prefixes), the
// rest of every row is its own.
func writeTrace(t *testing.T, rows, groups int) string {
	t.Helper()
	var b strings.Builder
	for i := range rows {
		g := i % groups
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 64, "output_length": 2, "hash_ids": [%d, %d, %d, %d]}`+"\n",
			5*i, 1000+g, 2000+g, 10000+2*i, 10001+2*i)
	}
	p := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func inputsOptions(t *testing.T, url, tr string) reprise.Options {
	o := reprise.NewOptions()
	o.URL, o.Model, o.Trace.Path, o.Trace.BlockSize = url, mockserver.DefaultModel, tr, 16
	// Two scrapes: the baseline before the first request, the final one
	// after the last response.
	o.Telemetry.Interval = time.Hour
	o.Output.Dir, o.Output.Format = filepath.Join(t.TempDir(), "run"), "jsonl"
	return o
}

// A second client loads the mock while the run goes (started when the
// run starts, waited for before its final scrape): the run's summary says
// "shared server" with the server's count and its own.
func TestSharedServer(t *testing.T) {
	srv := startMock(t, 2*time.Millisecond, 1)
	tr := writeTrace(t, 20, 4)
	other := make(chan error, 1)
	o := inputsOptions(t, srv.URL(), tr)
	o.OnStart = func(reprise.Start) {
		go func() {
			q := inputsOptions(t, srv.URL(), writeTrace(t, 60, 6))
			q.Telemetry.EndpointMetrics = false
			q.Prompts.Seed = 99
			_, err := reprise.Run(context.Background(), q)
			other <- err
		}()
	}
	o.OnEnd = func() {
		if err := <-other; err != nil {
			t.Errorf("second client: %v", err)
		}
	}
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Summary.Comparability()
	if len(c.Servers) != 1 || !c.Servers[0].Shared || c.Servers[0].RequestsSent != 20 ||
		c.Servers[0].RequestsServed == nil || *c.Servers[0].RequestsServed != 80 {
		t.Fatalf("servers %+v; want shared, 80 served against 20 sent", c.Servers)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "80 requests served against 20 sent") {
		t.Errorf("warnings %q", c.Warnings)
	}
	js, err := os.ReadFile(filepath.Join(res.Dir, "summary.json"))
	if err != nil || !strings.Contains(string(js), `"shared": true`) {
		t.Errorf("summary.json lacks the check (%v)", err)
	}

	if page := reportOf(t, res.Dir); !strings.Contains(page, "not comparable: shared server") {
		t.Error("the report does not name the shared server")
	}

	// Alone on a fresh mock, the same run is not flagged.
	alone := inputsOptions(t, startMock(t, 2*time.Millisecond, 1).URL(), tr)
	res, err = reprise.Run(context.Background(), alone)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Summary.Comparability(); len(c.Warnings) != 0 || len(c.Servers) != 1 || c.Servers[0].Shared {
		t.Errorf("alone: %+v", c)
	}
}

// The same trace twice against one mock: the second run finds its fresh
// prompts cached and is flagged; a fresh prompt seed is not; priming the
// prefixes on a cold mock is not, and its expected cached tokens count
// the primed blocks.
func TestWarmPrefixCache(t *testing.T) {
	srv := startMock(t, 2*time.Millisecond, 1)
	tr := writeTrace(t, 24, 4)
	run := func(name string, o reprise.Options) *reprise.Result {
		t.Helper()
		res, err := reprise.Run(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	var second *reprise.Result
	warm := func(r *reprise.Result) bool {
		c := r.Summary.Comparability()
		return c.Cache != nil && c.Cache.Warm
	}
	first := run("first", inputsOptions(t, srv.URL(), tr))
	defer func() {
		// The report names the warm run as not comparable, not the first.
		page := reportOf(t, first.Dir, second.Dir)
		if n := strings.Count(page, "not comparable: warm prefix cache"); n != 1 {
			t.Errorf("report names %d runs warm, want 1", n)
		}
		// compare says why cache_hit_ratio changed between the two.
		a, err := compare.Load(context.Background(), first.Dir)
		if err != nil {
			t.Fatal(err)
		}
		b, err := compare.Load(context.Background(), second.Dir)
		if err != nil {
			t.Fatal(err)
		}
		cmp, err := compare.Compare(a, b, compare.NewConfig())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range cmp.Warnings {
			if strings.HasPrefix(w, "B "+second.Dir+": not comparable: warm prefix cache") {
				n++
			} else if strings.Contains(w, "not comparable") {
				t.Errorf("compare warns %q", w)
			}
		}
		if n != 1 {
			t.Errorf("compare warnings %q; want B named warm once", cmp.Warnings)
		}
	}()
	if c := first.Summary.Comparability(); c.Cache == nil || c.Cache.Warm || c.Cache.FreshRequests != 4 || len(c.Warnings) != 0 {
		t.Fatalf("first run: %+v %q; want a cold cache over the 4 rows that start a prefix", c.Cache, c.Warnings)
	}
	second = run("second", inputsOptions(t, srv.URL(), tr))
	c := second.Summary.Comparability()
	if !warm(second) || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "--prompt-seed") || !strings.Contains(c.Warnings[0], "--prime-prefixes") {
		t.Fatalf("second run: %+v %q; want it flagged warm with what to do", c.Cache, c.Warnings)
	}
	var b strings.Builder
	if err := second.Summary.WriteTable(&b); err != nil || !strings.Contains(b.String(), "WARNING: warm prefix cache") {
		t.Errorf("printed table lacks the warning (%v):\n%s", err, b.String())
	}
	fresh := inputsOptions(t, srv.URL(), tr)
	fresh.Prompts.Seed = 7
	if r := run("fresh seed", fresh); warm(r) {
		t.Errorf("fresh prompt seed: %+v", r.Summary.Comparability().Cache)
	}

	primed := inputsOptions(t, startMock(t, 2*time.Millisecond, 1).URL(), tr)
	primed.PrimePrefixes = true
	r := run("primed", primed)
	s := r.Summary
	if warm(r) || s.WarmupCount != 4 {
		t.Errorf("primed: warm %v, %d warmup records; want cold, the 4 prefixes primed", warm(r), s.WarmupCount)
	}
	// Every row's two shared blocks are cached (32 of 64 tokens), as the
	// expectation says: fidelity 1.
	if s.ExpectedCachedTokens != 24*32 || s.ServerCachedTokens != 24*32 {
		t.Errorf("primed: cached %d, expected %d; want %d both", s.ServerCachedTokens, s.ExpectedCachedTokens, 24*32)
	}
	if s.RequestCount != 24 {
		t.Errorf("primed: %d measured requests, want 24", s.RequestCount)
	}
}

// A fan-out run to two mocks: both servers' /metrics are scraped, each
// target's summary holds its own server, and the report has one header
// line and one series per target.
func TestSeveralTargetsReport(t *testing.T) {
	a, b := startMock(t, 2*time.Millisecond, 1), startMock(t, 20*time.Millisecond, 2)
	o := inputsOptions(t, a.URL(), writeTrace(t, 12, 3))
	o.Targets = []reprise.Target{{URL: b.URL()}}
	o.URLPolicy = reprise.URLPolicyFanOut
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Telemetry == nil || len(s.Telemetry.Servers) != 2 || len(s.Targets) != 2 {
		t.Fatalf("telemetry %+v, %d targets; want both servers scraped", s.Telemetry, len(s.Targets))
	}
	for tg, sub := range s.Targets {
		if sub.Telemetry == nil || len(sub.Telemetry.Servers) != 1 || !strings.HasPrefix(sub.Telemetry.Servers[0].Target, strings.TrimSuffix(sub.Run.URL, "/v1")) {
			t.Errorf("target %d (%s): servers %+v; want its own", tg, sub.Run.URL, sub.Telemetry)
		}
		if c := sub.Comparability(); len(c.Servers) != 1 || c.Servers[0].Shared || c.Servers[0].RequestsSent != 12 {
			t.Errorf("target %d: %+v; want 12 sent, not shared", tg, c.Servers)
		}
	}
	page := reportOf(t, res.Dir)
	for _, want := range []string{"<b>run #0</b> 12 requests", "<b>run #1</b> 12 requests", " at " + a.URL(), " at " + b.URL()} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// reportOf builds the report of the run directories, each labelled
// "run", and returns the page.
func reportOf(t *testing.T, dirs ...string) string {
	t.Helper()
	var rs []*arrowio.RunReader
	var labels []string
	for _, d := range dirs {
		rr, err := arrowio.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		rs, labels = append(rs, rr), append(labels, "run")
	}
	var html bytes.Buffer
	if err := report.Build(&html, rs, report.Options{Labels: labels}); err != nil {
		t.Fatal(err)
	}
	return html.String()
}
