package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// The per-request latencies a run keeps, by their summary tags.
var latencyTags = [nLatency]string{
	"time_to_first_token", "time_to_first_output_token", "inter_token_latency", "request_latency",
}

// latencyNames are the short names of latencyTags in metric names.
var latencyNames = [nLatency]string{"ttft", "ttfo", "itl", "e2e"}

const nLatency = 4

// request is what a comparison keeps of one measured request.
type request struct {
	row    int64             // trace row; -1 for synthetic load
	job    int64             // a fan-out's request id / targets: one per trace request
	lat    [nLatency]float64 // ms; NaN when the metric does not exist for it
	ok     bool
	good   bool
	osl    int64 // ok requests only
	isl    int64 // input tokens sent, every request
	cached int64 // server cached prompt tokens; -1 unknown
	prompt int64 // server prompt tokens; -1 unknown
	// sent and end bound the request in the benchmark duration (Unix
	// ns); sent is 0 for a request never sent.
	sent, end int64
}

// Run is one side of a comparison: the measured requests of a run
// directory (or of one of its targets) and what its manifest and summary
// say about how it was measured. Build it with [Load].
type Run struct {
	// Label names the side in tables: the directory as given.
	Label string
	// Dir is the run directory.
	Dir string
	// TraceSHA256 is the manifest's trace_sha256, "" for a synthetic load.
	TraceSHA256 string
	// Model and Host are the manifest's model and host.hostname.
	Model, Host string
	// Goodput reports whether the run had goodput SLOs.
	Goodput bool
	// Warmup counts the warmup requests left out.
	Warmup int
	// Target is the target whose requests the side holds, -1 for all.
	Target int
	// Targets is the number of targets of the run (1 with one) and
	// FanOut whether it sent every request to each.
	Targets int
	FanOut  bool

	reqs    []request
	grades  []grade // the graded requests (accuracy.go)
	quality []string
	// inputs are summary.json's comparability warnings (the target's, for
	// one target): a shared server, a warm prefix cache.
	inputs []string
	noise  noise
}

// noise is what a run says of its own measurement error: the evidence of
// its measurement quality, in ms.
type noise struct {
	// degraded reports a measurement quality other than good.
	degraded bool
	// readLagP90 and latenessP99 are client_read_lag's p90 and
	// schedule_lateness's p99 (NaN unknown).
	readLagP90, latenessP99 float64
	// calibrationMS is the p99 timing error bound of the calibration
	// the run applied (NaN without one).
	calibrationMS float64
}

// Requests returns the number of measured requests (ok and failed).
func (r *Run) Requests() int { return len(r.reqs) }

// manifestInfo is what Load reads from manifest.json.
type manifestInfo struct {
	TraceSHA256 *string `json:"trace_sha256"`
	Model       string  `json:"model"`
	Host        struct {
		Hostname string `json:"hostname"`
	} `json:"host"`
	Replay struct {
		MaxLateness string `json:"max_lateness"`
	} `json:"replay"`
	Targets []struct {
		URL   string `json:"url"`
		Model string `json:"model"`
	} `json:"targets"`
	URLPolicy string `json:"url_policy"`
}

// Load reads the measured requests of the run directory dir, with the
// manifest and summary facts a comparison checks. A run without
// manifest.json or summary.json still loads (a run killed before its
// summary); a malformed one is an error naming the file. A run with
// several targets is read whole, its targets mixed (and a warning says
// so): [LoadTarget] reads one.
// Reading ends, with ctx's error, when ctx is done.
func Load(ctx context.Context, dir string) (*Run, error) { return LoadTarget(ctx, dir, -1) }

// LoadTarget is [Load] of the requests of one target (its index in
// records.target) of a run with several; -1 reads them all.
func LoadTarget(ctx context.Context, dir string, target int) (*Run, error) {
	rr, err := arrowio.OpenContext(ctx, dir)
	if err != nil {
		return nil, err
	}
	settings, err := rr.Settings()
	if err != nil {
		return nil, err
	}
	run := &Run{Label: dir, Dir: dir, Goodput: len(settings.Options.Goodput) > 0, Target: target, Targets: 1}
	var mf manifestInfo
	if b, err := rr.Manifest(); err == nil {
		if err := json.Unmarshal(b, &mf); err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, arrowio.ManifestFile), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if mf.TraceSHA256 != nil {
		run.TraceSHA256 = *mf.TraceSHA256
	}
	run.Model, run.Host = mf.Model, mf.Host.Hostname
	if n := len(mf.Targets); n > 1 {
		run.Targets, run.FanOut = n, mf.URLPolicy == "fan-out"
	}
	switch {
	case target >= run.Targets:
		return nil, fmt.Errorf("%s: no target %d: the run has %d (0 to %d)", dir, target, run.Targets, run.Targets-1)
	case target >= 0:
		run.Label = fmt.Sprintf("%s#%d", dir, target)
		if run.Targets > 1 {
			run.Model = mf.Targets[target].Model
		}
	case run.Targets > 1:
		run.quality = append(run.quality, fmt.Sprintf("the run has %d targets and their requests are mixed: compare its targets with --targets", run.Targets))
	}

	run.noise = noise{readLagP90: math.NaN(), latenessP99: math.NaN(), calibrationMS: math.NaN()}
	opts := settings.Options
	var lateness, readLag, itl []float64
	for r, err := range rr.Requests() {
		if err != nil {
			return nil, err
		}
		if target >= 0 && int(r.Target) != target {
			continue
		}
		if r.Phase == record.PhaseWarmup {
			run.Warmup++
			continue
		}
		if r.Graded {
			run.grades = append(run.grades, grade{item: r.AccuracyItem, correct: r.AccuracyCorrect})
		}
		q := request{row: r.TraceRow, job: int64(r.RequestID) / int64(run.Targets), ok: r.OK(), isl: int64(r.InputTokens), cached: -1, prompt: -1}
		for i := range q.lat {
			q.lat[i] = math.NaN()
		}
		summary.EachValue(&r, opts, func(tag, _ string, v float64) {
			switch tag {
			case latencyTags[0]:
				q.lat[0] = v
			case latencyTags[1]:
				q.lat[1] = v
			case latencyTags[2]:
				q.lat[2] = v
				itl = append(itl, v)
			case latencyTags[3]:
				q.lat[3] = v
			case "schedule_lateness":
				lateness = append(lateness, v)
			case "client_read_lag":
				readLag = append(readLag, v)
			}
		})
		if q.ok {
			q.good = summary.Good(&r, opts)
			q.osl = r.OutputLength()
			if r.ServerCachedTokens >= 0 && r.ServerPromptTokens > 0 {
				q.cached, q.prompt = int64(r.ServerCachedTokens), int64(r.ServerPromptTokens)
			}
		}
		// The benchmark duration spans the first send to the last
		// response end of any outcome, as engine/summary computes it.
		if r.SentNS != 0 && r.ErrorKind != record.ErrNotDelivered {
			q.sent, q.end = r.SentNS, r.EndNS
			if r.OK() {
				q.end = r.SentNS + r.E2ENS
			}
		}
		run.reqs = append(run.reqs, q)
	}
	if err := run.checkQuality(rr, mf, lateness, readLag, itl); err != nil {
		return nil, err
	}
	return run, nil
}

// checkQuality notes what makes the run's numbers doubtful. summary.json's
// measurement_quality (the target's, for one target of a run with
// several) says it when the run has one; for a run without, the same
// rules are applied here: p99 lateness over its --max-lateness budget, a
// client read lag longer than the gap between tokens (the rule of the
// replay's own note).
func (r *Run) checkQuality(rr *arrowio.RunReader, mf manifestInfo, lateness, readLag, itl []float64) error {
	b, err := rr.Summary()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(lateness) > 0 {
		r.noise.latenessP99 = summary.Compute(lateness).P99
	}
	if len(readLag) > 0 {
		r.noise.readLagP90 = summary.Compute(readLag).P90
	}
	if err == nil {
		var s struct {
			Quality     json.RawMessage `json:"measurement_quality"`
			Calibration *struct {
				MaxErrorMS float64 `json:"max_error_ms"`
			} `json:"calibration"`
			Comparability struct {
				Warnings []string `json:"warnings"`
			} `json:"comparability"`
			Targets []struct {
				Quality       json.RawMessage `json:"measurement_quality"`
				Comparability struct {
					Warnings []string `json:"warnings"`
				} `json:"comparability"`
			} `json:"targets"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("read %s: %w", filepath.Join(r.Dir, arrowio.SummaryFile), err)
		}
		if s.Calibration != nil && s.Calibration.MaxErrorMS > 0 {
			r.noise.calibrationMS = s.Calibration.MaxErrorMS
		}
		q := s.Quality
		r.inputs = s.Comparability.Warnings
		if r.Target >= 0 && r.Target < len(s.Targets) {
			q = s.Targets[r.Target].Quality
			// The run's own check names each server with its target's counts.
			r.inputs = s.Targets[r.Target].Comparability.Warnings
			for _, w := range s.Comparability.Warnings {
				if strings.HasPrefix(w, "shared server") && !slices.Contains(r.inputs, w) {
					r.inputs = append(r.inputs, w)
				}
			}
		}
		if len(q) > 0 {
			if msg := qualityProblem(q); msg != "" {
				r.quality = append(r.quality, "measurement_quality: "+msg)
				r.noise.degraded = true
			}
			return nil
		}
	}
	if v := mf.Replay.MaxLateness; v != "" {
		budget, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("read %s: replay.max_lateness %q: %w", filepath.Join(r.Dir, arrowio.ManifestFile), v, err)
		}
		if budget > 0 && len(lateness) > 0 {
			st := summary.Compute(lateness)
			if st.P99 > float64(budget)/1e6 {
				r.quality = append(r.quality, fmt.Sprintf("p99 schedule lateness %.3f ms is over its --max-lateness budget %v", st.P99, budget))
				r.noise.degraded = true
			}
		}
	}
	// The replay notes a read lag whose p90 passes the median gap between
	// tokens: tokens that waited together were stamped together.
	if len(readLag) > 0 && len(itl) > 0 && len(readLag)*10 > len(r.reqs) {
		lag, gap := summary.Compute(readLag), summary.Compute(itl)
		if gap.P50 > 0 && lag.P90 > gap.P50 {
			r.quality = append(r.quality, fmt.Sprintf("client read lag p90 %.3f ms is longer than the median gap between tokens %.3f ms: the client machine was behind", lag.P90, gap.P50))
			r.noise.degraded = true
		}
	}
	return nil
}

// qualityProblem reads summary.json's measurement_quality: an object
// whose "verdict" (or "status") is "ok" or "good" passes; anything else
// is returned with its "reason" or "message" when it has one.
func qualityProblem(raw json.RawMessage) string {
	var q struct {
		Verdict string   `json:"verdict"`
		Status  string   `json:"status"`
		OK      *bool    `json:"ok"`
		Reason  string   `json:"reason"`
		Message string   `json:"message"`
		Reasons []string `json:"reasons"`
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		return ""
	}
	v := q.Verdict
	if v == "" {
		v = q.Status
	}
	bad := q.OK != nil && !*q.OK
	switch v {
	case "", "ok", "good", "pass", "passed":
	default:
		bad = true
	}
	if !bad {
		return ""
	}
	why := q.Reason
	if why == "" {
		why = q.Message
	}
	if why == "" && len(q.Reasons) > 0 {
		why = q.Reasons[0]
	}
	if v == "" {
		v = "not ok"
	}
	if why != "" {
		return v + " (" + why + ")"
	}
	return v
}

// Replicates returns the run directories dir stands for: the runs of a
// directory of repeated runs (replay --runs N, a sweep point with --runs;
// arrowio.RepeatedRuns lists them), in order; else dir itself.
func Replicates(dir string) ([]string, error) {
	dirs, repeated, err := arrowio.RepeatedRuns(dir)
	switch {
	case err != nil:
		return nil, err
	case repeated:
		return dirs, nil
	}
	return []string{dir}, nil
}

// grade is one graded request of a run: its item and whether it was right.
type grade struct {
	item    string
	correct bool
}
