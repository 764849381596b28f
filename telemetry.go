package reprise

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/dashboard"
	"github.com/reprise-bench/reprise/internal/telemetry"
	"github.com/reprise-bench/reprise/replay"
)

// telemetryConfig is what the telemetry options resolve to.
type telemetryConfig struct {
	Targets  []string // scrape URLs, the endpoint's /metrics first
	Interval time.Duration
	GPU      string // "", "dcgm" or "nvml"
	DCGMURL  string
}

// telemetryConfigOf is what o asks for: the scrape targets, the
// endpoints' /metrics first (target 0's, then every further target's, a
// server named twice scraped once).
func telemetryConfigOf(o *Options) telemetryConfig {
	t := o.Telemetry
	tc := telemetryConfig{Interval: t.Interval, GPU: t.GPU, DCGMURL: t.DCGMURL}
	if t.EndpointMetrics && o.URL != "" {
		bases := []string{o.URL}
		for _, tg := range o.Targets {
			bases = append(bases, tg.URL)
		}
		for _, b := range bases {
			if u, err := metricsURL(b); err == nil && !slices.Contains(tc.Targets, u) {
				tc.Targets = append(tc.Targets, u)
			}
		}
	}
	tc.Targets = append(tc.Targets, t.ServerMetrics...)
	if tc.GPU == "dcgm" && tc.DCGMURL == "" {
		tc.DCGMURL = DefaultDCGMURL
	}
	return tc
}

// metricsURL is the /metrics page of the server behind an endpoint URL:
// same scheme and host, path /metrics (summary.MetricsURL).
func metricsURL(base string) (string, error) { return summary.MetricsURL(base) }

// telemetryRun is the telemetry of one replay: scrapers and a GPU sampler
// on their own goroutines, writing server_metrics and gpu tables beside the
// records, and keeping what the summary needs.
type telemetryRun struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	scraper *telemetry.Scraper
	acc     *telemetry.Accumulator
	mw      *arrowio.TelemetryWriter[record.MetricSample]
	gpu     *telemetry.GPUSampler
	gsrc    telemetry.GPUSource
	gw      *arrowio.TelemetryWriter[record.GPUSample]
	// red names the targets in samples and logs without their
	// credentials (a ServerMetrics URL may hold user info).
	red redactor

	mu         sync.Mutex
	gpuSamples []record.GPUSample

	// live is the last scrape, for the dashboard.
	live liveServer
}

// server is the last scrape of the first target for the dashboard; nil
// without scrapes.
func (t *telemetryRun) server() *dashboard.Server {
	if t == nil || t.scraper == nil {
		return nil
	}
	return t.live.get()
}

// maxBaselineWait bounds the wait for the scrape before the first
// request: the start of the run waits for it. An idle server's /metrics
// answers in milliseconds (vLLM's, with every histogram, in about 10 ms);
// one that does not answer costs the start this long, and the target has
// no baseline (its scrape is recorded as failed).
const maxBaselineWait = 500 * time.Millisecond

// maxGPUSamplesKept bounds the GPU samples kept for the summary (8 GPUs at
// 1 Hz for 34 hours).
const maxGPUSamplesKept = 1 << 20

// startTelemetry opens the GPU source first (so a missing driver is a
// configuration error before any request), scrapes every server target
// once (the baseline of its counters, before the first request) and then
// starts sampling.
// clock is the run's. A nil run with a nil error means nothing to do.
func startTelemetry(ctx context.Context, tc telemetryConfig, run *arrowio.Run,
	clock *replay.Clock, log *slog.Logger) (*telemetryRun, error) {
	if len(tc.Targets) == 0 && tc.GPU == "" {
		return nil, nil
	}
	t := &telemetryRun{acc: telemetry.NewAccumulator(), red: newRedactor(append([]string{tc.DCGMURL}, tc.Targets...)...)}
	switch tc.GPU {
	case "nvml":
		src, err := telemetry.NewNVML()
		if err != nil {
			return nil, err
		}
		t.gsrc = src
	case "dcgm":
		t.gsrc = telemetry.NewDCGM(tc.DCGMURL)
	}
	ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if len(tc.Targets) > 0 {
		w, err := run.ServerMetrics()
		if err != nil {
			t.close(log)
			return nil, err
		}
		t.mw = w
		scfg := telemetry.NewScrapeConfig(tc.Targets...)
		scfg.Interval, scfg.Clock = tc.Interval, clock
		s, err := telemetry.NewScraper(scfg, func(samples []record.MetricSample) {
			if t.red.r != nil {
				for i := range samples {
					samples[i].Target = t.red.String(samples[i].Target)
				}
			}
			t.acc.Add(samples)
			t.live.add(samples)
			w.Write(samples)
		})
		if err != nil {
			t.close(log)
			return nil, err
		}
		t.scraper = s
		// The baseline: every counter's value before the first request.
		// A target that does not answer in time loses its baseline (the
		// scrape is recorded as failed).
		s.ScrapeAllWithin(ctx, maxBaselineWait)
		t.wg.Go(func() { s.Run(ctx) })
	}
	if t.gsrc != nil {
		w, err := run.GPU()
		if err != nil {
			t.close(log)
			return nil, err
		}
		t.gw = w
		t.gpu = telemetry.NewGPUSampler(t.gsrc, tc.Interval, clock, func(s []record.GPUSample) {
			t.mu.Lock()
			if len(t.gpuSamples)+len(s) <= maxGPUSamplesKept {
				t.gpuSamples = append(t.gpuSamples, s...)
			}
			t.mu.Unlock()
			w.Write(s)
		})
		t.wg.Go(func() { t.gpu.Run(ctx) })
	}
	return t, nil
}

// finalScrapeTimeout bounds the final scrape and GPU sample after the last
// response. A server's /metrics answers in milliseconds once the load is
// over; one that has stopped answering costs the shutdown this long, and
// its final scrape is recorded as failed.
const finalScrapeTimeout = time.Second

// stop cancels the periodic scrapes and samples (an unanswered one ends at
// once), takes the final scrape and GPU sample, each within
// finalScrapeTimeout, and completes the files. When abort is done (a
// second interrupt) the final scrape is not taken, or ends at once.
func (t *telemetryRun) stop(abort context.Context, log *slog.Logger) {
	if t == nil {
		return
	}
	t.cancel()
	t.wg.Wait()
	fctx, cancel := context.WithTimeout(abort, finalScrapeTimeout)
	defer cancel()
	var wg sync.WaitGroup
	if t.scraper != nil {
		wg.Go(func() { t.scraper.ScrapeAllWithin(fctx, finalScrapeTimeout) })
	}
	if t.gpu != nil {
		wg.Go(func() { t.gpu.SampleOnce(fctx) })
	}
	wg.Wait()
	t.close(log)
}

func (t *telemetryRun) close(log *slog.Logger) {
	if t.cancel != nil {
		t.cancel()
	}
	if t.mw != nil {
		if err := t.mw.Close(); err != nil {
			log.Error("write server_metrics", slog.Any("err", err))
		}
		if n := t.mw.Dropped(); n > 0 {
			log.Warn("server metrics samples dropped: the disk did not keep up", slog.Int64("samples", n))
		}
	}
	if t.gw != nil {
		if err := t.gw.Close(); err != nil {
			log.Error("write gpu", slog.Any("err", err))
		}
		if n := t.gw.Dropped(); n > 0 {
			log.Warn("gpu samples dropped: the disk did not keep up", slog.Int64("samples", n))
		}
	}
	if t.gsrc != nil {
		t.gsrc.Close()
	}
	if t.scraper != nil {
		if n, failed, errs := t.scraper.Stats(); failed > 0 {
			first := ""
			if len(errs) > 0 {
				first = t.red.String(errs[0].Err)
			}
			log.Warn("server metrics: some scrapes failed (recorded as reprise:scrape_up 0)",
				slog.Int("scrapes", n), slog.Int("failed", failed), slog.String("first", first))
		}
	}
	if t.gpu != nil {
		if n, failed, err := t.gpu.Stats(); failed > 0 {
			first := ""
			if err != nil {
				first = t.red.String(err.Error())
			}
			log.Warn("gpu telemetry: some samples failed", slog.Int("samples", n), slog.Int("failed", failed), slog.String("first", first))
		}
	}
}

// summaries returns the server and GPU views over [startNS, endNS].
func (t *telemetryRun) summaries(startNS, endNS, outputTokens int64) ([]summary.ServerSummary, *summary.GPUSummary) {
	if t == nil {
		return nil, nil
	}
	var servers []summary.ServerSummary
	if t.scraper != nil {
		servers = t.acc.Summarize(startNS, endNS)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return servers, telemetry.SummarizeGPU(t.gpuSamples, startNS, endNS, outputTokens)
}

// writeServerMetricsExport writes AIPerf's server_metrics_export files of
// formats from the run's server_metrics table, when servers were scraped:
// every series' statistics over s's window, computed as s's telemetry is.
func writeServerMetricsExport(dir string, formats []string, s *summary.Summary) error {
	if len(formats) == 0 || s.Telemetry == nil || len(s.Telemetry.Servers) == 0 {
		return nil
	}
	samples, err := arrowio.ReadMetricSamples(dir)
	if err != nil {
		return err
	}
	return arrowio.WriteServerMetricsExport(dir, formats, &arrowio.ServerMetricsExport{
		Summary: s, Series: telemetry.SeriesStats(samples, s.WindowStartNS, s.WindowEndNS), Samples: samples})
}
