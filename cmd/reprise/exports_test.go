package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/mlflow/mlflowtest"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// otlpCollector is an OTLP/HTTP receiver: it decodes every push with the
// OpenTelemetry Collector's own JSON unmarshaler and keeps it.
type otlpCollector struct {
	mu       sync.Mutex
	pushes   []pmetric.Metrics
	problems []string
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/json" {
		c.problems = append(c.problems, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		http.Error(w, "not OTLP/HTTP JSON", http.StatusBadRequest)
		return
	}
	md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(b)
	if err != nil {
		c.problems = append(c.problems, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.pushes = append(c.pushes, md)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, "{}")
}

// pointsOf returns the metrics of md by name.
func pointsOf(md pmetric.Metrics) map[string]pmetric.Metric {
	out := map[string]pmetric.Metric{}
	sm := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range sm.Len() {
		out[sm.At(i).Name()] = sm.At(i)
	}
	return out
}

// summaryAvg reads summary.json's avg of tag.
func summaryAvg(t *testing.T, dir, tag string) float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]struct {
		Avg   float64 `json:"avg"`
		Count int     `json:"count"`
	}
	json.Unmarshal(b, &s) // run_info and the lists do not fit: their keys stay zero
	v, ok := s[tag]
	if !ok {
		t.Fatalf("summary.json has no %s", tag)
	}
	return v.Avg
}

// TestProfileOTLPPush runs profile with --otel-url against an in-test
// collector: the final push holds the summary's values, under the
// resource attributes asked for, and --stream timing keeps only the
// progress metrics.
func TestProfileOTLPPush(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, stream := range []string{"default", "timing"} {
		t.Run(stream, func(t *testing.T) {
			c := &otlpCollector{}
			col := httptest.NewServer(c)
			defer col.Close()
			dir := filepath.Join(t.TempDir(), "run")
			code, _, stderr := runCLI(t, "", "profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--isl", "16", "--osl", "4",
				"--concurrency", "2", "--request-count", "12", "--artifact-dir", dir, "--no-server-metrics", "--ui-type", "none",
				"--otel-url", strings.TrimPrefix(col.URL, "http://"), "--stream", stream, "--gen-ai-provider", "vllm",
				"--otel-resource-attributes", "deployment.environment=ci,team=perf", "--otel-resource-attributes", "service.name=bench")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.problems) > 0 || len(c.pushes) == 0 {
				t.Fatalf("%d pushes; problems: %q", len(c.pushes), c.problems)
			}
			last := c.pushes[len(c.pushes)-1]
			res := last.ResourceMetrics().At(0).Resource().Attributes()
			for k, want := range map[string]string{"service.name": "bench", "deployment.environment": "ci", "team": "perf",
				"gen_ai.provider.name": "vllm", "gen_ai.system": "vllm", "gen_ai.request.model": mockserver.DefaultModel} {
				if v, ok := res.Get(k); !ok || v.Str() != want {
					t.Errorf("resource %s = %q, want %q", k, v.Str(), want)
				}
			}
			ms := pointsOf(last)
			requests := 0.0
			for _, p := range pointsAll(ms[livemetrics.NameRequests].Sum().DataPoints()) {
				if attr(p.Attributes(), "phase") == "profile" && attr(p.Attributes(), "outcome") == "ok" {
					requests += p.DoubleValue()
				}
			}
			if want := summaryAvg(t, dir, "request_count"); requests != want {
				t.Errorf("pushed %v requests, summary.json %v", requests, want)
			}
			_, hasE2E := ms[livemetrics.NameE2E]
			if stream == "timing" {
				if hasE2E {
					t.Errorf("--stream timing pushed %s", livemetrics.NameE2E)
				}
				return
			}
			e2e := ms[livemetrics.NameE2E].Histogram().DataPoints().At(0)
			if attr(e2e.Attributes(), "gen_ai.request.model") != mockserver.DefaultModel {
				t.Errorf("e2e point attributes %v", e2e.Attributes().AsRaw())
			}
			if want := summaryAvg(t, dir, "request_count"); float64(e2e.Count()) != want {
				t.Errorf("e2e count %d, summary.json %v", e2e.Count(), want)
			}
			mean := e2e.Sum() / float64(e2e.Count()) * 1000 // s → ms
			if want := summaryAvg(t, dir, "request_latency"); math.Abs(mean-want) > 1e-9*want {
				t.Errorf("e2e mean %v ms, summary.json %v", mean, want)
			}
			out := ms[livemetrics.NameOutputTokens].Sum().DataPoints().At(0).DoubleValue()
			if want := summaryAvg(t, dir, "total_osl"); out != want {
				t.Errorf("output tokens %v, summary.json %v", out, want)
			}
		})
	}
}

func pointsAll(ps pmetric.NumberDataPointSlice) []pmetric.NumberDataPoint {
	out := make([]pmetric.NumberDataPoint, ps.Len())
	for i := range ps.Len() {
		out[i] = ps.At(i)
	}
	return out
}

func attr(m pcommon.Map, k string) string {
	v, _ := m.Get(k)
	return v.Str()
}

// TestOTLPDeadCollector: a collector that is not there is warned about
// once, and the run ends as it would without it.
func TestOTLPDeadCollector(t *testing.T) {
	srv := startMockServer(t, nil)
	col := httptest.NewServer(http.NotFoundHandler())
	dead := col.URL
	col.Close()
	code, _, stderr := runCLI(t, "", "replay", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--isl", "16", "--osl", "2",
		"--concurrency", "1", "--request-count", "5", "--no-server-metrics", "--metrics-interval", "10ms",
		"-o", filepath.Join(t.TempDir(), "run"), "--otel-url", dead)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "OTLP push failed"); n != 1 {
		t.Errorf("%d warnings of the dead collector, want 1:\n%s", n, stderr)
	}
	if n := len(srv.Log()); n != 5 {
		t.Errorf("the mock logged %d requests, want 5", n)
	}
}

// TestExportFlagErrors: the flags of a family without its first flag,
// and bad values, exit 2 naming the flag; nothing is sent.
func TestExportFlagErrors(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--stream", "metrics"}, "--stream needs --otel-url"},
		{[]string{"--mlflow-experiment", "e"}, "--mlflow-experiment needs --mlflow-tracking-uri"},
		{[]string{"--otel-url", "grpc://c:4317"}, "--otel-url"},
		{[]string{"--otel-url", "c:4318", "--stream", "all"}, `--stream "all": want default, metrics or timing`},
		{[]string{"--otel-url", "c:4318", "--otel-resource-attributes", "novalue"}, `--otel-resource-attributes "novalue"`},
		{[]string{"--mlflow-tracking-uri", "file:///tmp/mlruns"}, "mlflow server"},
		{[]string{"--mlflow-tracking-uri", "c:5000", "--mlflow-tag", "novalue"}, `--mlflow-tag "novalue": want KEY:VALUE`},
		{[]string{"--wandb-project", "p"}, "wandb.log"},
	} {
		args := append([]string{"profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--isl", "16", "--osl", "2",
			"--request-count", "3", "--no-server-metrics", "--artifact-dir", filepath.Join(t.TempDir(), "run")}, c.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if n := len(srv.Log()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// TestProfileMLflow runs profile with --mlflow-* against the fake
// tracking server: one run in the experiment, FINISHED, with the
// summary's metrics, the manifest's options, the tags and the files.
func TestProfileMLflow(t *testing.T) {
	srv := startMockServer(t, nil)
	ml := mlflowtest.New()
	defer ml.Close()
	ml.Token = "tok"
	t.Setenv("MLFLOW_TRACKING_TOKEN", "tok")
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--isl", "16", "--osl", "4",
		"--concurrency", "2", "--request-count", "8", "--artifact-dir", dir, "--no-server-metrics", "--ui-type", "none",
		"--mlflow-tracking-uri", ml.URL, "--mlflow-experiment", "reprise-ci", "--mlflow-run-name", "smoke",
		"--mlflow-tag", "owner:perf", "--mlflow-tag", "env=ci", "--mlflow-parent-run-id", "p1", "--mlflow-artifact-glob", "*.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(ml.Problems) > 0 || len(ml.Runs) != 1 {
		t.Fatalf("%d runs; requests MLflow's API refuses: %q", len(ml.Runs), ml.Problems)
	}
	r := ml.Runs[0]
	if r.ExperimentID != ml.Experiment("reprise-ci") || r.Name != "smoke" || r.Status != "FINISHED" || r.EndTime < r.StartTime {
		t.Errorf("run %s in %s: %q, %s, %d–%d", r.ID, r.ExperimentID, r.Name, r.Status, r.StartTime, r.EndTime)
	}
	for k, v := range map[string]string{"owner": "perf", "env": "ci", "mlflow.parentRunId": "p1"} {
		if r.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, r.Tags[k], v)
		}
	}
	if r.Tags["reprise.run_id"] == "" {
		t.Error("no reprise.run_id tag")
	}
	if got, want := r.Metrics["request_count"], summaryAvg(t, dir, "request_count"); got != want || want != 8 {
		t.Errorf("request_count %v, summary.json %v", got, want)
	}
	if got, want := r.Metrics["request_latency_avg"], summaryAvg(t, dir, "request_latency"); got != want {
		t.Errorf("request_latency_avg %v, summary.json %v", got, want)
	}
	if r.Params["model"] != mockserver.DefaultModel {
		t.Errorf("param model = %q", r.Params["model"])
	}
	for _, f := range []string{"summary.json", "manifest.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Artifacts[f]) != string(b) {
			t.Errorf("artifact %s: %d bytes, the file %d", f, len(r.Artifacts[f]), len(b))
		}
	}
	for name := range r.Artifacts {
		if !strings.HasSuffix(name, ".json") {
			t.Errorf("artifact %s does not match --mlflow-artifact-glob *.json", name)
		}
	}
}

// TestMLflowDown: a tracking server that is not there is a warning; the
// run's exit code is the run's.
func TestMLflowDown(t *testing.T) {
	srv := startMockServer(t, nil)
	ml := mlflowtest.New()
	url := ml.URL
	ml.Close()
	code, _, stderr := runCLI(t, "", "replay", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--isl", "16", "--osl", "2",
		"--concurrency", "1", "--request-count", "3", "--no-server-metrics", "-o", filepath.Join(t.TempDir(), "run"),
		"--mlflow-tracking-uri", url)
	if code != 0 || !strings.Contains(stderr, "MLflow") {
		t.Errorf("exit %d, stderr %q; want 0 and a warning", code, stderr)
	}
}
