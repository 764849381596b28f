package adaptive

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// The artifacts' names and version (docs/format/adaptive-scale.md).
const (
	EventsFile    = "adaptive_scale_events.jsonl"
	SummaryFile   = "adaptive_scale_summary.json"
	SchemaVersion = 1
)

// Event is one line of adaptive_scale_events.jsonl: one per assessment
// window, and the first when the run starts.
type Event struct {
	SchemaVersion int    `json:"schema_version"`
	Event         string `json:"event"`
	// TimestampNS is when the window ended (Unix ns, the run's clock);
	// WindowStartNS when it began.
	TimestampNS     int64  `json:"timestamp_ns"`
	WindowStartNS   int64  `json:"window_start_ns,omitempty"`
	ControlVariable string `json:"control_variable"`
	Before          int    `json:"control_value_before"`
	After           int    `json:"control_value_after"`
	// Completed and Errors count the window's measured requests;
	// SLAValues its SLA metrics ("request_latency:p95": ms).
	Completed int                `json:"completed_requests"`
	Errors    int                `json:"error_count"`
	SLAValues map[string]float64 `json:"sla_values,omitempty"`
	// Passed is the verdict (null: inconclusive); Binding the SLA that
	// decided it.
	Passed    *bool  `json:"passed"`
	Binding   string `json:"binding_sla,omitempty"`
	LastPass  int    `json:"last_passing_value"`
	FirstFail int    `json:"first_failing_value"`
	Boundary  int    `json:"boundary_value"`
	Reason    string `json:"reason,omitempty"`
}

// Summary is adaptive_scale_summary.json.
type Summary struct {
	SchemaVersion   int      `json:"schema_version"`
	ControlVariable string   `json:"control_variable"`
	Min             int      `json:"control_min"`
	Max             int      `json:"control_max"`
	PeriodNS        int64    `json:"assessment_period_ns"`
	SustainNS       int64    `json:"sustain_duration_ns"`
	SLAs            []string `json:"slas"`
	Outcome
	// Windows are every assessment, as in the events file.
	Windows []Event `json:"windows"`
}

// Run is one run's controller, meter and artifacts: replay calls
// [Run.Assess] every period, the engine's collector [Run.Observe] with
// every completed request. [Run.Open] must return before the run starts;
// then its methods are safe for concurrent use. The run starts at
// Config.Min.
type Run struct {
	cfg   Config
	meter *Meter
	mu    sync.Mutex
	ctl   *Controller
	dir   string
	f     *os.File
	w     *bufio.Writer
	evs   []Event
	err   error
	// settling: the setting changed at the end of the last window.
	settling bool
}

// NewRun returns a run of cfg (which must be valid). Its artifacts are
// written once [Run.Open] gave it a directory.
func NewRun(cfg Config) *Run {
	return &Run{cfg: cfg, ctl: NewController(cfg)}
}

// Open creates the events file in dir, measures windows with opts, and
// starts the first window at startNS.
func (r *Run) Open(dir string, opts summary.Options, startNS int64) error {
	f, err := os.Create(filepath.Join(dir, EventsFile))
	if err != nil {
		return fmt.Errorf("adaptive scale: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dir, r.f, r.w = dir, f, bufio.NewWriter(f)
	r.meter = NewMeter(opts, r.cfg.SLAs, startNS)
	r.emit(Event{Event: EventStarted, TimestampNS: startNS, Before: r.cfg.Min, After: r.cfg.Min, Reason: "starting at the minimum"})
	return nil
}

// Observe adds a completed request to the current window.
func (r *Run) Observe(rec *record.Request) {
	if m := r.meter; m != nil {
		m.Observe(rec)
	}
}

// Assess ends the window at nowNS (the run's clock), decides, writes the
// event, and returns the setting from now on; stop is true once the
// controller is done.
func (r *Run) Assess(nowNS int64) (setting int, stop bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.meter == nil {
		return r.ctl.Setting(), false
	}
	w := r.meter.Take(nowNS)
	var v Verdict
	if !r.settling {
		v = Judge(r.cfg.SLAs, r.cfg.MinCompleted, w)
	}
	d := r.ctl.Step(v, nowNS)
	if r.settling && !d.Done {
		d.Reason = "settling: the first window after a change is not judged"
	}
	// The window after a change holds requests sent under the old
	// setting and the queue they left at the server: it is not judged.
	r.settling = d.After != d.Before
	o := r.ctl.Outcome()
	ev := Event{Event: d.Event, TimestampNS: nowNS, WindowStartNS: w.StartNS, Before: d.Before, After: d.After,
		Completed: w.Completed, Errors: w.Errors, SLAValues: w.Values, Binding: v.Binding,
		LastPass: o.LastPass, FirstFail: o.FirstFail, Boundary: o.Boundary, Reason: d.Reason}
	if v.Conclusive {
		ev.Passed = &v.Pass
	}
	r.emit(ev)
	return d.After, d.Done
}

// Close ends the run (a controller not done by then is incomplete:
// reason says why the run ended), writes the summary and closes the
// events file. It returns the summary and the first write error.
func (r *Run) Close(reason string) (*Summary, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctl.End(reason)
	s := &Summary{SchemaVersion: SchemaVersion, ControlVariable: VariableConcurrency, Min: r.cfg.Min, Max: r.cfg.Max,
		PeriodNS: int64(r.cfg.Period), SustainNS: int64(r.cfg.Sustain), Outcome: r.ctl.Outcome(), Windows: r.evs}
	for _, c := range r.cfg.SLAs {
		s.SLAs = append(s.SLAs, fmt.Sprintf("%s:%s:%g", c.Metric, c.Op, c.Threshold))
	}
	if r.f == nil {
		return s, r.err
	}
	r.fail(r.w.Flush())
	r.fail(r.f.Close())
	r.f = nil
	b, err := json.MarshalIndent(s, "", "  ")
	r.fail(err)
	if err == nil {
		r.fail(writeAtomic(filepath.Join(r.dir, SummaryFile), append(b, '\n')))
	}
	return s, r.err
}

// emit writes ev as one line, flushed: pollers key off the events.
func (r *Run) emit(ev Event) {
	ev.SchemaVersion, ev.ControlVariable = SchemaVersion, VariableConcurrency
	r.evs = append(r.evs, ev)
	b, err := json.Marshal(ev)
	if err != nil {
		r.fail(err)
		return
	}
	_, err = r.w.Write(append(b, '\n'))
	r.fail(err)
	r.fail(r.w.Flush())
}

func (r *Run) fail(err error) {
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("adaptive scale: %w", err)
	}
}

// writeAtomic writes b to path through a temporary file and a rename.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return nil
}
