package report

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
)

// TestAssetsPinned checks the vendored uPlot files against
// assets/SHA256SUMS: what the report embeds is what was reviewed.
func TestAssetsPinned(t *testing.T) {
	f, err := os.Open(filepath.Join("assets", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	embedded := map[string]string{"uPlot.iife.min.js": uplotJS, "uPlot.min.css": uplotCSS, "LICENSE.uPlot": uplotLicense}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q: want \"SUM  NAME\"", sc.Text())
		}
		body, ok := embedded[name]
		if !ok {
			t.Errorf("SHA256SUMS names %s, which the package does not embed", name)
			continue
		}
		got := sha256.Sum256([]byte(body))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS pins %s", name, got, sum)
		}
		n++
	}
	if n != len(embedded) {
		t.Errorf("SHA256SUMS pins %d of the %d vendored files", n, len(embedded))
	}
	if !strings.Contains(uplotJS, "(v1.6.32)") || !strings.Contains(uplotLicense, "MIT License") {
		t.Error("assets: not uPlot 1.6.32 with its MIT licence")
	}
}

// TestCDFAt compares the grid CDF with counting by hand.
func TestCDFAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, 1000)
	for i := range vals {
		vals[i] = math.Round(rng.ExpFloat64()*100) + 1 // ties included
	}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	grid := logGrid(sorted[0]/1.05, sorted[len(sorted)-1], 50)
	got := cdfAt(sorted, grid)
	for i, x := range grid {
		n := 0
		for _, v := range vals {
			if v <= x {
				n++
			}
		}
		if want := 100 * float64(n) / float64(len(vals)); got[i] != want {
			t.Errorf("CDF at %g = %g, want %g", x, got[i], want)
		}
	}
	if got[0] != 0 || got[len(got)-1] != 100 {
		t.Errorf("CDF runs from %g to %g, want 0 to 100", got[0], got[len(got)-1])
	}
	if g := logGrid(1, 1000, 4); len(g) != 4 || g[0] != 1 || g[3] != 1000 || math.Abs(g[1]-10) > 1e-9 {
		t.Errorf("logGrid(1, 1000, 4) = %v", g)
	}
}

// TestSpread checks that spreading keeps every token and splits a
// request across buckets in proportion to its time in each.
func TestSpread(t *testing.T) {
	b := newBuckets(69.5)
	if b.n != 70 || b.width != 1 {
		t.Fatalf("newBuckets(69.5) = %+v, want 70 buckets of 1 s", b)
	}
	sums := make([]float64, b.n)
	b.spread(sums, 0.5, 3.5, 300) // 100 tokens/s: 50, 100, 100, 50
	b.spread(sums, 5.2, 5.7, 40)  // inside one bucket
	want := []float64{50, 100, 100, 50, 0, 40, 0, 0, 0, 0}
	for i := range want {
		if math.Abs(sums[i]-want[i]) > 1e-9 {
			t.Errorf("bucket %d = %g, want %g (all %v)", i, sums[i], want[i], sums)
		}
	}
	for _, c := range []struct{ span, width float64 }{
		{10 * MaxBuckets, 10}, // 3600 buckets of 10 s
		{59, 1},               // 59 buckets
		{20, 0.5},             // 40
		{5, 0.1},              // 50 (0.2 s gives 25)
		{0.1, 0.01},           // the finest: 10
	} {
		if w := newBuckets(c.span).width; w != c.width {
			t.Errorf("a run of %g s gets %g s buckets, want %g", c.span, w, c.width)
		}
	}
	// Integer bucketing: a time on an edge falls in the later bucket.
	fine := newBuckets(5)
	if k := fine.at(1000, 1000+100_000_000); k != 1 {
		t.Errorf("0.1 s into 0.1 s buckets: bucket %d, want 1", k)
	}
	if k := fine.at(1000, 0); k != -1 {
		t.Errorf("a time that did not happen: bucket %d, want -1", k)
	}
}

// TestStride checks the sample's bound, order and reach.
func TestStride(t *testing.T) {
	for _, c := range []struct{ n, limit, want int }{
		{10, 100, 5},           // all 5 kept items
		{1000, 100, 100},       // 500 kept, every 5th
		{1000, 300, 250},       // 500 kept, every 2nd
		{100001, 20000, 16667}, // 50001 kept, every 3rd
	} {
		got := stride(c.n, c.limit, func(i int) bool { return i%2 == 0 })
		if len(got) != c.want || len(got) > c.limit {
			t.Errorf("stride(%d, %d): %d items, want %d", c.n, c.limit, len(got), c.want)
		}
		if !slices.IsSorted(got) || got[0] != 0 || got[len(got)-1] < c.n-c.n/c.limit*2-2 {
			t.Errorf("stride(%d, %d): from %d to %d, want the whole run in order", c.n, c.limit, got[0], got[len(got)-1])
		}
	}
}

// reportData extracts the chart data block of a report.
func reportData(t *testing.T, html []byte) chartDataJSON {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script id="report-data" type="application/json">(.*?)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no report-data block in the report")
	}
	var d chartDataJSON
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("report-data: %v", err)
	}
	return d
}

type chartDataJSON struct {
	Charts []struct {
		ID     string     `json:"id"`
		X      []*float64 `json:"x"`
		Series []struct {
			Label string     `json:"label"`
			X     []*float64 `json:"x"`
			Y     []*float64 `json:"y"`
		} `json:"series"`
		Shade []Span `json:"shade"`
	} `json:"charts"`
}

func build(t *testing.T, opts Options, dirs ...string) []byte {
	t.Helper()
	var runs []*arrowio.RunReader
	for _, d := range dirs {
		r, err := arrowio.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	var b bytes.Buffer
	if err := Build(&b, runs, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBuild checks what a report says of a synthetic run whose numbers
// are known: its verdicts, the rate it was sent at, its CDFs, its warmup
// and its error kinds, and that a caller's section comes after the
// summary.
func TestBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := synthRun{n: 2000, rate: 100, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, errEvery: 10, warmup: 100,
		telemetry: true, seed: 9}.write(t, dir)
	extra := Section{Title: "Compare", Explain: "A caller's section.", Tables: []Table{{Header: []string{"a"}, Rows: [][]Cell{Text("x")}}},
		Charts: []Chart{{ID: "extra", Title: "Extra", Kind: Lines, X: Values{1, 2}, Series: []Series{{Label: "l", Y: Values{3, math.NaN()}}}}}}
	html := build(t, Options{Sections: []Section{extra}}, dir)
	page := string(html)

	// 10 % of requests failed: over the manifest's max_error_rate 0.05,
	// so exit code 3.
	if !strings.Contains(page, `<td class="bad">3 (goodput SLO or error rate failed)</td>`) {
		t.Error("verdicts: want exit code 3 for a 10 % error rate")
	}
	if !strings.Contains(page, `<td class="bad">10 % (190 failed) · limit: ≤ 5 % (--max-error-rate 0.05)</td>`) {
		t.Errorf("verdicts: want the error rate failed; %d errors in the summary", s.ErrorRequestCount)
	}
	// Lateness and read lag of tens of µs against a 5 ms ITL: the
	// measurement is good.
	if !strings.Contains(page, `<td class="good">good</td>`) {
		t.Error("verdicts: want measurement quality good")
	}
	order := []string{`id="verdicts"`, `id="summary"`, `id="compare"`, `id="latency"`, `id="load"`, `id="truth"`, `id="telemetry"`, `id="errors"`, `id="provenance"`}
	last := -1
	for _, id := range order {
		i := strings.Index(page, id)
		if i < last {
			t.Errorf("section %s is out of order (want %v)", id, order)
		}
		last = i
	}
	if strings.Contains(page, "https://") && !strings.Contains(page, "https://github.com/leeoniya/uPlot") {
		t.Error("the report links to the network")
	}
	for _, banned := range []string{"<script src", "<link "} {
		if strings.Contains(page, banned) {
			t.Errorf("the report loads an outside file (%s)", banned)
		}
	}

	d := reportData(t, html)
	charts := map[string]int{}
	for i, c := range d.Charts {
		charts[c.ID] = i
	}
	rate := d.Charts[charts["rate"]]
	if rate.Series[0].Label != "run intended" {
		t.Fatalf("rate series 0 is %q", rate.Series[0].Label)
	}
	// 100 requests/s in 0.5 s buckets (a 20 s run), every bucket but the
	// last (partly filled).
	for k, v := range rate.Series[0].Y[:19] {
		if v == nil || *v != 100 {
			t.Errorf("intended rate in bucket %d = %v, want 100", k, v)
		}
	}
	cdf := d.Charts[charts["cdf-ttft"]]
	ys := cdf.Series[0].Y
	if *ys[0] != 0 || *ys[len(ys)-1] != 100 || len(ys) != CDFPoints {
		t.Errorf("TTFT CDF: %d points from %v to %v, want %d from 0 to 100", len(ys), *ys[0], *ys[len(ys)-1], CDFPoints)
	}
	// Warmup: 100 requests at 100/s, shaded from 0 to about 1 s + their
	// latency.
	sh := d.Charts[charts["ttft-vs-time"]].Shade
	if len(sh) != 1 || sh[0].From > 0.001 || sh[0].To < 0.99 || sh[0].To > 3.5 {
		t.Errorf("warmup shade %+v, want one from 0 to about 1-3 s", sh)
	}
	var kinds []string
	for _, s := range d.Charts[charts["ttft-vs-time"]].Series {
		kinds = append(kinds, s.Label)
	}
	if want := []string{"run ok", "run timeout", "run http_status", "run reset"}; !slices.Equal(kinds, want) {
		t.Errorf("ttft-vs-time series %v, want %v", kinds, want)
	}
	for _, id := range []string{"server-running", "server-kv-usage", "server-hit-rate", "gpu-power", "errors-by-kind", "extra"} {
		if _, ok := charts[id]; !ok {
			t.Errorf("no chart %s", id)
		}
	}
	// The hit ratio of consecutive scrapes: (500+200·sin)/1000 in %.
	for i, y := range d.Charts[charts["server-hit-rate"]].Series[0].Y {
		if y == nil || *y < 30 || *y > 70 {
			t.Errorf("hit ratio point %d = %v, want 30..70 %%", i, y)
			break
		}
	}
	// The server's TTFT histogram mean between scrapes: 80 % of 20 ms.
	cs := d.Charts[charts["client-server-ttft"]]
	if len(cs.Series) != 2 || cs.Series[1].Label != "run server" {
		t.Fatalf("client-server-ttft series %+v, want client and server", cs.Series)
	}
	for i, y := range cs.Series[1].Y {
		if y == nil || math.Abs(*y-16) > 1e-9 {
			t.Errorf("server TTFT mean point %d = %v, want 16 ms", i, y)
			break
		}
	}
	if ex := d.Charts[charts["extra"]].Series[0].Y; ex[1] != nil {
		t.Errorf("NaN written as %v, want null", *ex[1])
	}
}

// TestBuildOverlay checks that two runs get a series each, their own
// colours and labels, and unique labels for equal directory names.
func TestBuildOverlay(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "x", "run"), filepath.Join(tmp, "y", "run")
	synthRun{n: 500, rate: 100, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, seed: 1}.write(t, a)
	synthRun{n: 500, rate: 100, ttft: 40 * time.Millisecond, itl: 5 * time.Millisecond, seed: 2}.write(t, b)
	d := reportData(t, build(t, Options{}, a, b))
	for _, c := range d.Charts {
		if c.ID != "pct-ttft" {
			continue
		}
		if len(c.Series) != 2 || c.Series[0].Label != "run" || c.Series[1].Label != "run#2" {
			t.Fatalf("pct-ttft series %+v, want run and run#2", c.Series)
		}
		// p50 of 20 ms + 2 µs/token · U(100, 4100) + Exp(5 ms) against
		// the same with 40 ms: 20 ms apart.
		if diff := *c.Series[1].Y[0] - *c.Series[0].Y[0]; diff < 17 || diff > 23 {
			t.Errorf("p50 difference %g ms, want about 20", diff)
		}
		return
	}
	t.Fatal("no pct-ttft chart")
}

// TestBuildErrors checks the errors Build returns.
func TestBuildErrors(t *testing.T) {
	if err := Build(&bytes.Buffer{}, nil, Options{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: %v", err)
	}
	empty := t.TempDir()
	r, _ := arrowio.Open(empty)
	if err := Build(&bytes.Buffer{}, []*arrowio.RunReader{r}, Options{}); !errors.Is(err, arrowio.ErrNoTable) || !strings.Contains(err.Error(), empty) {
		t.Errorf("a directory without records: %v, want ErrNoTable naming it", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	synthRun{n: 50, rate: 100, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, seed: 1}.write(t, dir)
	run, _ := arrowio.Open(dir)
	for name, c := range map[string]Chart{
		"duplicate ID":   {ID: "rate", Kind: Lines, X: Values{1}, Series: []Series{{Y: Values{1}}}},
		"short series":   {ID: "a", Kind: Lines, X: Values{1, 2}, Series: []Series{{Y: Values{1}}}},
		"scatter x":      {ID: "b", Kind: Scatter, Series: []Series{{X: Values{1}, Y: Values{1, 2}}}},
		"bar categories": {ID: "c", Kind: Bars, XAxis: Axis{Categories: []string{"p"}}, Series: []Series{{Y: Values{1, 2}}}},
		"steps own x":    {ID: "d", Kind: Steps, Series: []Series{{X: Values{1}, Y: Values{1}}}},
	} {
		err := Build(&bytes.Buffer{}, []*arrowio.RunReader{run}, Options{Sections: []Section{{Title: "t", Charts: []Chart{c}}}})
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzValuesJSON checks that Values always marshal to a JSON array that
// reads back to the values within five significant digits, non-finite
// ones as null.
func FuzzValuesJSON(f *testing.F) {
	f.Add(1.5, -2.25e-7, 3e300)
	f.Add(math.NaN(), math.Inf(1), 0.0)
	f.Add(123456789.0, 1e15, math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, a, b, c float64) {
		in := Values{a, b, c}
		out, err := in.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back []*float64
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%v → %s: %v", in, out, err)
		}
		if len(back) != len(in) {
			t.Fatalf("%v → %s", in, out)
		}
		for i, v := range in {
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				if back[i] != nil {
					t.Errorf("%v → %v, want null", v, *back[i])
				}
			case back[i] == nil:
				t.Errorf("%v → null", v)
			case math.Abs(*back[i]-v) > 5e-5*math.Abs(v):
				t.Errorf("%v → %v: more than 5 significant digits off", v, *back[i])
			}
		}
	})
}

// BenchmarkBuild measures the report of a 100,000-request run with
// telemetry (TestBuild checks what it builds); bytes/op is the report's
// size.
func BenchmarkBuild(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	synthRun{n: 100000, rate: 1000, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, errEvery: 1000, warmup: 1000,
		telemetry: true, seed: 4}.write(b, dir)
	run, err := arrowio.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		if err := Build(&buf, []*arrowio.RunReader{run}, Options{}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB/report")
}

// TestBuildKilledRun reports a run killed before its manifest and
// summary were written: the records alone give the charts (not the
// streaming-only ones: as for reprise summarize, nothing says the run
// streamed), and the verdicts say the limits are not recorded.
func TestBuildKilledRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	synthRun{n: 300, rate: 100, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, errEvery: 10, seed: 5}.write(t, dir)
	for _, f := range []string{arrowio.ManifestFile, arrowio.SummaryFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	html := string(build(t, Options{}, dir))
	if !strings.Contains(html, "limit: not recorded in the manifest") || !strings.Contains(html, `data-chart="cdf-e2e"`) {
		t.Error("a run without manifest and summary: want charts and unjudged limits")
	}
}
