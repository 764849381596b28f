package reprise

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/memstat"
)

// BenchmarkMerge merges two shards of 500,000 requests each
// (REPRISE_BENCH_ROWS sets the total: 10000000 is the 10M-request run of
// docs/benchmarks.md), made by repeating the records of a real run
// (mergeBase) with ids, trace rows and times of their own, into
// REPRISE_BENCH_RUN_DIR when set (shards already there are reused, to
// compare builds on the same input; the merged run goes there too), else
// into a temporary directory. It reports the merge's CPU and wall seconds
// and peak live heap (the targets at 10M: under a minute and under 1 GB).
func BenchmarkMerge(b *testing.B) {
	total := memstat.BenchRows(1_000_000)
	root := os.Getenv("REPRISE_BENCH_RUN_DIR")
	if root == "" {
		root = b.TempDir()
	}
	dirs := []string{filepath.Join(root, "shard-0"), filepath.Join(root, "shard-1")}
	if _, err := os.Stat(filepath.Join(dirs[1], arrowio.SummaryFile)); err != nil {
		dirs = benchShards(b, mergeBase(b), root, 2, total)
	}
	var cpu, wall time.Duration
	var peak uint64
	for b.Loop() {
		out := filepath.Join(root, "merged")
		os.RemoveAll(out)
		base := memstat.LiveHeap()
		h := memstat.StartPeakHeap()
		c0, t0 := processCPU(), time.Now()
		res, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: out})
		if err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
		wall += time.Since(t0)
		peak = max(peak, h.Stop()-base)
		if n := res.Summary.RequestCount + res.Summary.ErrorRequestCount + res.Summary.WarmupCount; n != total {
			b.Fatalf("merged %d requests, want %d", n, total)
		}
	}
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	b.ReportMetric(wall.Seconds()/n, "wall-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total), "rows")
}

// benchShards writes k shard directories under root of total requests in
// all, each a copy of one of base's records with a request id, trace row
// and times of its own, and a manifest and summary as a shard writes them.
func benchShards(b *testing.B, base, root string, k, total int) []string {
	b.Helper()
	src, err := arrowio.Open(base)
	if err != nil {
		b.Fatal(err)
	}
	set, err := src.Settings()
	if err != nil {
		b.Fatal(err)
	}
	mb, err := src.Manifest()
	if err != nil {
		b.Fatal(err)
	}
	var tmpl []record.Request
	for r, err := range src.Requests() {
		if err != nil {
			b.Fatal(err)
		}
		tmpl = append(tmpl, r)
	}
	span := int64(time.Second) // the template repeats every second
	dirs := make([]string, k)
	for s := range k {
		dirs[s] = filepath.Join(root, fmt.Sprintf("shard-%d", s))
		run, err := arrowio.Create(dirs[s], arrowio.CreateConfig{Tables: arrowio.NewConfig()})
		if err != nil {
			b.Fatal(err)
		}
		n := total / k
		if s == k-1 {
			n = total - n*(k-1)
		}
		batch := make([]record.Request, 0, 4096)
		for i := range n {
			g := i*k + s // the request's place in the whole run
			r := tmpl[g%len(tmpl)]
			shift := int64(g/len(tmpl)) * span
			r.RequestID, r.TraceRow = uint64(i), int64(g)
			for _, t := range []*int64{&r.IntendedNS, &r.DispatchedNS, &r.SentNS, &r.WroteNS, &r.HeadersNS, &r.FirstEventNS,
				&r.FirstTokenNS, &r.FirstOutputTokenNS, &r.SecondTokenNS, &r.LastTokenNS, &r.EndNS} {
				if *t != 0 {
					*t += shift
				}
			}
			batch = append(batch, r)
			if len(batch) == cap(batch) || i == n-1 {
				if err := run.Records().WriteRequests(batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		var m map[string]any
		if err := json.Unmarshal(mb, &m); err != nil {
			b.Fatal(err)
		}
		m["replay"].(map[string]any)["shard"] = map[string]int{"index": s, "count": k}
		m["planned_requests"], m["trace_rows"] = n, total
		if err := run.WriteManifest(m); err != nil {
			b.Fatal(err)
		}
		if err := run.Close(); err != nil {
			b.Fatal(err)
		}
		part, err := arrowio.Open(dirs[s])
		if err != nil {
			b.Fatal(err)
		}
		info := set.Info
		info.Planned = n
		sum, err := part.Summarize(info, set.Options)
		if err != nil {
			b.Fatal(err)
		}
		if err := run.WriteSummary(sum, nil); err != nil {
			b.Fatal(err)
		}
	}
	return dirs
}
