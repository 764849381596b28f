package reprise

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// ErrMergeIncomplete is wrapped by [Merge]'s error when the merged run is
// written but is not the whole run: a shard missing, failed or repeated,
// trace rows sent twice or planned requests without a record. The
// [MergeResult] says which, and so does summary.json's merge.problems.
var ErrMergeIncomplete = errors.New("the merged run is incomplete")

// mergeBatch is the number of rows copied at a time.
const mergeBatch = 4096

// maxExamples bounds the rows a merge report lists as examples.
const maxExamples = 10

// MergeOptions say which run directories [Merge] merges and where to.
type MergeOptions struct {
	// Dirs are the run directories of the shards (any order).
	Dirs []string
	// Out is the merged run directory; it must be new or empty unless
	// Overwrite.
	Out       string
	Overwrite bool
	// Format is the merged record files' format: "parquet" (default),
	// "arrow" or "jsonl".
	Format string
	// Wait, when not zero, waits up to this long for every directory to
	// hold a complete run (its summary.json, which a run writes last), as
	// a merge started beside its shards (a Kubernetes Job) must; a
	// directory still incomplete then is merged as it is, and reported.
	Wait time.Duration
}

// mergePoll is how often a merge that waits looks at its directories.
const mergePoll = 2 * time.Second

// MergeResult is what [Merge] wrote.
type MergeResult struct {
	// Dir is the merged run directory.
	Dir string
	// Summary is its summary, computed from every shard's records (as
	// summary.json holds it).
	Summary *summary.Summary
	// Report is summary.json's merge: each shard's counts and lateness,
	// and the problems found.
	Report *arrowio.MergeReport
}

// shardManifest is what a merge reads of a shard's manifest.json.
type shardManifest struct {
	RunID       string  `json:"run_id"`
	Trace       string  `json:"trace"`
	TraceSHA256 *string `json:"trace_sha256"`
	TraceRows   int     `json:"trace_rows"`
	Model       string  `json:"model"`
	Mode        string  `json:"mode"`
	Planned     *int    `json:"planned_requests"`
	Replay      struct {
		Shard *struct {
			Index int `json:"index"`
			Count int `json:"count"`
		} `json:"shard"`
	} `json:"replay"`
}

// mergePart is one run directory being merged.
type mergePart struct {
	dir       string
	run       *arrowio.RunReader
	raw       map[string]any // manifest.json, nil when absent
	m         shardManifest
	set       arrowio.Settings
	completed bool
}

// Merge merges the run directories of the shards of one run (`--shard
// I/N`, or any parts of one run's records) into one run directory, read
// with [arrowio.Open] and written with [arrowio.Create]: every shard's
// records and events (request ids offset so they stay unique), the
// telemetry tables of the first shard that has them (every shard scraped
// the same servers), a manifest that is the first shard's with the
// shard's settings replaced by the merge's, and a summary.json computed
// from all the records, exactly as one run's is (percentiles over every
// request, not averages of the shards'), with the per-shard report under
// "merge". It then checks that the run is whole: every shard 0..N-1 there
// once, each completed with a record for every planned request, no trace
// row sent twice when each was to be sent once, all of one trace. When
// something is amiss the merged run is still written, and Merge returns
// its result with an error wrapping [ErrMergeIncomplete] that names every
// problem. Other errors (a directory that is not a run, a write that
// fails, ctx cancelled while waiting) return no result.
func Merge(ctx context.Context, o MergeOptions) (*MergeResult, error) {
	if len(o.Dirs) == 0 {
		return nil, errors.New("merge: no run directories given")
	}
	if o.Out == "" {
		return nil, errors.New("merge: no output directory given")
	}
	if o.Wait > 0 {
		if err := waitComplete(ctx, o.Dirs, o.Wait); err != nil {
			return nil, err
		}
	}
	parts := make([]*mergePart, 0, len(o.Dirs))
	for _, d := range o.Dirs {
		p, err := openPart(ctx, d)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if err := sameRun(parts); err != nil {
		return nil, err
	}
	rep := &arrowio.MergeReport{DuplicateRows: -1}
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	checkParts(parts, rep, problem)

	tables := arrowio.NewConfig()
	if o.Format != "" {
		tables.Format = arrowio.Format(o.Format)
	}
	tables.Metadata = map[string]string{"reprise.version": Version()}
	out, err := arrowio.Create(o.Out, arrowio.CreateConfig{Tables: tables, Overwrite: o.Overwrite})
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	defer out.Close()

	planned, timeBound := plannedRequests(parts)
	traceRows := int64(parts[0].m.TraceRows)
	unique := !timeBound && traceRows > 0 && planned <= traceRows
	var seen rowSet
	if unique {
		rep.DuplicateRows = 0
	}
	// The merged summary is accumulated from the records as they are
	// copied, in the order they are written: what Summarize of the merged
	// directory computes, without reading the records back.
	set := mergedSettings(parts)
	all := summary.NewAccumulator(set.Options)
	var offset uint64
	var records int64
	for _, p := range parts {
		sr, next, err := copyPart(out, p, offset, unique, &seen, rep, all)
		if err != nil {
			return nil, err
		}
		rep.Shards = append(rep.Shards, sr)
		records += sr.Requests
		offset = next
	}
	if err := copyTelemetry(out, parts); err != nil {
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, fmt.Errorf("merge: write %s: %w", o.Out, err)
	}

	shardProblems(rep.Shards, problem)
	rep.MissingRequests = -1
	if !timeBound {
		rep.MissingRequests = max(0, planned-records)
	}
	if rep.DuplicateRows > 0 {
		problem("%d records repeat a trace row already sent (rows %v): a shard was merged twice or the shards' plans differ",
			rep.DuplicateRows, rep.DuplicateRowExamples)
	}

	merged, err := arrowio.Open(o.Out)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	s, err := merged.SummarizeFrom(all, set.Info)
	if err != nil {
		return nil, fmt.Errorf("merge: summarize %s: %w", o.Out, err)
	}
	if err := out.WriteManifest(mergedManifest(parts, rep, planned, timeBound)); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if err := out.WriteMergedSummary(s, set.RecordWriter, rep); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	res := &MergeResult{Dir: o.Out, Summary: s, Report: rep}
	if len(rep.Problems) > 0 {
		return res, fmt.Errorf("%w: %s", ErrMergeIncomplete, joinProblems(rep.Problems))
	}
	return res, nil
}

// plannedRequests is the requests the parts' plans sent in all, each
// shard counted once (a shard given twice counts once); timeBound is
// whether a part's plan was bound by time, not a count, so no number of
// requests was planned.
func plannedRequests(parts []*mergePart) (planned int64, timeBound bool) {
	counted := map[int]bool{}
	for _, p := range parts {
		if i := shardIndex(p); i >= 0 {
			if counted[i] {
				continue
			}
			counted[i] = true
		}
		if p.m.Planned == nil || *p.m.Planned < 0 {
			timeBound = true
		} else {
			planned += int64(*p.m.Planned)
		}
	}
	return planned, timeBound
}

// shardProblems reports each shard that did not complete, sent fewer
// requests than planned, or lost records.
func shardProblems(shards []arrowio.ShardReport, problem func(format string, args ...any)) {
	for _, sr := range shards {
		name := shardName(sr)
		switch {
		case !sr.Completed:
			problem("%s (%s) did not complete: no summary.json, or the run was interrupted; its records up to then are merged", name, sr.Dir)
		case sr.PlannedRequests >= 0 && sr.Requests < int64(sr.PlannedRequests):
			problem("%s (%s) has %d records of %d planned requests", name, sr.Dir, sr.Requests, sr.PlannedRequests)
		}
		if w := sr.RecordWriter; w != nil && (w.Dropped > 0 || w.Error != "") {
			problem("%s (%s): missing from its record files: %s (%s)", name, sr.Dir, w.Missing(), w.Error)
		}
	}
}

func joinProblems(ps []string) string {
	b, _ := json.Marshal(ps) // quoted, so each reads as one
	return string(b)
}

// openPart opens dir and reads its manifest and settings.
func openPart(ctx context.Context, dir string) (*mergePart, error) {
	run, err := arrowio.OpenContext(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if !run.Has(arrowio.RecordsTable) {
		return nil, fmt.Errorf("merge: %s has no record files: give the run directories the shards wrote (their --out)", dir)
	}
	p := &mergePart{dir: dir, run: run}
	if b, err := run.Manifest(); err == nil {
		if err := json.Unmarshal(b, &p.raw); err != nil {
			return nil, fmt.Errorf("merge: %s/manifest.json: %w", dir, err)
		}
		if err := json.Unmarshal(b, &p.m); err != nil {
			return nil, fmt.Errorf("merge: %s/manifest.json: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if p.raw != nil && p.m.RunID == "" {
		// A manifest written before run_id: the id its keys give.
		b, _ := run.Manifest()
		if p.m.RunID, err = manifestRunID(b); err != nil {
			return nil, fmt.Errorf("merge: %s/manifest.json: %w", dir, err)
		}
	}
	if sh := p.m.Replay.Shard; sh != nil && (sh.Count < 1 || sh.Count > replay.MaxShardCount || sh.Index < 0 || sh.Index >= sh.Count) {
		return nil, fmt.Errorf("merge: %s/manifest.json: replay.shard %d/%d: want INDEX/COUNT with 0 ≤ INDEX < COUNT ≤ %d, as --shard writes it: the manifest is not one a shard wrote",
			dir, sh.Index, sh.Count, replay.MaxShardCount)
	}
	if p.set, err = run.Settings(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	_, sumErr := run.Summary()
	p.completed = sumErr == nil && !p.set.Info.Cancelled && p.set.Info.Stopped == ""
	return p, nil
}

// sameRun refuses parts of different runs: every part with a manifest
// must have the first such part's run_id.
func sameRun(parts []*mergePart) error {
	var first *mergePart
	for _, p := range parts {
		switch {
		case p.m.RunID == "":
		case first == nil:
			first = p
		case p.m.RunID != first.m.RunID:
			return fmt.Errorf("merge: %s is of run %s and %s of run %s (manifest.json run_id): these are not shards of one run "+
				"(shards of one run are given the same trace and flags, --start-at included, and each its own --shard I/N); merge each run's shards apart",
				first.dir, first.m.RunID, p.dir, p.m.RunID)
		}
	}
	return nil
}

// checkParts orders parts by shard index and reports shards missing,
// repeated or of another run.
func checkParts(parts []*mergePart, rep *arrowio.MergeReport, problem func(string, ...any)) {
	first := parts[0]
	for _, p := range parts[1:] {
		if a, b := first.m.TraceSHA256, p.m.TraceSHA256; (a == nil) != (b == nil) || (a != nil && *a != *b) {
			problem("%s replayed another trace than %s (trace_sha256 differs): these are not shards of one run", p.dir, first.dir)
		}
		if p.m.Model != first.m.Model {
			problem("%s asked model %q, %s model %q: these are not shards of one run", p.dir, p.m.Model, first.dir, first.m.Model)
		}
	}
	for _, p := range parts {
		if sh := p.m.Replay.Shard; sh != nil && sh.Count > rep.ShardCount {
			rep.ShardCount = sh.Count
		}
	}
	if rep.ShardCount == 0 {
		return
	}
	slices.SortStableFunc(parts, func(a, b *mergePart) int { return cmp.Compare(shardIndex(a), shardIndex(b)) })
	byIndex := map[int]string{}
	for _, p := range parts {
		sh := p.m.Replay.Shard
		if sh == nil {
			problem("%s is not a shard (no --shard) but the others are shards of %d", p.dir, rep.ShardCount)
			continue
		}
		if sh.Count != rep.ShardCount {
			problem("%s is shard %d/%d but others are of %d shards", p.dir, sh.Index, sh.Count, rep.ShardCount)
		}
		if d, dup := byIndex[sh.Index]; dup {
			problem("shard %d/%d is given twice: %s and %s", sh.Index, rep.ShardCount, d, p.dir)
		}
		byIndex[sh.Index] = p.dir
	}
	rep.MissingShards = []int{}
	for i := range rep.ShardCount {
		if _, ok := byIndex[i]; !ok {
			rep.MissingShards = append(rep.MissingShards, i)
		}
	}
	switch n := len(rep.MissingShards); n {
	case 0:
	case 1:
		problem("shard %d/%d is missing: no directory given holds it", rep.MissingShards[0], rep.ShardCount)
	default:
		problem("%d shards of %d are missing (%s): no directory given holds them", n, rep.ShardCount, shardRanges(rep.MissingShards))
	}
}

// maxRanges bounds the ranges a problem lists.
const maxRanges = 20

// shardRanges writes the ascending indices is as ranges, "0-3, 7,
// 9-12", the first maxRanges of them.
func shardRanges(is []int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(is); n++ {
		j := i
		for j+1 < len(is) && is[j+1] == is[j]+1 {
			j++
		}
		if n == maxRanges {
			fmt.Fprintf(&b, ", and %d more", len(is)-i)
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", is[i], is[j])
		} else {
			fmt.Fprintf(&b, "%d", is[i])
		}
		i = j + 1
	}
	return b.String()
}

func shardIndex(p *mergePart) int {
	if sh := p.m.Replay.Shard; sh != nil {
		return sh.Index
	}
	return -1
}

func shardName(sr arrowio.ShardReport) string {
	if sr.Count > 0 {
		return fmt.Sprintf("shard %d/%d", sr.Index, sr.Count)
	}
	return "part"
}

// rowSet is a growable bitset of trace row indices.
type rowSet []uint64

// add adds i and reports whether it was there already.
func (s *rowSet) add(i int64) bool {
	w := int(i / 64)
	if w >= len(*s) {
		*s = append(*s, make([]uint64, w+1-len(*s))...)
	}
	bit := uint64(1) << (i % 64)
	had := (*s)[w]&bit != 0
	(*s)[w] |= bit
	return had
}

// copyPart copies p's records and events into out, request ids offset by
// offset, and returns its report and the offset of the next part (past
// its highest id); with unique it counts trace rows sent again into rep.
// It adds each record, as written (its id offset), to all.
func copyPart(out *arrowio.Run, p *mergePart, offset uint64, unique bool, seen *rowSet, rep *arrowio.MergeReport, all *summary.Accumulator) (arrowio.ShardReport, uint64, error) {
	next := offset
	sr := arrowio.ShardReport{Dir: p.dir, Index: -1, RequestIDOffset: offset, PlannedRequests: -1, Completed: p.completed,
		RecordWriter: p.set.RecordWriter, ErrorsByKind: map[string]int{}}
	if sh := p.m.Replay.Shard; sh != nil {
		sr.Index, sr.Count = sh.Index, sh.Count
	}
	if p.m.Planned != nil {
		sr.PlannedRequests = *p.m.Planned
	}
	acc := summary.NewAccumulator(p.set.Options)
	w := out.Records()
	batch := make([]record.Request, 0, mergeBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.WriteRequests(batch)
		batch = batch[:0]
		return err
	}
	for req, err := range p.run.Requests() {
		if err != nil {
			return sr, next, fmt.Errorf("merge: %w", err)
		}
		acc.Add(&req)
		sr.Requests++
		if unique && req.TraceRow >= 0 && seen.add(req.TraceRow) {
			rep.DuplicateRows++
			if len(rep.DuplicateRowExamples) < maxExamples {
				rep.DuplicateRowExamples = append(rep.DuplicateRowExamples, req.TraceRow)
			}
		}
		req.RequestID += offset
		if req.ReleasedBy > 0 {
			req.ReleasedBy += offset // the same request, by its merged id
		}
		for k := range req.DependsOn { // read fresh for each row: ours
			req.DependsOn[k] += offset
		}
		next = max(next, req.RequestID+1)
		all.Add(&req)
		batch = append(batch, req)
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return sr, next, fmt.Errorf("merge: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return sr, next, fmt.Errorf("merge: %w", err)
	}
	if p.run.Has(arrowio.EventsTable) {
		events := make([]record.Event, 0, mergeBatch)
		for ev, err := range p.run.Events() {
			if err != nil {
				return sr, next, fmt.Errorf("merge: %w", err)
			}
			ev.RequestID += offset
			events = append(events, ev)
			if len(events) == cap(events) {
				if err := w.WriteEvents(events); err != nil {
					return sr, next, fmt.Errorf("merge: %w", err)
				}
				events = events[:0]
			}
		}
		if len(events) > 0 {
			if err := w.WriteEvents(events); err != nil {
				return sr, next, fmt.Errorf("merge: %w", err)
			}
		}
	}
	s := acc.Summary(p.set.Info)
	sr.OK, sr.Errors, sr.Warmup, sr.LateCount = s.RequestCount, s.ErrorRequestCount, s.WarmupCount, s.LateCount
	for k, n := range s.ErrorsByKind {
		sr.ErrorsByKind[string(k)] = n
	}
	sr.Lateness = s.Metrics["schedule_lateness"]
	return sr, next, nil
}

// copyTelemetry copies the server_metrics and gpu tables of the first
// part that has each.
func copyTelemetry(out *arrowio.Run, parts []*mergePart) error {
	for _, p := range parts {
		if !p.run.Has(arrowio.ServerMetricsTable) {
			continue
		}
		w, err := out.ServerMetrics()
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := copyRows(p.run.MetricSamples(), w.Write); err != nil {
			return err
		}
		break
	}
	for _, p := range parts {
		if !p.run.Has(arrowio.GPUTable) {
			continue
		}
		w, err := out.GPU()
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := copyRows(p.run.GPUSamples(), w.Write); err != nil {
			return err
		}
		break
	}
	return nil
}

func copyRows[T any](rows func(func(T, error) bool), write func([]T)) error {
	batch := make([]T, 0, mergeBatch)
	for r, err := range rows {
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) {
			write(batch)
			batch = make([]T, 0, mergeBatch)
		}
	}
	if len(batch) > 0 {
		write(batch)
	}
	return nil
}

// mergedSettings are the merged run's: the first part's options, its run
// information spanning every part's (planned requests added up, unknown
// when a part's are), and the record writers' reports added up.
func mergedSettings(parts []*mergePart) arrowio.Settings {
	set := parts[0].set
	var w arrowio.WriterReport
	hasW := false
	planned := 0
	for _, p := range parts {
		in := p.set.Info
		if !in.Start.IsZero() && (set.Info.Start.IsZero() || in.Start.Before(set.Info.Start)) {
			set.Info.Start = in.Start
		}
		if in.End.After(set.Info.End) {
			set.Info.End = in.End
		}
		set.Info.Cancelled = set.Info.Cancelled || in.Cancelled
		if set.Info.Stopped == "" {
			set.Info.Stopped = in.Stopped
		}
		// The manifest says 0 for a shard that planned nothing (more
		// shards than requests); the summary's 0 means unknown.
		switch {
		case planned < 0:
		case p.m.Planned != nil && *p.m.Planned >= 0:
			planned += *p.m.Planned
		case in.Planned > 0:
			planned += in.Planned
		default:
			planned = -1
		}
		if r := p.set.RecordWriter; r != nil {
			hasW = true
			w.Waits += r.Waits
			w.WaitNS += r.WaitNS
			w.Dropped += r.Dropped
			w.DroppedRecords += r.DroppedRecords
			w.DroppedEvents += r.DroppedEvents
			w.MaxQueuedBatches = max(w.MaxQueuedBatches, r.MaxQueuedBatches)
			if w.Error == "" {
				w.Error = r.Error
			}
		}
	}
	set.Info.Planned = max(planned, 0)
	set.Info.Start, set.Info.End = set.Info.Start.UTC(), set.Info.End.UTC()
	set.RecordWriter = nil
	if hasW {
		set.RecordWriter = &w
	}
	return set
}

// mergedManifest is the first part's manifest with the merge's facts:
// no shard, the requests planned by all, and under "merge" the
// directories merged.
func mergedManifest(parts []*mergePart, rep *arrowio.MergeReport, planned int64, timeBound bool) map[string]any {
	m := map[string]any{}
	for k, v := range parts[0].raw {
		m[k] = v
	}
	if r, ok := m["replay"].(map[string]any); ok {
		c := map[string]any{}
		for k, v := range r {
			c[k] = v
		}
		c["shard"] = nil
		m["replay"] = c
	}
	if id := parts[0].m.RunID; id != "" {
		m["run_id"] = id
	}
	if timeBound {
		m["planned_requests"] = -1
	} else {
		m["planned_requests"] = planned
	}
	dirs := make([]string, len(parts))
	for i, p := range parts {
		dirs[i] = p.dir
	}
	m["merge"] = map[string]any{"dirs": dirs, "shard_count": rep.ShardCount, "merged_at": time.Now().UTC()}
	return m
}

// waitComplete waits until every dir holds summary.json, for at most d
// or until ctx is done (an error).
func waitComplete(ctx context.Context, dirs []string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		done := true
		for _, dir := range dirs {
			if _, err := os.Stat(filepath.Join(dir, arrowio.SummaryFile)); err != nil {
				done = false
				break
			}
		}
		if done || !time.Now().Before(deadline) {
			return nil
		}
		t := time.NewTimer(min(mergePoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("merge: waiting for the shards: %w", ctx.Err())
		case <-t.C:
		}
	}
}
