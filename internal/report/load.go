package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// load reads run r: the manifest, summary.json, and every request once
// (the first pass), feeding the summary's accumulator and the run's
// extent and counts, and spilling each request's reqView for the second
// pass. target >= 0 reads that target's records alone, with its
// summary.json entry and its server's samples (a run with several
// targets, one runData each); -1 reads the whole run. The caller closes
// d.views, also on error.
func load(r *arrowio.RunReader, label, color string, target int) (d *runData, err error) {
	d = &runData{label: label, color: color, dir: r.Dir(), kinds: []record.ErrorKind{record.ErrNone},
		kindIdx: map[record.ErrorKind]uint8{record.ErrNone: 0}, warmLo: math.MaxInt64}
	d.latLo, d.latHi = make([]float64, len(latencyMetrics)), make([]float64, len(latencyMetrics))
	for i := range d.latLo {
		d.latLo[i] = math.Inf(1)
	}
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
	metricsPage := ""
	if target >= 0 && target < len(set.Options.Targets) {
		tg := set.Options.Targets[target]
		set.Info.URL, set.Info.Model = tg.URL, tg.Model
		set.Options.Targets = nil
		metricsPage, _ = summary.MetricsURL(tg.URL)
		if ts, ok := d.summaryJSON["targets"].([]any); ok && target < len(ts) {
			if m, ok := ts[target].(map[string]any); ok {
				d.summaryJSON = m
			}
		}
	}
	d.set = set
	views, err := newSpill()
	if err != nil {
		return nil, err
	}
	d.views = views
	defer func() {
		if err != nil {
			views.close()
		}
	}()
	acc := summary.NewAccumulator(set.Options)
	d.t0 = math.MaxInt64
	for req, err := range r.Requests() {
		if err != nil {
			return nil, err
		}
		if target >= 0 && int(req.Target) != target {
			continue
		}
		acc.Add(&req)
		v := d.view(&req)
		d.count(&v)
		if err := d.views.put(&v); err != nil {
			return nil, fmt.Errorf("report: temporary file: %w", err)
		}
	}
	if d.t0 == math.MaxInt64 {
		d.t0 = 0
	}
	d.sum = acc.Summary(set.Info)
	if r.Has(arrowio.ServerMetricsTable) {
		if d.metrics, err = knownSamples(r); err != nil {
			return nil, err
		}
		if target >= 0 {
			d.metrics = slices.DeleteFunc(d.metrics, func(m record.MetricSample) bool { return m.Target != metricsPage })
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

// view is what the charts use of request r; a new error kind gets the
// next index (both passes see the kinds in the same order).
func (d *runData) view(r *record.Request) reqView {
	k, ok := d.kindIdx[r.ErrorKind]
	if !ok {
		if len(d.kinds) < 255 {
			k = uint8(len(d.kinds))
			d.kinds = append(d.kinds, r.ErrorKind)
		} else {
			k = 254 // a file with more kinds than the contract names
		}
		d.kindIdx[r.ErrorKind] = k
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
	return reqView{intended: r.IntendedNS, sent: r.SentNS, first: r.FirstTokenNS, last: r.LastTokenNS, end: r.EndNS,
		ttft: ttft, ttfo: ttfo, itl: itl, e2e: e2e, lateness: late, readLag: lag, cacheErr: cache,
		isl: r.InputTokens, osl: int32(min(r.OutputLength(), math.MaxInt32)), kind: k, warm: r.Phase == record.PhaseWarmup}
}

// count adds one request to the first pass's extent and counts.
func (d *runData) count(v *reqView) {
	start := v.intended
	if start == 0 || v.sent != 0 && v.sent < start {
		start = v.sent
	}
	if start != 0 && start < d.t0 {
		d.t0 = start
	}
	d.n++
	if v.kind == 0 {
		d.nOK++
	} else {
		d.nErr++
	}
	if !math.IsNaN(float64(v.cacheErr)) {
		d.nCache++
	}
	d.last = max(d.last, v.end, v.sent, v.intended)
	if v.warm {
		if v.sent != 0 {
			d.warmLo = min(d.warmLo, v.sent)
		} else if v.intended != 0 {
			d.warmLo = min(d.warmLo, v.intended)
		}
		d.warmHi = max(d.warmHi, v.end)
	}
	if !v.warm && v.kind == 0 {
		for i, m := range latencyMetrics {
			if x := float64(m.col(v)); x > 0 && !math.IsInf(x, 0) {
				d.latLo[i], d.latHi[i] = min(d.latLo[i], x), max(d.latHi[i], x)
			}
		}
	}
}

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
