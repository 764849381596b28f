package report

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"slices"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// runData is what the charts of one run are made from: its summary, its
// manifest, and the columns of its requests the plots need (about 80
// bytes per request).
type runData struct {
	label, color, dir string
	manifest          map[string]any // nil when the run has none
	manifestRaw       json.RawMessage
	summaryJSON       map[string]any // summary.json as written; nil when absent
	set               arrowio.Settings
	sum               *summary.Summary

	t0 int64 // Unix ns: the earliest intended or sent time; x = 0 on time axes

	// One entry per request, in file order. Times are Unix ns (0: did not
	// happen); latencies ms, NaN when the summary counts none for the
	// request (summary.EachValue says which).
	intended, sent, first, last, end []int64
	ttft, ttfo, itl, e2e             []float32
	lateness, readLag, cacheErr      []float32
	isl, osl                         []int32
	kind                             []uint8 // index in kinds; 0 = ok
	warm                             []bool

	kinds []record.ErrorKind // kinds[0] = ErrNone

	metrics []record.MetricSample // the server_metrics rows reprise knows
	gpu     []record.GPUSample
}

// load reads run r: the manifest, summary.json, and every request once,
// feeding the summary's accumulator and the columns together.
func load(r *arrowio.RunReader, label, color string, maxPoints int) (*runData, error) {
	d := &runData{label: label, color: color, dir: r.Dir(), kinds: []record.ErrorKind{record.ErrNone}}
	if raw, err := r.Manifest(); err == nil {
		d.manifestRaw = raw
		if err := json.Unmarshal(raw, &d.manifest); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if raw, err := r.Summary(); err == nil {
		if err := json.Unmarshal(raw, &d.summaryJSON); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	set, err := r.Settings()
	if err != nil {
		return nil, err
	}
	d.set = set
	acc := summary.NewAccumulator(set.Options)
	kindIdx := map[record.ErrorKind]uint8{record.ErrNone: 0}
	d.t0 = math.MaxInt64
	for req, err := range r.Requests() {
		if err != nil {
			return nil, err
		}
		acc.Add(&req)
		d.add(&req, kindIdx)
	}
	if d.t0 == math.MaxInt64 {
		d.t0 = 0
	}
	d.sum = acc.Summary(set.Info)
	if r.Has(arrowio.ServerMetricsTable) {
		if d.metrics, err = knownSamples(r); err != nil {
			return nil, err
		}
	}
	if r.Has(arrowio.GPUTable) {
		for g, err := range r.GPUSamples() {
			if err != nil {
				return nil, err
			}
			d.gpu = append(d.gpu, g)
		}
	}
	return d, nil
}

// nan32 is the float32 NaN the columns use for "no value".
var nan32 = float32(math.NaN())

// add appends one request to the columns.
func (d *runData) add(r *record.Request, kindIdx map[record.ErrorKind]uint8) {
	start := r.IntendedNS
	if start == 0 || r.SentNS != 0 && r.SentNS < start {
		start = r.SentNS
	}
	if start != 0 && start < d.t0 {
		d.t0 = start
	}
	k, ok := kindIdx[r.ErrorKind]
	if !ok {
		if len(d.kinds) < 255 {
			k = uint8(len(d.kinds))
			d.kinds = append(d.kinds, r.ErrorKind)
		} else {
			k = 254 // a file with more kinds than the contract names
		}
		kindIdx[r.ErrorKind] = k
	}
	ttft, ttfo, itl, e2e, late, lag, cache := nan32, nan32, nan32, nan32, nan32, nan32, nan32
	summary.EachValue(r, d.set.Options, func(tag, _ string, v float64) {
		switch tag {
		case "time_to_first_token":
			ttft = float32(v)
		case "time_to_first_output_token":
			ttfo = float32(v)
		case "inter_token_latency":
			itl = float32(v)
		case "request_latency":
			e2e = float32(v)
		case "schedule_lateness":
			late = float32(v)
		case "client_read_lag":
			lag = float32(v)
		case "cached_tokens_error":
			cache = float32(v)
		}
	})
	// A failed request's time to its first token is still its TTFT on
	// the scatter of TTFT against send time.
	if !r.OK() && r.FirstTokenNS != 0 && r.SentNS != 0 {
		ttft = float32(float64(r.FirstTokenNS-r.SentNS) / 1e6)
	}
	d.intended = append(d.intended, r.IntendedNS)
	d.sent = append(d.sent, r.SentNS)
	d.first = append(d.first, r.FirstTokenNS)
	d.last = append(d.last, r.LastTokenNS)
	d.end = append(d.end, r.EndNS)
	d.ttft = append(d.ttft, ttft)
	d.ttfo = append(d.ttfo, ttfo)
	d.itl = append(d.itl, itl)
	d.e2e = append(d.e2e, e2e)
	d.lateness = append(d.lateness, late)
	d.readLag = append(d.readLag, lag)
	d.cacheErr = append(d.cacheErr, cache)
	d.isl = append(d.isl, r.InputTokens)
	d.osl = append(d.osl, int32(min(r.OutputLength(), math.MaxInt32)))
	d.kind = append(d.kind, k)
	d.warm = append(d.warm, r.Phase == record.PhaseWarmup)
}

// n is the number of requests.
func (d *runData) n() int { return len(d.kind) }

// knownSamples reads the server_metrics rows whose family reprise knows
// (telemetry.Role), the only ones the report plots.
func knownSamples(r *arrowio.RunReader) ([]record.MetricSample, error) {
	var out []record.MetricSample
	for m, err := range r.MetricSamples() {
		if err != nil {
			return nil, err
		}
		if m.Part != "" && m.Part != "sum" && m.Part != "count" {
			continue // buckets and quantiles: the means come from sum/count
		}
		if role, _ := roleOf(m.Metric); role == "" {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// seconds converts a Unix ns time to seconds since the run's start
// (NaN for 0: did not happen).
func (d *runData) seconds(ns int64) float64 {
	if ns == 0 {
		return math.NaN()
	}
	return float64(ns-d.t0) / 1e9
}

// span is the run's length in seconds: from t0 to the last end.
func (d *runData) span() float64 {
	var last int64
	for i := range d.end {
		last = max(last, d.end[i], d.sent[i], d.intended[i])
	}
	for i := range d.metrics {
		if t := d.metrics[i].TimeNS; t <= last+int64(time.Minute) {
			last = max(last, t)
		}
	}
	if last <= d.t0 {
		return 0
	}
	return float64(last-d.t0) / 1e9
}

// warmup is the run's warmup span in seconds since t0 (sent of the first
// warmup request to the last warmup end), ok false without warmup.
func (d *runData) warmup() (Span, bool) {
	lo, hi := int64(math.MaxInt64), int64(0)
	for i, w := range d.warm {
		if !w {
			continue
		}
		if s := d.sent[i]; s != 0 {
			lo = min(lo, s)
		} else if s := d.intended[i]; s != 0 {
			lo = min(lo, s)
		}
		hi = max(hi, d.end[i])
	}
	if hi == 0 || lo == math.MaxInt64 {
		return Span{}, false
	}
	return Span{From: d.seconds(lo), To: d.seconds(max(hi, lo)), Label: "warmup"}, true
}

// sortedFinite returns the finite values of col, sorted, as float64.
func sortedFinite(col []float32) []float64 {
	out := make([]float64, 0, len(col))
	for _, v := range col {
		if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
			out = append(out, float64(v))
		}
	}
	slices.Sort(out)
	return out
}
