package otlp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricsPath is the OTLP/HTTP path of metrics, appended to a collector
// URL that does not end with it.
const MetricsPath = "/v1/metrics"

// DefaultTimeout bounds one push: a collector slower than that is
// counted as down for that push.
const DefaultTimeout = 5 * time.Second

// MetricsURL returns the URL a push posts to for the collector u, as
// AIPerf normalizes --otel-url: a bare host or host:port is http://, and
// the path ends with /v1/metrics exactly once. Schemes other than http
// and https are errors.
func MetricsURL(u string) (string, error) {
	if u != "" && !strings.Contains(u, "://") {
		u = "http://" + u
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("%q: want an http(s) URL of an OTLP/HTTP collector, such as http://localhost:4318", u)
	}
	if !strings.HasSuffix(p.Path, MetricsPath) {
		p.Path = strings.TrimSuffix(p.Path, "/") + MetricsPath
	}
	return p.String(), nil
}

// Config says where and what a [Pusher] pushes.
type Config struct {
	// URL is the collector's metrics URL (see [MetricsURL]).
	URL string
	// Gatherer is read at each push.
	Gatherer prometheus.Gatherer
	// Keep, when not nil, says which families are pushed (by name).
	Keep func(name string) bool
	// Batch is what every request carries besides the metrics; its Now
	// is set at each push.
	Batch Batch
	// Headers are added to every request (OTEL_EXPORTER_OTLP_HEADERS).
	Headers http.Header
	// Timeout bounds one push (0: DefaultTimeout).
	Timeout time.Duration
	// Client sends the pushes (nil: a client of its own).
	Client *http.Client
	// Log gets the one warning of a collector that cannot be reached.
	Log *slog.Logger
}

// Pusher pushes a registry's metrics to an OTLP/HTTP collector. Its
// methods are safe for concurrent use; pushes never overlap.
type Pusher struct {
	cfg    Config
	mu     sync.Mutex // one push at a time
	warned bool
	pushes int
	stop   context.CancelFunc
	done   chan struct{}
}

// NewPusher returns a pusher of cfg; it pushes nothing before [Pusher.Push]
// or [Pusher.Start].
func NewPusher(cfg Config) *Pusher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Pusher{cfg: cfg}
}

// Start pushes every interval, from its own goroutine, until [Pusher.Close].
func (p *Pusher) Start(ctx context.Context, interval time.Duration) {
	ctx, p.stop = context.WithCancel(context.WithoutCancel(ctx))
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.Push(ctx)
			}
		}
	}()
}

// Close stops the periodic pushes, then pushes the final values once
// (bounded by the timeout, even when ctx is done), and returns how many
// pushes the collector accepted.
func (p *Pusher) Close(ctx context.Context) int {
	if p.stop != nil {
		p.stop()
		<-p.done
	}
	p.Push(context.WithoutCancel(ctx))
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pushes
}

// Push sends the registry's values now and reports whether the
// collector accepted them. A failure is logged once per pusher, as a
// warning; the pushes after it are still tried.
func (p *Pusher) Push(ctx context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.push(ctx)
	if err == nil {
		p.pushes++
		return true
	}
	if !p.warned {
		p.warned = true
		p.cfg.Log.Warn("OTLP push failed; the run goes on, and later pushes are tried without a further warning",
			slog.String("url", p.cfg.URL), slog.Any("err", err))
	}
	return false
}

func (p *Pusher) push(ctx context.Context) error {
	fams, err := p.cfg.Gatherer.Gather()
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	if p.cfg.Keep != nil {
		kept := fams[:0:0]
		for _, f := range fams {
			if p.cfg.Keep(f.GetName()) {
				kept = append(kept, f)
			}
		}
		fams = kept
	}
	b := p.cfg.Batch
	b.Now = time.Now()
	body, err := Encode(fams, b)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return p.post(ctx, body)
}

func (p *Pusher) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range p.cfg.Headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// ParseKeyValues reads OpenTelemetry's k=v,k2=v2 lists
// (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS, AIPerf's
// --otel-resource-attributes): keys and values are trimmed and
// percent-decoded where they can be; an item without "=" or with an
// empty key is returned in bad.
func ParseKeyValues(s string) (kv map[string]string, bad []string) {
	kv = map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			bad = append(bad, item)
			continue
		}
		kv[unescape(k)] = unescape(strings.TrimSpace(v))
	}
	return kv, bad
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
