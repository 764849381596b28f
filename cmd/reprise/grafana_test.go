package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/telemetry"
)

// dashboardPath is the Grafana dashboard these tests check.
const dashboardPath = "../../deploy/grafana/reprise.json"

// dashboardPanel is the part of a Grafana panel the tests read.
type dashboardPanel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
}

// dashboardExprs reads the dashboard and returns its panels.
func dashboardPanels(t *testing.T) []dashboardPanel {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string           `json:"uid"`
		Title      string           `json:"title"`
		Panels     []dashboardPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, %d panels", dashboardPath, d.UID, d.Title, len(d.Panels))
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	for _, want := range []string{"datasource", "run_id", "server"} {
		if !slices.Contains(vars, want) {
			t.Errorf("%s: no template variable %q (has %v)", dashboardPath, want, vars)
		}
	}
	return d.Panels
}

// grafanaVars are the values the tests give the dashboard's variables.
func grafanaVars(expr, runID string) string {
	return strings.NewReplacer("$__rate_interval", "1m", "$__range", "1h", "$__interval", "1m",
		"$run_id", runID, "${run_id}", runID, "$server", ".+", "${server}", ".+").Replace(expr)
}

// The PromQL lexemes that are not metric names.
var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\[\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promNumber   = regexp.MustCompile(`(^|[^A-Za-z0-9_:])[0-9][0-9A-Za-z_.]*`) // numbers and durations (5m, 1e3, 0x1f)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
		"and", "or", "unless", "inf", "nan", "Inf", "NaN"}
)

// promMetrics returns the metric names a PromQL expression selects:
// with strings, label matchers, ranges, grouping lists and numbers taken out,
// every identifier that is not a function or a keyword.
func promMetrics(expr string) []string {
	e := promString.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, "")
	e = promRange.ReplaceAllString(e, "")
	e = promGrouping.ReplaceAllString(e, "")
	e = promNumber.ReplaceAllString(e, "${1}0")
	var out []string
	for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
		name := m[0]
		if m[1] != "" || slices.Contains(promKeywords, name) {
			continue // a function or aggregation, or a keyword
		}
		out = append(out, name)
	}
	return out
}

func TestPromMetrics(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{instance=~"a{b}"}[1m])))`,
			[]string{"vllm:time_to_first_token_seconds_bucket"}},
		{`sum(rate(a_total{x="y"}[5m])) / on (job) group_left (z) sum(b) > bool 0 offset 5m`, []string{"a_total", "b"}},
		{`count(up)`, []string{"up"}},
		{`sum without (le) (rate(x_bucket[1m] offset 1m)) or vector(0)`, []string{"x_bucket"}},
	} {
		if got := promMetrics(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("promMetrics(%s) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// repriseFamilies is every family a run's live metrics export, by name.
func repriseFamilies(t *testing.T) map[string]dto.MetricType {
	t.Helper()
	m := livemetrics.New(livemetrics.Config{RunID: "r", Targets: []livemetrics.Target{{URL: "u", Model: "m"}}, Streaming: true, Go: true})
	m.SetIntendedRate(func() (float64, bool) { return 1, true })
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dto.MetricType{}
	for _, f := range fams {
		out[f.GetName()] = f.GetType()
	}
	return out
}

// knownMetric reports whether a name in a query is a series of a family
// reprise exports, or of a server family internal/telemetry knows.
func knownMetric(name string, reprise map[string]dto.MetricType) bool {
	if _, ok := reprise[name]; ok {
		return true
	}
	if role, _ := telemetry.Role(name); role != "" {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if reprise[base] == dto.MetricType_HISTOGRAM {
			return true
		}
		if role, _ := telemetry.Role(base); role != "" {
			return true
		}
	}
	return false
}

// TestGrafanaDashboard reads deploy/grafana/reprise.json: every panel
// has queries, every query names only metrics reprise exports or that
// internal/telemetry knows of vLLM, SGLang and llama.cpp, and the
// dashboard has client panels and each server's.
func TestGrafanaDashboard(t *testing.T) {
	panels := dashboardPanels(t)
	reprise := repriseFamilies(t)
	if !knownMetric(livemetrics.NameTTFT+"_bucket", reprise) || knownMetric("vllm:no_such_metric", reprise) ||
		knownMetric(livemetrics.NameRequests+"_bucket", reprise) {
		t.Fatal("knownMetric does not tell known names from unknown ones")
	}
	seen := map[string]bool{} // by prefix
	ids := map[int]bool{}
	for _, p := range panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d is not unique", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v does not fit 24 columns", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no queries", p.Title)
		}
		for _, q := range p.Targets {
			names := promMetrics(q.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q, query %s: %q names no metric", p.Title, q.RefID, q.Expr)
			}
			for _, n := range names {
				if !knownMetric(n, reprise) {
					t.Errorf("panel %q, query %s: %s is neither a reprise metric (docs/format/live-metrics.md) nor a server metric of internal/telemetry/families.go", p.Title, q.RefID, n)
				}
				prefix, _, found := strings.Cut(n, ":")
				if !found {
					prefix, _, _ = strings.Cut(n, "_")
				}
				seen[prefix] = true
			}
		}
	}
	for _, want := range []string{"reprise", "vllm", "sglang", "llamacpp", "process"} {
		if !seen[want] {
			t.Errorf("no panel queries %s's metrics", want)
		}
	}
}
