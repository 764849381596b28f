package arrowio

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// CreateConfig says how [Create] makes a run directory and writes its
// tables. The zero value creates dir (or uses it when empty) and writes
// every table with the defaults of [Config].
type CreateConfig struct {
	// Tables says how every table of the run is written: the records and
	// events, and the telemetry tables (format, parts, metadata, OnError).
	Tables Config
	// Overwrite reuses a non-empty dir that holds an earlier run: its
	// files are removed first. A directory that is not a run directory,
	// or that holds files a run does not write, is refused all the same
	// and nothing is removed.
	Overwrite bool
	// Unique treats dir as a base name: when it exists, dir-2, dir-3, …
	// is created instead, so two runs started in the same second under
	// the same default name get a directory each. Overwrite is then
	// ignored.
	Unique bool
}

// Run is a run directory being written: the only writer of its files.
// Create makes it with its records table open; the telemetry tables are
// opened on demand; WriteManifest, WriteSummary and ExportAIPerf write the
// other files. Its methods are safe for concurrent use.
//
// Files (docs/format/records.md): records/ and events/ (or records.parquet
// …), server_metrics/ and gpu/ when telemetry was collected,
// manifest.json, summary.json, and the AIPerf exports.
type Run struct {
	dir     string
	cfg     Config
	records *RunWriter

	mu      sync.Mutex
	metrics *TelemetryWriter[record.MetricSample]
	gpu     *TelemetryWriter[record.GPUSample]
}

// Create makes dir ready for a new run and opens its records table. A
// missing dir is created with its parents and an empty one is used as
// is; a non-empty one is refused with a [*RunDirError] (matching
// [ErrRunDirInUse]) unless cfg.Overwrite or cfg.Unique says otherwise.
// cfg.Tables is validated before anything is created.
func Create(dir string, cfg CreateConfig) (*Run, error) {
	if err := cfg.Tables.Validate(); err != nil {
		return nil, err
	}
	if cfg.Unique {
		d, err := createUniqueDir(dir)
		if err != nil {
			return nil, err
		}
		dir = d
	} else if err := prepareRunDir(dir, cfg.Overwrite); err != nil {
		return nil, err
	}
	tc := cfg.Tables.withDefaults()
	rw, err := NewRunWriter(dir, tc)
	if err != nil {
		return nil, fmt.Errorf("open record files in %s: %w", dir, err)
	}
	return &Run{dir: dir, cfg: tc, records: rw}, nil
}

// Dir returns the run directory.
func (r *Run) Dir() string { return r.dir }

// Records returns the writer of the records and events tables: the
// run's record sink.
func (r *Run) Records() *RunWriter { return r.records }

// ServerMetrics opens the server_metrics table (docs/format/telemetry.md),
// written like the records (same format, parts or single file). It may be
// called once.
func (r *Run) ServerMetrics() (*TelemetryWriter[record.MetricSample], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics != nil {
		return nil, errors.New("server_metrics: opened twice")
	}
	w, err := NewMetricsWriter(r.dir, r.cfg)
	if err != nil {
		return nil, err
	}
	r.metrics = w
	return w, nil
}

// GPU opens the gpu table (docs/format/telemetry.md), written like the
// records. It may be called once.
func (r *Run) GPU() (*TelemetryWriter[record.GPUSample], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gpu != nil {
		return nil, errors.New("gpu: opened twice")
	}
	w, err := NewGPUWriter(r.dir, r.cfg)
	if err != nil {
		return nil, err
	}
	r.gpu = w
	return w, nil
}

// WriteManifest writes v as indented JSON to manifest.json atomically.
// The manifest's fields are specified in docs/format/manifest.md. A map
// v is written with schema_version [ManifestVersion] and kind
// [ManifestKind] set (v itself is not changed).
func (r *Run) WriteManifest(v any) error {
	if m, ok := v.(map[string]any); ok {
		m = maps.Clone(m)
		m["schema_version"], m["kind"] = ManifestVersion, ManifestKind
		v = m
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	return writeFileAtomic(filepath.Join(r.dir, ManifestFile), append(b, '\n'))
}

// WriteSummary writes summary.json atomically (a failed write leaves none,
// never a cut one): s as [summary.Summary.JSON] lays it out, with w, the
// record writer's report, under record_writer when not nil
// (docs/format/summary.md). See [SummaryJSON].
func (r *Run) WriteSummary(s *summary.Summary, w *WriterReport) error {
	b, err := SummaryJSON(s, w)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(r.dir, SummaryFile), b)
}

// ExportAIPerf writes AIPerf's two files from the run's records and s
// (see the package function [ExportAIPerf]). Call it after the records
// table is closed.
func (r *Run) ExportAIPerf(s *summary.Summary) error { return ExportAIPerf(r.dir, s) }

// Close closes the records table and the telemetry tables still open and
// returns the first error. Safe to call more than once.
func (r *Run) Close() error {
	err := r.records.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics != nil {
		err = errors.Join(err, r.metrics.Close())
	}
	if r.gpu != nil {
		err = errors.Join(err, r.gpu.Close())
	}
	return err
}

// WriteMergedSummary writes summary.json atomically, as WriteSummary
// does, with m under [MergeKey].
func (r *Run) WriteMergedSummary(s *summary.Summary, w *WriterReport, m *MergeReport) error {
	b, err := SummaryJSONMerged(s, w, m)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(r.dir, SummaryFile), b)
}
