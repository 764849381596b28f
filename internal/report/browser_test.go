package report

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reprise-bench/reprise/arrowio"
)

// updateScreenshot makes TestBrowserReports/small replay the demo's
// trace and write its report's screenshot to docs/img/report.png (the
// README's).
var updateScreenshot = flag.Bool("update-screenshot", false, "replay the demo trace and write its report's screenshot to docs/img/report.png")

// chromiumFlags start Chromium headless, with none of its background
// connections (a closed network refuses them, which shows as errors).
var chromiumFlags = []chromedp.ExecAllocatorOption{
	chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-dev-shm-usage", true),
	chromedp.Flag("hide-scrollbars", true),
	chromedp.WindowSize(1280, 900),
}

// chromiumPath finds Chromium: $REPRISE_CHROMIUM, else chromium,
// chromium-browser or google-chrome on PATH. The test fails without it:
// make test installs it (scripts/need-tools.sh).
func chromiumPath(t testing.TB) string {
	if p := os.Getenv("REPRISE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium for the report's browser test: install it (Debian/Ubuntu: apt-get install chromium; " +
		"make test does this when run as root) or set REPRISE_CHROMIUM to its binary")
	return ""
}

// browser is one headless Chromium for a test.
type browser struct {
	ctx context.Context
}

func newBrowser(t testing.TB) *browser {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(chromiumPath(t)),
		chromedp.UserDataDir(t.TempDir())}, chromiumFlags...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatalf("start chromium %s: %v", chromiumPath(t), err)
	}
	return &browser{ctx: ctx}
}

// chartCheck is what the page says of one chart after drawing.
type chartCheck struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"`
	Time     bool    `json:"time"` // x is seconds since the run's start
	Series   int     `json:"series"`
	NonEmpty int     `json:"nonEmpty"`
	Points   int     `json:"points"`
	Colored  int     `json:"colored"` // saturated pixels inside the plot area: series drawn
	SVGMarks int     `json:"svgMarks"`
	SVGOK    bool    `json:"svgOK"`
	PNG      bool    `json:"png"`
	XMin     float64 `json:"xMin"`
	XMax     float64 `json:"xMax"`
	End      float64 `json:"end"`    // a time chart's last activity (s)
	Labels   int     `json:"labels"` // labelled points
}

// pageCheck is the page's state after load.
type pageCheck struct {
	ReadyMS  float64      `json:"readyMs"`
	Figures  int          `json:"figures"`
	Charts   []chartCheck `json:"charts"`
	Sections []string     `json:"sections"`
	// ZoomFollowed: zooming the first time chart zoomed every other.
	ZoomFollowed bool `json:"zoomFollowed"`
	// Tiles are the headline's numbers as the page shows them.
	Tiles []tileCheck `json:"tiles"`
}

// tileCheck is one number of the headline as drawn.
type tileCheck struct {
	Metric string `json:"metric"`
	Value  string `json:"value"`
	Text   string `json:"text"`
}

// checkJS measures every chart in the page: its series and points, the
// coloured pixels of its canvas inside the plot area (grid, axes and
// the warmup shade are grey), and its SVG and PNG exports.
const checkJS = `(async () => {
  const r = window.reprise;
  const out = {readyMs: r.readyMs, figures: document.querySelectorAll("figure[data-chart]").length, charts: [],
    sections: [...document.querySelectorAll("main section")].map(s => s.id),
    tiles: [...document.querySelectorAll("#headline .tile")].map(e => ({metric: e.dataset.metric, value: e.dataset.value,
      text: e.querySelector(".tile-value").textContent}))};
  for (const c of r.charts) {
    const u = r.plots[c.id];
    const b = u.bbox;
    const img = u.ctx.getImageData(b.left, b.top, b.width, b.height).data;
    let colored = 0;
    for (let i = 0; i < img.length; i += 4) {
      const mx = Math.max(img[i], img[i+1], img[i+2]), mn = Math.min(img[i], img[i+1], img[i+2]);
      if (img[i+3] > 0 && mx - mn > 40) colored++;
    }
    const svg = new DOMParser().parseFromString(r.svg(c.id), "image/svg+xml");
    const ok = !svg.querySelector("parsererror") && svg.documentElement.nodeName === "svg";
    const marks = svg.querySelectorAll("g[clip-path] path, g[clip-path] rect").length;
    out.charts.push(Object.assign({}, c, {colored: colored, svgOK: ok, svgMarks: marks, xMin: u.scales.x.min, xMax: u.scales.x.max,
      png: r.png(c.id).startsWith("data:image/png;base64,")}));
  }
  // Zooming one time chart zooms them all.
  const times = r.charts.filter(c => c.time).map(c => r.plots[c.id]);
  if (times.length > 1) {
    // uPlot applies a new scale in a microtask; so do its hooks.
    const settle = () => new Promise(ok => setTimeout(ok, 0));
    const min = times[0].scales.x.min, max = times[0].scales.x.max;
    const lo = min + (max - min) / 4, hi = min + (max - min) / 2;
    times[0].setScale("x", {min: lo, max: hi});
    await settle(); await settle();
    out.zoomFollowed = times.every(u => Math.abs(u.scales.x.min - lo) < 1e-9 && Math.abs(u.scales.x.max - hi) < 1e-9);
    times[0].setScale("x", {min: min, max: max});
    await settle(); await settle();
  } else {
    out.zoomFollowed = true;
  }
  return out;
})()`

// load opens the report at path in a new tab, waits for every chart to be
// drawn, checks the console stayed clean (no error, warning or uncaught
// exception, the browser's own log included), and saves a full-page
// screenshot to shot ("" for none), a JPEG (a PNG of the whole page takes
// seconds to encode). It returns the page's checks.
func (b *browser) load(t testing.TB, path, shot string) pageCheck {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	var problems []string
	done := make(chan struct{})
	msgs := chromedp.Console(ctx) // opens the tab and subscribes before the page loads
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				problems = append(problems, "console: "+err.Error())
				return
			}
			if m.Type == chromedp.ConsoleInfo && m.Text == consoleEnd {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException, "assert":
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
			}
		}
	}()
	tctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("load %s in chromium: %v", path, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool]("window.reprise && window.reprise.ready",
		chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("%s: the charts were not drawn: %v", path, err)
	}
	res, err := chromedp.Run(tctx, chromedp.Evaluate[pageCheck](checkJS, chromedp.EvalAwaitPromise))

	if err != nil {
		t.Fatalf("%s: check the charts: %v", path, err)
	}
	if shot != "" {
		jpg, err := chromedp.Run(tctx, chromedp.FullScreenshot(70))
		if err != nil {
			t.Fatalf("%s: screenshot: %v", path, err)
		}
		if err := os.WriteFile(shot, jpg, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", shot)
	}
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[chromedp.Void](`console.info("`+consoleEnd+`")`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-tctx.Done():
		t.Fatalf("%s: the console's end marker never came", path)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", filepath.Base(path), p)
	}
	return res
}

// consoleEnd is logged after the checks: the console messages of the
// page's load all came before it.
const consoleEnd = "reprise-browser-test-end"

// artifactDir is where the browser test keeps its screenshots and
// reports: $REPRISE_TEST_ARTIFACTS, else a reprise-report-artifacts
// directory in the system's temporary directory, kept after the test.
func artifactDir(t testing.TB) string {
	dir := os.Getenv("REPRISE_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "reprise-report-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildFile writes the report of dirs to path.
func buildFile(t testing.TB, path string, opts Options, dirs ...string) {
	t.Helper()
	var runs []*arrowio.RunReader
	for _, d := range dirs {
		r, err := arrowio.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Build(f, runs, opts); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkCharts asserts every chart of the page was drawn with data, and
// that the charts named in want are among them.
func checkCharts(t *testing.T, res pageCheck, want ...string) {
	t.Helper()
	if res.Figures == 0 || res.Figures != len(res.Charts) {
		t.Errorf("%d figures, %d charts drawn", res.Figures, len(res.Charts))
	}
	have := map[string]bool{}
	for _, c := range res.Charts {
		have[c.ID] = true
		// Every time chart starts at the run's start and ends at its own
		// last activity, with a margin of 2 % so that the marks at the
		// ends are whole: no chart is mostly empty.
		if c.Time && (c.End <= 0 || c.XMin > 0 || c.XMax < c.End || c.XMax > c.End*1.021+1e-9 || c.XMin < -0.021*c.End-1e-9) {
			t.Errorf("chart %s: time axis [%v, %v] for activity up to %v s", c.ID, c.XMin, c.XMax, c.End)
		}
		switch {
		case c.Series == 0 || c.NonEmpty != c.Series:
			t.Errorf("chart %s: %d of %d series have data", c.ID, c.NonEmpty, c.Series)
		case c.Points == 0:
			t.Errorf("chart %s: no points", c.ID)
		case c.Colored < 20:
			t.Errorf("chart %s: %d coloured pixels in the plot area: nothing drawn", c.ID, c.Colored)
		case !c.SVGOK || c.SVGMarks < c.NonEmpty:
			t.Errorf("chart %s: SVG export parses %v with %d marks for %d series", c.ID, c.SVGOK, c.SVGMarks, c.NonEmpty)
		case !c.PNG:
			t.Errorf("chart %s: no PNG export", c.ID)
		}
	}
	if !res.ZoomFollowed {
		t.Error("zooming one time chart did not zoom the others")
	}
	for _, id := range want {
		if !have[id] {
			t.Errorf("chart %s missing; have %v", id, have)
		}
	}
}

// largeRun is the size of TestBrowserReports' large run and the options
// of its report: by default 8,000 requests with scatters bounded at
// 2,000 points, so that the bounds are exercised within seconds;
// $REPRISE_REPORT_LARGE_ROWS requests with the default options when set
// (1000000 gives the figures of docs/format/report.md).
func largeRun(t testing.TB) (int, Options) {
	if s := os.Getenv("REPRISE_REPORT_LARGE_ROWS"); s != "" {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			t.Fatalf("REPRISE_REPORT_LARGE_ROWS=%q: want a positive number of requests", s)
		}
		return n, Options{}
	}
	return 8000, Options{MaxPoints: 2000}
}

// TestBrowserReports loads reports in headless Chromium: a replay
// against the mock server (of the demo's trace with -update-screenshot), two runs overlaid, a run with
// errors and server and GPU telemetry, and a large run. Each must load
// with a clean console and every chart drawn with data; screenshots and
// reports are kept in artifactDir.
func TestBrowserReports(t *testing.T) {
	br := newBrowser(t)
	art := artifactDir(t)
	tmp := t.TempDir()

	t.Run("small", func(t *testing.T) {
		dir := replayRun(t, filepath.Join(tmp, "mock"), *updateScreenshot)
		out := filepath.Join(art, "small.html")
		buildFile(t, out, Options{}, dir)
		shot := filepath.Join(art, "small.jpg")
		res := br.load(t, out, shot)
		checkCharts(t, res, "cdf-ttft", "pct-ttft", "ttft-vs-time", "isl-vs-ttft", "osl-vs-e2e", "rate", "in-flight",
			"output-tokens", "lateness", "server-running", "server-kv-usage", "client-server-ttft", "client-server-itl",
			"ttft-over-time", "itl-over-time", "error-rate")
		checkHeadline(t, res, dir)
		if *updateScreenshot {
			readme := filepath.Join(tmp, "demo.html")
			buildFile(t, readme, Options{Labels: []string{"demo"}}, dir)
			writeReadmeShot(t, br, readme)
		}
	})
	t.Run("overlay", func(t *testing.T) {
		a, b := filepath.Join(tmp, "base"), filepath.Join(tmp, "slower")
		synthRun{n: 1000, rate: 200, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, seed: 1}.write(t, a)
		synthRun{n: 1000, rate: 200, ttft: 45 * time.Millisecond, itl: 9 * time.Millisecond, seed: 2}.write(t, b)
		out := filepath.Join(art, "overlay.html")
		buildFile(t, out, Options{}, a, b)
		res := br.load(t, out, filepath.Join(art, "overlay.jpg"))
		checkCharts(t, res, "cdf-ttft", "pct-e2e", "rate")
		for _, c := range res.Charts {
			if c.ID == "cdf-ttft" && c.Series != 2 {
				t.Errorf("overlay cdf-ttft: %d series, want one per run", c.Series)
			}
		}
	})
	t.Run("errors-telemetry", func(t *testing.T) {
		dir := filepath.Join(tmp, "errors")
		synthRun{n: 1500, rate: 100, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, errEvery: 20, warmup: 100,
			telemetry: true, seed: 3}.write(t, dir)
		out := filepath.Join(art, "errors-telemetry.html")
		buildFile(t, out, Options{}, dir)
		res := br.load(t, out, filepath.Join(art, "errors-telemetry.jpg"))
		checkCharts(t, res, "errors-by-kind", "server-running", "server-waiting", "server-kv-usage", "server-hit-rate",
			"gpu-power", "gpu-util", "gpu-memory", "cache-error", "read-lag", "client-server-ttft")
		for _, c := range res.Charts {
			// ok, then one series per error kind.
			if c.ID == "ttft-vs-time" && c.Series != 1+len(errKinds) {
				t.Errorf("ttft-vs-time: %d series, want ok + %d error kinds", c.Series, len(errKinds))
			}
		}
	})
	t.Run("constant-lengths", func(t *testing.T) {
		// Every prompt 512 tokens and every answer 64: the ISL and OSL
		// scatters have one x each, and must still draw.
		dir := filepath.Join(tmp, "fixed")
		synthRun{n: 300, rate: 100, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, fixedLen: true, seed: 6}.write(t, dir)
		out := filepath.Join(art, "constant-lengths.html")
		buildFile(t, out, Options{}, dir)
		res := br.load(t, out, filepath.Join(art, "constant-lengths.jpg"))
		checkCharts(t, res, "isl-vs-ttft", "osl-vs-e2e")
		checkHeadline(t, res, dir)
	})
	t.Run("sweep-points", func(t *testing.T) {
		// A one-point Pareto front, a labelled scatter of two points and
		// a point at each extreme of its axes, as a sweep's section
		// draws them.
		dir := filepath.Join(tmp, "point")
		synthRun{n: 50, rate: 50, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, seed: 7}.write(t, dir)
		front := Chart{ID: "front", Title: "front", Kind: Lines, XAxis: Axis{Label: "tokens/s"}, YAxis: Axis{Label: "p99 (ms)", Log: true},
			Series: []Series{{Label: "Pareto front", Color: RunColor(1), X: Values{791.5}, Y: Values{206}, Labels: []string{"concurrency=10"}}}}
		every := Chart{ID: "every", Title: "every", Kind: Scatter, XAxis: front.XAxis, YAxis: front.YAxis,
			Series: []Series{{Label: "points", Color: RunColor(0), X: Values{78.87, 791.5}, Y: Values{205.9, 206}, Labels: []string{"concurrency=1", "concurrency=10"}}}}
		out := filepath.Join(art, "sweep-points.html")
		buildFile(t, out, Options{Sections: []Section{{Title: "Pareto front", Charts: []Chart{front, every}}}}, dir)
		res := br.load(t, out, filepath.Join(art, "sweep-points.jpg"))
		checkCharts(t, res, "front", "every")
		for _, c := range res.Charts {
			switch c.ID {
			case "front", "every":
				// A dot is at least a few pixels across: 1 px dots do not
				// pass.
				if c.Colored < 30*c.Points {
					t.Errorf("chart %s: %d coloured pixels for %d points: dots too small or clipped", c.ID, c.Colored, c.Points)
				}
				if c.Labels != c.Points {
					t.Errorf("chart %s: %d labels for %d points", c.ID, c.Labels, c.Points)
				}
			}
		}
	})
	t.Run("large", func(t *testing.T) {
		n, opts := largeRun(t)
		maxPoints := cmp.Or(opts.MaxPoints, DefaultMaxPoints)
		dir := filepath.Join(tmp, "large")
		synthRun{n: n, rate: 1000, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, errEvery: 1000, warmup: n / 100,
			telemetry: true, seed: 4}.write(t, dir)
		out := filepath.Join(tmp, "large.html")
		start := time.Now()
		buildFile(t, out, opts, dir)
		took := time.Since(start)
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		res := br.load(t, out, filepath.Join(art, "large.jpg"))
		checkCharts(t, res, "cdf-ttft", "ttft-vs-time", "rate")
		t.Logf("large run: %d requests, report %.2f MB built in %v, interactive %.0f ms after navigation start",
			n, float64(st.Size())/1e6, took.Round(time.Millisecond), res.ReadyMS)
		// The bounds of the package doc: no scatter series over MaxPoints.
		for _, c := range res.Charts {
			if c.Kind == string(Scatter) && c.Points > c.Series*maxPoints {
				t.Errorf("chart %s: %d points in %d series, over %d each", c.ID, c.Points, c.Series, maxPoints)
			}
			if c.ID == "ttft-vs-time" && c.Points < maxPoints {
				t.Errorf("chart %s: %d points, want the %d of a full sample", c.ID, c.Points, maxPoints)
			}
		}
	})
}

// checkHeadline asserts that the headline the page shows is run dir's
// summary.json: every number present and equal, goodput only with an
// SLO, and a verdict.
func checkHeadline(t *testing.T, res pageCheck, dir string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tl := range res.Tiles {
		seen[tl.Metric] = true
		if tl.Metric == "exit_code" {
			continue
		}
		want, ok := summaryJSONValue(t, doc, tl.Metric)
		got, err := strconv.ParseFloat(tl.Value, 64)
		if !ok || err != nil || got != want {
			t.Errorf("headline %s = %s (%q), summary.json %v", tl.Metric, tl.Value, tl.Text, want)
		}
		// The text shown is that number, rounded.
		if shown := num(want).Text; !strings.HasPrefix(tl.Text, shown) {
			t.Errorf("headline %s shows %q, want %s", tl.Metric, tl.Text, shown)
		}
	}
	for _, k := range []string{"time_to_first_token.p50", "time_to_first_token.p99", "inter_token_latency.p50", "inter_token_latency.p99",
		"request_latency.p50", "request_latency.p99", "output_token_throughput.avg", "request_throughput.avg", "exit_code"} {
		if !seen[k] {
			t.Errorf("headline has no %s; has %v", k, seen)
		}
	}
	if _, slo := doc["goodput"]; seen["goodput.avg"] != slo {
		t.Errorf("headline goodput shown %v, summary.json has one %v", seen["goodput.avg"], slo)
	}
}

// writeReadmeShot screenshots the top of the report at path (the
// verdicts, the summary and the first charts) as docs/img/report.png.
func writeReadmeShot(t *testing.T, br *browser, path string) {
	ctx, cancel := chromedp.NewContext(br.ctx)
	defer cancel()
	abs, _ := filepath.Abs(path)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 1500), chromedp.Navigate("file://"+abs))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool]("window.reprise && window.reprise.ready", chromedp.WithPollingTimeout(30*time.Second)))
	}
	var png []byte
	if err == nil {
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join("..", "..", "docs", "img", "report.png")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
