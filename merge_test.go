package reprise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/testfiles"
)

// baseRun is one real run, made once per test binary: the first 40 rows
// of the Mooncake conversation trace at 100× against the in-process mock
// server, with events; splitRun cuts its records into parts.
var baseRun struct {
	once sync.Once
	dir  string
	err  error
}

// removeMergeBase removes baseRun's directory (TestMain calls it).
func removeMergeBase() {
	if baseRun.dir != "" {
		os.RemoveAll(filepath.Dir(baseRun.dir))
	}
}

func mergeBase(t testing.TB) string {
	t.Helper()
	baseRun.once.Do(func() {
		mcfg := mockserver.NewConfig()
		mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
		srv, err := mockserver.Start(context.Background(), mcfg)
		if err != nil {
			baseRun.err = err
			return
		}
		defer srv.Close()
		lines := bytes.SplitAfterN(testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl"), []byte("\n"), 41)
		head := bytes.Join(lines[:40], nil)
		head = regexp.MustCompile(`"output_length": \d+`).ReplaceAll(head, []byte(`"output_length": 3`)) // short answers
		o := NewOptions()
		o.URL, o.Model = srv.URL(), mockserver.DefaultModel
		o.Trace.Reader = bytes.NewReader(head)
		o.Replay.Speedup = 100
		o.Telemetry.EndpointMetrics = false
		o.Output.ExportLevel = "events"
		dir, err := os.MkdirTemp("", "reprise-merge-test-")
		if err != nil {
			baseRun.err = err
			return
		}
		o.Output.Dir = filepath.Join(dir, "base")
		_, baseRun.err = Run(context.Background(), o)
		baseRun.dir = o.Output.Dir
	})
	if baseRun.err != nil {
		t.Fatal(baseRun.err)
	}
	return baseRun.dir
}

// splitRun writes the records (and their events) of run dir base into k
// part directories under root, each record to a part drawn from rng,
// each part a shard i/k with a manifest and summary.json of its own.
func splitRun(t testing.TB, base, root string, k int, rng *rand.Rand) []string {
	t.Helper()
	src, err := arrowio.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	set, err := src.Settings()
	if err != nil {
		t.Fatal(err)
	}
	mb, err := src.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	parts := make([][]record.Request, k)
	owner := map[uint64]int{}
	for r, err := range src.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		i := rng.IntN(k)
		parts[i] = append(parts[i], r)
		owner[r.RequestID] = i
	}
	events := make([][]record.Event, k)
	for e, err := range src.Events() {
		if err != nil {
			t.Fatal(err)
		}
		events[owner[e.RequestID]] = append(events[owner[e.RequestID]], e)
	}
	dirs := make([]string, k)
	for i := range k {
		dirs[i] = filepath.Join(root, fmt.Sprintf("part-%d", i))
		run, err := arrowio.Create(dirs[i], arrowio.CreateConfig{Tables: arrowio.NewConfig()})
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(run.Records().WriteRequests(parts[i]), run.Records().WriteEvents(events[i])); err != nil && len(parts[i]) > 0 {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(mb, &m); err != nil {
			t.Fatal(err)
		}
		m["replay"].(map[string]any)["shard"] = map[string]int{"index": i, "count": k}
		m["planned_requests"] = len(parts[i])
		if err := run.WriteManifest(m); err != nil {
			t.Fatal(err)
		}
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
		part, err := arrowio.Open(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		info := set.Info
		info.Planned = len(parts[i])
		s, err := part.Summarize(info, set.Options)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.WriteSummary(s, nil); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// FuzzMergeSplit: however a run's records are split into shards, merging
// them gives the run's own summary (every statistic, exact percentiles),
// all its events, and no problem.
func FuzzMergeSplit(f *testing.F) {
	for seed := range uint64(6) {
		f.Add(seed, uint8(seed%5+1))
	}
	f.Fuzz(func(t *testing.T, seed uint64, k uint8) {
		k = k%6 + 1
		base := mergeBase(t)
		src, err := arrowio.Open(base)
		if err != nil {
			t.Fatal(err)
		}
		set, err := src.Settings()
		if err != nil {
			t.Fatal(err)
		}
		want, err := src.Summarize(set.Info, set.Options)
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		dirs := splitRun(t, base, root, int(k), rand.New(rand.NewPCG(seed, 9)))
		rand.New(rand.NewPCG(seed, 10)).Shuffle(len(dirs), func(i, j int) { dirs[i], dirs[j] = dirs[j], dirs[i] })
		res, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: filepath.Join(root, "merged")})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		wj, _ := want.JSON()
		gj, _ := res.Summary.JSON()
		if diff := cmp.Diff(string(wj), string(gj)); diff != "" {
			t.Errorf("merged summary (-run +merged of %d parts):\n%s", k, diff)
		}
		if res.Report.DuplicateRows != 0 || res.Report.MissingRequests != 0 || len(res.Report.Shards) != int(k) {
			t.Errorf("report %+v", res.Report)
		}
		merged, err := arrowio.Open(res.Dir)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[uint64]bool{}
		for r, err := range merged.Requests() {
			if err != nil || ids[r.RequestID] {
				t.Fatalf("request id %d repeated (%v)", r.RequestID, err)
			}
			ids[r.RequestID] = true
		}
		nw, ng := 0, 0
		for range src.Events() {
			nw++
		}
		for e, err := range merged.Events() {
			if err != nil || !ids[e.RequestID] {
				t.Fatalf("event of request %d, which has no record (%v)", e.RequestID, err)
			}
			ng++
		}
		if nw != ng || nw == 0 {
			t.Errorf("%d events merged, want %d", ng, nw)
		}
		// The merged summary.json is a normal run's: summarize reproduces it.
		mset, err := merged.Settings()
		if err != nil || mset.Merge == nil || mset.Merge.ShardCount != int(k) {
			t.Fatalf("merged settings %+v, %v", mset.Merge, err)
		}
		again, err := merged.Summarize(mset.Info, mset.Options)
		if err != nil {
			t.Fatal(err)
		}
		b1, _ := arrowio.SummaryJSONMerged(again, mset.RecordWriter, mset.Merge)
		b2, _ := merged.Summary()
		if !bytes.Equal(b1, b2) {
			t.Errorf("summarize of the merged run differs from its summary.json")
		}
	})
}

// TestMergeReportsProblems: a missing shard, a shard given twice (its
// trace rows sent twice) and a shard that did not finish are written but
// reported, each named.
func TestMergeReportsProblems(t *testing.T) {
	base := mergeBase(t)
	root := t.TempDir()
	dirs := splitRun(t, base, root, 3, rand.New(rand.NewPCG(1, 2)))
	for _, tc := range []struct {
		name string
		dirs []string
		prep func()
		want []string
	}{
		{"missing", dirs[:2], nil, []string{"shard 2/3 is missing"}},
		{"twice", []string{dirs[0], dirs[1], dirs[2], dirs[1]}, nil, []string{"shard 1/3 is given twice", "records repeat a trace row"}},
		{"unfinished", dirs, func() {
			run, _ := arrowio.Open(dirs[2])
			b, _ := run.Summary()
			var m map[string]any
			json.Unmarshal(b, &m)
			m["run_info"].(map[string]any)["was_cancelled"] = true
			b, _ = json.Marshal(m)
			if err := os.WriteFile(filepath.Join(dirs[2], arrowio.SummaryFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"shard 2/3 (" + dirs[2] + ") did not complete"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prep != nil {
				tc.prep()
			}
			res, err := Merge(context.Background(), MergeOptions{Dirs: tc.dirs, Out: filepath.Join(root, "merged-"+tc.name)})
			if !errors.Is(err, ErrMergeIncomplete) || res == nil {
				t.Fatalf("Merge = %v, %v; want ErrMergeIncomplete with a result", res, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// setShard rewrites dir's manifest.json replay.shard to index/count.
func setShard(t *testing.T, dir string, index, count int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, arrowio.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["replay"].(map[string]any)["shard"] = map[string]int64{"index": index, "count": count}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, arrowio.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMergeShardCount: a shard count no --shard writes (10^15, one over
// replay.MaxShardCount) is refused before anything is allocated for it,
// and missing shards are reported as ranges in one problem.
func TestMergeShardCount(t *testing.T) {
	base := mergeBase(t)
	for _, count := range []int64{1e15, 100_001} {
		t.Run(fmt.Sprint(count), func(t *testing.T) {
			root := t.TempDir()
			dirs := splitRun(t, base, root, 2, rand.New(rand.NewPCG(3, 4)))
			setShard(t, dirs[1], 1, count)
			res, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: filepath.Join(root, "merged")})
			if res != nil || err == nil || !strings.Contains(err.Error(), "manifest.json: replay.shard 1/") {
				t.Fatalf("Merge = %v, %v; want no result and an error naming replay.shard", res, err)
			}
		})
	}
	t.Run("ranges", func(t *testing.T) {
		root := t.TempDir()
		dirs := splitRun(t, base, root, 3, rand.New(rand.NewPCG(5, 6)))
		for i, idx := range []int64{0, 4, 9} { // of 12: 1-3, 5-8, 10-11 missing
			setShard(t, dirs[i], idx, 12)
		}
		res, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: filepath.Join(root, "merged")})
		if !errors.Is(err, ErrMergeIncomplete) || res == nil {
			t.Fatalf("Merge = %v, %v; want ErrMergeIncomplete with a result", res, err)
		}
		want := []string{"9 shards of 12 are missing (1-3, 5-8, 10-11): no directory given holds them"}
		if diff := cmp.Diff(want, res.Report.Problems); diff != "" {
			t.Errorf("problems (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{1, 2, 3, 5, 6, 7, 8, 10, 11}, res.Report.MissingShards); diff != "" {
			t.Errorf("missing_shards (-want +got):\n%s", diff)
		}
	})
}

func TestShardRanges(t *testing.T) {
	many := make([]int, 0, 50)
	for i := range 50 {
		many = append(many, 2*i)
	}
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 5, 7, 8}, "0-2, 5, 7-8"},
		{many, "0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, and 30 more"},
	} {
		if got := shardRanges(tc.in); got != tc.want {
			t.Errorf("shardRanges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// editManifest applies edit to dir's manifest.json.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, arrowio.ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMergeRefusesOtherRuns: shards of one run share manifest.json's
// run_id and merge; a shard of another run (another --start-at) is
// refused, whether its manifest has run_id or predates it (the id is then
// derived from its settings).
func TestMergeRefusesOtherRuns(t *testing.T) {
	base := mergeBase(t)
	otherStart := func(m map[string]any) { m["replay"].(map[string]any)["start_at"] = "2031-01-01T00:00:00Z" }
	noID := func(m map[string]any) { delete(m, "run_id") }
	for _, tc := range []struct {
		name    string
		edit0   func(map[string]any)
		edit1   func(map[string]any)
		refused bool
	}{
		{"same run", nil, nil, false},
		{"other run_id", nil, func(m map[string]any) { m["run_id"] = "0123456789abcdef" }, true},
		{"no run_id, same run", noID, noID, false},
		{"no run_id, other start_at", noID, func(m map[string]any) { noID(m); otherStart(m) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := splitRun(t, base, root, 2, rand.New(rand.NewPCG(7, 8)))
			for i, e := range []func(map[string]any){tc.edit0, tc.edit1} {
				if e != nil {
					editManifest(t, dirs[i], e)
				}
			}
			res, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: filepath.Join(root, "merged")})
			if tc.refused {
				if res != nil || err == nil || !strings.Contains(err.Error(), "not shards of one run") {
					t.Fatalf("Merge = %v, %v; want it refused as not shards of one run", res, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
		})
	}
}

// TestManifestRunID: a run's manifest carries the run_id its own keys
// give, and the id leaves out only the shard's index.
func TestManifestRunID(t *testing.T) {
	run, err := arrowio.Open(mergeBase(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := run.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		RunID         string `json:"run_id"`
		SchemaVersion string `json:"schema_version"`
		Kind          string `json:"kind"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	id, err := manifestRunID(b)
	if err != nil || m.RunID != id || len(id) != 16 || m.SchemaVersion != arrowio.ManifestVersion || m.Kind != arrowio.ManifestKind {
		t.Fatalf("manifest run_id %q schema_version %q kind %q; derived %q, %v", m.RunID, m.SchemaVersion, m.Kind, id, err)
	}
	withShard := func(index, count int, startAt string) string {
		var raw map[string]any
		json.Unmarshal(b, &raw)
		raw["replay"].(map[string]any)["shard"] = map[string]int{"index": index, "count": count}
		raw["replay"].(map[string]any)["start_at"] = startAt
		c, _ := json.Marshal(raw)
		id, err := manifestRunID(c)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	t0 := "2030-01-01T00:00:00Z"
	if withShard(0, 4, t0) != withShard(3, 4, t0) {
		t.Error("shards 0/4 and 3/4 of one run have different ids")
	}
	if withShard(0, 4, t0) == withShard(0, 4, "2030-01-01T00:00:01Z") || withShard(0, 4, t0) == withShard(0, 2, t0) {
		t.Error("another --start-at or shard count gives the same id")
	}
}
