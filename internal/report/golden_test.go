package report

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestBuildGolden compares the report of a small synthetic run (40
// requests, errors, warmup and telemetry) with
// testdata/TestBuildGolden.golden: the page with the vendored scripts and
// styles left out and the run directory spelt RUN. Rewrite it with
// go test -run TestBuildGolden -update and review the diff.
func TestBuildGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	synthRun{n: 40, rate: 20, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, errEvery: 8, warmup: 4,
		telemetry: true, seed: 11}.write(t, dir)
	page := string(build(t, Options{MaxPoints: 10}, dir))
	page = strings.NewReplacer(uplotJS, "(uPlot.iife.min.js)", uplotCSS, "(uPlot.min.css)", reportJS, "(report.js)",
		reportCSS, "(report.css)", uplotLicense, "(LICENSE.uPlot)", dir, "RUN").Replace(page)
	golden := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), page); diff != "" {
		t.Errorf("report differs from %s (-want +got); rerun with -update if the change is meant:\n%s", golden, diff)
	}
}
