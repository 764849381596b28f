package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// Defaults of a ScrapeConfig.
const (
	DefaultInterval     = time.Second
	DefaultTimeout      = 5 * time.Second
	DefaultMaxPageBytes = 32 << 20
	// MaxErrorsKept bounds the scrape errors kept for the summary.
	MaxErrorsKept = 64
)

// Synthetic series the scraper adds for every scrape of every target, so gaps
// and failures are data next to the samples (Prometheus' own convention).
const (
	MetricScrapeUp       = "reprise:scrape_up"               // 1 ok, 0 failed
	MetricScrapeDuration = "reprise:scrape_duration_seconds" // request to parsed
	MetricScrapeSamples  = "reprise:scrape_samples"          // samples parsed
)

// ScrapeConfig configures a Scraper. Build it with NewScrapeConfig.
type ScrapeConfig struct {
	// Targets are the /metrics URLs to scrape.
	Targets []string
	// Interval between scrapes of one target (default 1 s).
	Interval time.Duration
	// Timeout of one scrape (default 5 s). A slow page delays only its own
	// target's next scrape, never another target or a request.
	Timeout time.Duration
	// MaxPageBytes is the largest page read; a larger one is an error.
	MaxPageBytes int64
	// Clock stamps the samples: the run's clock, so that samples and
	// records share one clock. nil = a clock started by NewScraper.
	Clock *replay.Clock
	// Client is the HTTP client; default: a dedicated one, never shared with
	// the request path.
	Client *http.Client
}

// NewScrapeConfig returns a config with the documented defaults.
func NewScrapeConfig(targets ...string) ScrapeConfig {
	return ScrapeConfig{
		Targets:      targets,
		Interval:     DefaultInterval,
		Timeout:      DefaultTimeout,
		MaxPageBytes: DefaultMaxPageBytes,
	}
}

// Validate reports every problem with the config.
func (c ScrapeConfig) Validate() error {
	var errs []error
	if len(c.Targets) == 0 {
		errs = append(errs, errors.New("server metrics: no target URL"))
	}
	for _, t := range c.Targets {
		if t == "" {
			errs = append(errs, errors.New("server metrics: empty target URL"))
		}
	}
	if c.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--metrics-interval %v: must be positive", c.Interval))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("metrics timeout %v: must be positive", c.Timeout))
	}
	if c.MaxPageBytes <= 0 {
		errs = append(errs, fmt.Errorf("metrics page limit %d: must be positive", c.MaxPageBytes))
	}
	return errors.Join(errs...)
}

// ScrapeError is one failed scrape.
type ScrapeError struct {
	TimeNS int64
	Target string
	Err    string
}

// Sink receives the samples of one scrape. It is called from the scraping
// goroutines (one per target), possibly concurrently, and must not block
// for long; the slice is owned by the sink after the call.
type Sink func([]record.MetricSample)

// Scraper scrapes every target on its own goroutine until its context ends.
// It is safe for concurrent use.
type Scraper struct {
	cfg  ScrapeConfig
	sink Sink

	mu      sync.Mutex
	scrapes int
	failed  int
	errs    []ScrapeError
}

// NewScraper validates cfg and returns a scraper feeding sink.
func NewScraper(cfg ScrapeConfig, sink Sink) (*Scraper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = replay.NewClock()
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 2, DisableCompression: false, ResponseHeaderTimeout: cfg.Timeout,
		}}
	}
	return &Scraper{cfg: cfg, sink: sink}, nil
}

// Run scrapes every target every interval until ctx ends, the first time
// one interval after the call: take the baseline before the first request
// with ScrapeAll, then start Run.
func (s *Scraper) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, t := range s.cfg.Targets {
		wg.Go(func() {
			tick := time.NewTicker(s.cfg.Interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				s.scrape(ctx, t, s.cfg.Timeout)
			}
		})
	}
	wg.Wait()
}

// ScrapeAll scrapes every target once, concurrently, and waits: the
// baseline before the first request and the final scrape after the last
// response, which bound the server's counters over the run.
func (s *Scraper) ScrapeAll(ctx context.Context) { s.ScrapeAllWithin(ctx, s.cfg.Timeout) }

// ScrapeAllWithin is ScrapeAll with each scrape given at most d (capped at
// the config's Timeout), so that a target that stopped answering holds up
// neither the start nor the end of a run for long. A scrape that runs out
// of time is recorded as failed ("no answer within d"); one whose ctx is
// cancelled is not recorded.
func (s *Scraper) ScrapeAllWithin(ctx context.Context, d time.Duration) {
	d = min(d, s.cfg.Timeout)
	var wg sync.WaitGroup
	for _, t := range s.cfg.Targets {
		wg.Go(func() { s.scrape(ctx, t, d) })
	}
	wg.Wait()
}

// Stats returns the number of scrapes, how many failed, and the first
// MaxErrorsKept errors.
func (s *Scraper) Stats() (scrapes, failed int, errs []ScrapeError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scrapes, s.failed, append([]ScrapeError(nil), s.errs...)
}

// scrape scrapes target once, giving it timeout, and hands the samples
// to the sink: the page's, and reprise's own series saying whether it
// answered. A scrape that runs out of time, or of ctx's deadline, is a
// failed scrape; one whose ctx was cancelled (the run is over) is dropped,
// as not a server problem.
func (s *Scraper) scrape(ctx context.Context, target string, timeout time.Duration) {
	start := s.cfg.Clock.Now()
	samples, err := s.fetch(ctx, target, timeout)
	end := s.cfg.Clock.Now()
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	up := 1.0
	if err != nil {
		up = 0
	}
	// reprise's own series share the page's time, so a reader sees one
	// scrape as one group of samples.
	at := end
	if len(samples) > 0 {
		at = samples[0].TimeNS
	}
	nan := math.NaN()
	samples = append(samples,
		record.MetricSample{TimeNS: at, Target: target, Metric: MetricScrapeUp, Type: "gauge", Bound: nan, Value: up},
		record.MetricSample{TimeNS: at, Target: target, Metric: MetricScrapeDuration, Type: "gauge", Bound: nan, Value: float64(end-start) / 1e9},
		record.MetricSample{TimeNS: at, Target: target, Metric: MetricScrapeSamples, Type: "gauge", Bound: nan, Value: float64(len(samples))},
	)
	s.mu.Lock()
	s.scrapes++
	if err != nil {
		s.failed++
		if len(s.errs) < MaxErrorsKept {
			s.errs = append(s.errs, ScrapeError{TimeNS: end, Target: target, Err: err.Error()})
		}
	}
	s.mu.Unlock()
	s.sink(samples)
}

func (s *Scraper) fetch(ctx context.Context, target string, timeout time.Duration) ([]record.MetricSample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		if ne, ok := errors.AsType[net.Error](err); ctx.Err() != nil || ok && ne.Timeout() {
			return nil, fmt.Errorf("GET %s: no answer within %v", target, timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("GET %s: HTTP %d", target, resp.StatusCode)
	}
	// Read the whole (capped) page first: the size limit is checked as the
	// bytes arrive, and parsing never holds the connection open.
	page, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	if int64(len(page)) > s.cfg.MaxPageBytes {
		return nil, fmt.Errorf("GET %s: page larger than %d bytes", target, s.cfg.MaxPageBytes)
	}
	samples, err := ParsePage(bytes.NewReader(page), target, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	now := s.cfg.Clock.Now()
	for i := range samples {
		samples[i].TimeNS = now
	}
	return samples, nil
}
