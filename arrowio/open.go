package arrowio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/telemetry"
)

// RunReader reads a run directory back: its manifest, summary.json and
// every table, whatever the format (Parquet, Arrow IPC or JSON Lines;
// rolling parts or one file). Tables are read as iterators, one record
// batch at a time (at most 64 Ki rows, or one Parquet row group), so
// memory does not grow with the run. Files still being written (".tmp")
// are skipped. A RunReader holds no open file between calls; it is safe
// for concurrent use.
//
// Every file is read as [RunReader.Manifest] says: only regular files,
// and within the bounds of [MaxJSONFileBytes], [MaxStringBytes],
// [MaxRowBytes] and [MaxBatchBytes], so that a forged or damaged run
// directory is refused, not read into memory.
type RunReader struct {
	dir string
	ctx context.Context // nil: never cancelled
}

// Open returns a reader of the run directory dir. It fails when dir is
// not a directory; a directory without a records table opens, and
// [RunReader.Requests] then reports [ErrNoTable].
func Open(dir string) (*RunReader, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open run directory %s: not a directory", dir)
	}
	return &RunReader{dir: dir}, nil
}

// OpenContext is [Open] for a reader whose reads end when ctx is done:
// each file read and each record batch first checks ctx, and a table
// iterator then yields ctx's error.
func OpenContext(ctx context.Context, dir string) (*RunReader, error) {
	r, err := Open(dir)
	if err != nil {
		return nil, err
	}
	r.ctx = ctx
	return r, nil
}

// err is the reader's context's error, nil without one.
func (r *RunReader) err() error {
	if r.ctx == nil {
		return nil
	}
	return r.ctx.Err()
}

// Dir returns the run directory.
func (r *RunReader) Dir() string { return r.dir }

// Has reports whether the run has table name (RecordsTable, EventsTable,
// ServerMetricsTable, GPUTable) with at least one complete file.
func (r *RunReader) Has(name string) bool {
	_, err := TableFiles(r.dir, name)
	return err == nil
}

// Manifest returns manifest.json as written. Its fields are specified in
// docs/format/manifest.md. The error wraps fs.ErrNotExist when the run
// has none, and [ErrNotRegular] when it is not a regular file (a FIFO, a
// device, a symbolic link); a file over [MaxJSONFileBytes] is refused
// unread.
func (r *RunReader) Manifest() (json.RawMessage, error) {
	return r.jsonFile(ManifestFile)
}

// Summary returns summary.json as written. The error wraps
// fs.ErrNotExist when the run has none (it was killed before the end);
// it is read as [RunReader.Manifest] is.
func (r *RunReader) Summary() (json.RawMessage, error) {
	return r.jsonFile(SummaryFile)
}

func (r *RunReader) jsonFile(name string) (json.RawMessage, error) {
	p := filepath.Join(r.dir, name)
	if err := r.err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	b, err := readRunFile(p, MaxJSONFileBytes)
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("read %s: not valid JSON", p)
	}
	return b, nil
}

// Requests returns the rows of the records table in file order. Values
// that are null in the file become the record package's "absent" values
// (0 for times and durations, -1 for server counts, "" for strings, nil
// for DependsOn, which is allocated for each row and is the caller's). An
// error (no records table: [ErrNoTable]; a corrupt file, naming it) is
// yielded once, last. Files of records/v1 read as records/v2 without
// parent_request_ids.
func (r *RunReader) Requests() iter.Seq2[record.Request, error] {
	return tableRows(r.err, r.dir, RecordsTable, appendRequests)
}

// Events returns the rows of the events table in file order, like
// Requests.
func (r *RunReader) Events() iter.Seq2[record.Event, error] {
	return tableRows(r.err, r.dir, EventsTable, appendEvents)
}

// MetricSamples returns the rows of the server_metrics table in file
// order (scrape by scrape), like Requests.
func (r *RunReader) MetricSamples() iter.Seq2[record.MetricSample, error] {
	return tableRows(r.err, r.dir, ServerMetricsTable, appendMetricSamples)
}

// GPUSamples returns the rows of the gpu table in file order, like
// Requests.
func (r *RunReader) GPUSamples() iter.Seq2[record.GPUSample, error] {
	return tableRows(r.err, r.dir, GPUTable, appendGPUSamples)
}

// Settings are what a run directory says about how its summary was
// computed, beyond the records: the run's options (from manifest.json),
// its run information, the record writer's report and the calibration the
// run applied (from summary.json).
type Settings struct {
	Info    summary.RunInfo
	Options summary.Options
	// RecordWriter is summary.json's record_writer, nil when absent.
	RecordWriter *WriterReport
	// Merge is summary.json's merge (a run merged from shards), nil when
	// absent.
	Merge *MergeReport
}

// Settings reads manifest.json and summary.json. A missing file gives
// defaults (a run killed before its summary still has records); a
// malformed one is an error naming the file and key.
func (r *RunReader) Settings() (Settings, error) {
	var s Settings
	var manifest struct {
		Streaming           *bool  `json:"streaming"`
		UseServerTokenCount bool   `json:"use_server_token_count"`
		Goodput             string `json:"goodput"`
		Prompts             struct {
			ISLCorrection int `json:"isl_correction"`
		} `json:"prompts"`
		// Targets lists a run's targets when it had several.
		Targets []summary.TargetInfo `json:"targets"`
		Replay  struct {
			LateThreshold string `json:"late_threshold"`
			// Manifests written before 2026-11-22 held Go field names and ns.
			LegacyLateThreshold time.Duration `json:"LateThreshold"`
		} `json:"replay"`
	}
	mpath := filepath.Join(r.dir, ManifestFile)
	if b, err := r.Manifest(); err == nil {
		if err := json.Unmarshal(b, &manifest); err != nil {
			return s, fmt.Errorf("read %s: %w", mpath, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	var sum struct {
		RunInfo      *summary.RunInfo     `json:"run_info"`
		RecordWriter *WriterReport        `json:"record_writer"`
		Merge        *MergeReport         `json:"merge"`
		Calibration  *summary.Calibration `json:"calibration"`
	}
	if b, err := r.Summary(); err == nil {
		if err := json.Unmarshal(b, &sum); err != nil {
			return s, fmt.Errorf("read %s: %w", filepath.Join(r.dir, SummaryFile), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	if sum.RunInfo != nil {
		s.Info = *sum.RunInfo
	}
	s.RecordWriter, s.Merge = sum.RecordWriter, sum.Merge
	// The calibration the run applied is a fact of the run, not of its
	// rows: summary.json holds it, and the verdict is recomputed with it.
	s.Options.Calibration = sum.Calibration
	s.Options.Streaming = s.Info.Streaming
	s.Options.ISLCorrection = manifest.Prompts.ISLCorrection
	if manifest.Streaming != nil {
		s.Options.Streaming = *manifest.Streaming
		s.Info.Streaming = *manifest.Streaming
	}
	s.Options.UseServerTokenCount = manifest.UseServerTokenCount
	if len(manifest.Targets) > 1 {
		s.Options.Targets = manifest.Targets
	}
	s.Options.LateThreshold = manifest.Replay.LegacyLateThreshold
	if v := manifest.Replay.LateThreshold; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return s, fmt.Errorf("read %s: replay.late_threshold %q: %w", mpath, v, err)
		}
		s.Options.LateThreshold = d
	}
	if manifest.Goodput != "" {
		slos, err := summary.ParseGoodput(manifest.Goodput)
		if err != nil {
			return s, fmt.Errorf("read %s: goodput: %w", mpath, err)
		}
		s.Options.Goodput = slos
	}
	return s, nil
}

// Summarize computes the run's summary from its records table, with info
// and opts (usually [RunReader.Settings]'), and the telemetry view of its
// profile window from the server_metrics and gpu tables when the run has
// them: the summary the run itself computed, for the same options. It
// reads each table once, a batch at a time.
func (r *RunReader) Summarize(info summary.RunInfo, opts summary.Options) (*summary.Summary, error) {
	acc := summary.NewAccumulator(opts)
	for req, err := range r.Requests() {
		if err != nil {
			return nil, err
		}
		acc.Add(&req)
	}
	return r.SummarizeFrom(acc, info)
}

// SummarizeFrom is [RunReader.Summarize] for a caller that has fed acc
// every record of the run's records table itself, in file order (a merge
// that writes the records): it reads no request, only the telemetry
// tables.
func (r *RunReader) SummarizeFrom(acc *summary.Accumulator, info summary.RunInfo) (*summary.Summary, error) {
	s := acc.Summary(info)
	hasMetrics, hasGPU := r.Has(ServerMetricsTable), r.Has(GPUTable)
	if !hasMetrics && !hasGPU {
		return s, nil
	}
	t := &summary.Telemetry{}
	if hasMetrics {
		// One scrape is the run of consecutive samples with one target
		// and one time, as the scraper wrote it; a scrape may span two
		// batches, so it is gathered before it is added.
		ta := telemetry.NewAccumulator()
		var scrape []record.MetricSample
		for m, err := range r.MetricSamples() {
			if err != nil {
				return nil, err
			}
			if len(scrape) > 0 && (m.Target != scrape[0].Target || m.TimeNS != scrape[0].TimeNS) {
				ta.Add(scrape)
				scrape = scrape[:0]
			}
			scrape = append(scrape, m)
		}
		ta.Add(scrape)
		t.Servers = ta.Summarize(s.WindowStartNS, s.WindowEndNS)
	}
	if hasGPU {
		var in []record.GPUSample // the samples of the window
		for g, err := range r.GPUSamples() {
			if err != nil {
				return nil, err
			}
			if g.TimeNS >= s.WindowStartNS && g.TimeNS <= s.WindowEndNS {
				in = append(in, g)
			}
		}
		t.GPU = telemetry.SummarizeGPU(in, s.WindowStartNS, s.WindowEndNS, s.TotalOSL)
	}
	s.AttachTelemetry(t)
	return s, nil
}
