package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// DefaultDCGMURL is where a DCGM exporter listens by default.
const DefaultDCGMURL = "http://localhost:9400/metrics"

// ErrNoNVML is returned by NewNVML when NVML cannot be used: a binary built
// without cgo, or a machine without the NVIDIA driver.
var ErrNoNVML = errors.New("NVML is not available")

// GPUSource reads the current state of every GPU it knows.
type GPUSource interface {
	// Name is "dcgm" or "nvml".
	Name() string
	// Sample returns one GPUSample per GPU, stamped with timeNS.
	Sample(ctx context.Context, timeNS int64) ([]record.GPUSample, error)
	// Close releases the source.
	Close() error
}

// DCGM reads a DCGM exporter's Prometheus page. Field units follow DCGM's
// documentation: DCGM_FI_DEV_FB_* in MiB, DCGM_FI_DEV_POWER_USAGE in W,
// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION in mJ, clocks in MHz, temperature
// in °C, DCGM_FI_DEV_GPU_UTIL in %.
type DCGM struct {
	URL     string
	Client  *http.Client
	Timeout time.Duration
}

// NewDCGM returns a DCGM source for url ("" = DefaultDCGMURL).
func NewDCGM(url string) *DCGM {
	if url == "" {
		url = DefaultDCGMURL
	}
	return &DCGM{URL: url, Client: &http.Client{}, Timeout: DefaultTimeout}
}

// Name implements GPUSource.
func (d *DCGM) Name() string { return "dcgm" }

// Close implements GPUSource.
func (d *DCGM) Close() error { return nil }

// Sample implements GPUSource.
func (d *DCGM) Sample(ctx context.Context, timeNS int64) ([]record.GPUSample, error) {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dcgm: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("dcgm: GET %s: HTTP %d", d.URL, resp.StatusCode)
	}
	samples, err := ParsePage(&limitedReader{r: resp.Body, n: DefaultMaxPageBytes}, d.URL, timeNS, nil)
	if err != nil {
		return nil, fmt.Errorf("dcgm: %w", err)
	}
	return DCGMToGPU(samples, timeNS), nil
}

// DCGMToGPU pivots the DCGM_FI_* samples of one exporter page into one
// GPUSample per GPU (by the exporter's "gpu" label), in GPU order.
func DCGMToGPU(samples []record.MetricSample, timeNS int64) []record.GPUSample {
	byGPU := map[int32]*record.GPUSample{}
	var fbFree, fbReserved = map[int32]float64{}, map[int32]float64{}
	const mib = 1 << 20
	for _, s := range samples {
		idx, err := strconv.Atoi(LabelValue(s.Labels, "gpu"))
		if err != nil {
			continue
		}
		g := byGPU[int32(idx)]
		if g == nil {
			g = newGPUSample(timeNS, "dcgm", int32(idx))
			byGPU[int32(idx)] = g
		}
		if u := LabelValue(s.Labels, "UUID"); u != "" {
			g.UUID = u
		}
		if n := LabelValue(s.Labels, "modelName"); n != "" {
			g.Name = n
		}
		switch s.Metric {
		case "DCGM_FI_DEV_GPU_UTIL":
			g.UtilPct = s.Value
		case "DCGM_FI_DEV_FB_USED":
			g.MemUsedBytes = s.Value * mib
		case "DCGM_FI_DEV_FB_TOTAL":
			g.MemTotalBytes = s.Value * mib
		case "DCGM_FI_DEV_FB_FREE":
			fbFree[int32(idx)] = s.Value * mib
		case "DCGM_FI_DEV_FB_RESERVED":
			fbReserved[int32(idx)] = s.Value * mib
		case "DCGM_FI_DEV_POWER_USAGE":
			g.PowerW = s.Value
		case "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION":
			g.EnergyJ = s.Value / 1e3
		case "DCGM_FI_DEV_GPU_TEMP":
			g.TempC = s.Value
		case "DCGM_FI_DEV_SM_CLOCK":
			g.SMClockMHz = s.Value
		}
	}
	out := make([]record.GPUSample, 0, len(byGPU))
	for idx, g := range byGPU {
		if math.IsNaN(g.MemTotalBytes) && !math.IsNaN(g.MemUsedBytes) {
			if free, ok := fbFree[idx]; ok {
				g.MemTotalBytes = g.MemUsedBytes + free + fbReserved[idx]
			}
		}
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b record.GPUSample) int { return int(a.GPU - b.GPU) })
	return out
}

func newGPUSample(timeNS int64, source string, idx int32) *record.GPUSample {
	nan := math.NaN()
	return &record.GPUSample{
		TimeNS: timeNS, Source: source, GPU: idx,
		UtilPct: nan, MemUsedBytes: nan, MemTotalBytes: nan, PowerW: nan,
		EnergyJ: nan, TempC: nan, SMClockMHz: nan,
	}
}

// GPUSampler samples a GPUSource every interval on its own goroutine and
// hands the samples to sink; failures are counted and the sampling goes on.
type GPUSampler struct {
	src      GPUSource
	interval time.Duration
	clock    *replay.Clock
	sink     func([]record.GPUSample)

	mu       sync.Mutex
	samples  int
	failed   int
	firstErr error
}

// NewGPUSampler returns a sampler of src stamping its samples on clock,
// the run's (nil = a clock started now).
func NewGPUSampler(src GPUSource, interval time.Duration, clock *replay.Clock, sink func([]record.GPUSample)) *GPUSampler {
	if clock == nil {
		clock = replay.NewClock()
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &GPUSampler{src: src, interval: interval, clock: clock, sink: sink}
}

// Run samples until ctx ends.
func (g *GPUSampler) Run(ctx context.Context) {
	tick := time.NewTicker(g.interval)
	defer tick.Stop()
	for {
		g.SampleOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// SampleOnce takes one sample now.
func (g *GPUSampler) SampleOnce(ctx context.Context) {
	s, err := g.src.Sample(ctx, g.clock.Now())
	g.mu.Lock()
	g.samples++
	if err != nil {
		g.failed++
		if g.firstErr == nil {
			g.firstErr = err
		}
	}
	g.mu.Unlock()
	if err == nil && len(s) > 0 {
		g.sink(s)
	}
}

// Stats returns how many samples were taken, how many failed, and the first error.
func (g *GPUSampler) Stats() (samples, failed int, firstErr error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.samples, g.failed, g.firstErr
}

// SummarizeGPU summarises samples (of one source, in time order) over the
// window [startNS, endNS]; outputTokens is the run's generated tokens.
func SummarizeGPU(samples []record.GPUSample, startNS, endNS int64, outputTokens int64) *GPUSummary {
	type acc struct {
		powerSum, powerN, utilSum, utilN float64
		firstE, lastE                    float64
		lastT                            int64
		lastP                            float64
		integral                         float64
		allEnergy                        bool
	}
	per := map[int32]*acc{}
	var sum GPUSummary
	for _, s := range samples {
		if s.TimeNS < startNS || s.TimeNS > endNS {
			continue
		}
		sum.Source = s.Source
		sum.Samples++
		a := per[s.GPU]
		if a == nil {
			a = &acc{firstE: s.EnergyJ, allEnergy: true, lastT: s.TimeNS, lastP: s.PowerW}
			per[s.GPU] = a
		} else if !math.IsNaN(s.PowerW) && !math.IsNaN(a.lastP) {
			a.integral += (s.PowerW + a.lastP) / 2 * float64(s.TimeNS-a.lastT) / 1e9
		}
		a.lastT, a.lastP = s.TimeNS, s.PowerW
		if !math.IsNaN(s.PowerW) {
			a.powerSum += s.PowerW
			a.powerN++
		}
		if !math.IsNaN(s.UtilPct) {
			a.utilSum += s.UtilPct
			a.utilN++
		}
		if math.IsNaN(s.EnergyJ) || math.IsNaN(a.firstE) {
			a.allEnergy = false
		} else {
			a.lastE = s.EnergyJ
		}
		if !math.IsNaN(s.MemUsedBytes) {
			sum.MaxMemUsedBytes = max(sum.MaxMemUsedBytes, s.MemUsedBytes)
		}
	}
	if len(per) == 0 {
		return nil
	}
	sum.GPUs = len(per)
	sum.EnergyFromCounter = true
	var utilSum float64
	for _, a := range per {
		if a.powerN > 0 {
			sum.AvgPowerW += a.powerSum / a.powerN
		}
		if a.utilN > 0 {
			utilSum += a.utilSum / a.utilN
		}
		if !a.allEnergy {
			sum.EnergyFromCounter = false
		}
	}
	for _, a := range per {
		if sum.EnergyFromCounter {
			sum.EnergyJ += a.lastE - a.firstE
		} else {
			sum.EnergyJ += a.integral
		}
	}
	sum.AvgUtilPct = utilSum / float64(len(per))
	if outputTokens > 0 {
		sum.EnergyPerOutputTokenJ = sum.EnergyJ / float64(outputTokens)
	}
	return &sum
}

// limitedReader is io.LimitReader that reports overflow as an error.
type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("page larger than %d bytes", DefaultMaxPageBytes)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
