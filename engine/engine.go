package engine

//lint:file-ignore SA1019 x/net/http2.Transport is deliberate for --http2: it keeps a predictable ⌈streams/limit⌉ connections where the standard library's h2c churns hundreds under bursts (docs/design/0004-engine-and-adapters.md); revisit when x/net wraps net/http (Go 1.27).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/replay"
)

// Defaults of [Config].
const (
	// DefaultTimeout bounds one request, from send to the end of its
	// response.
	DefaultTimeout = 10 * time.Minute
	// DefaultJobPollInterval is the wait between two polls of an
	// asynchronous job's status.
	DefaultJobPollInterval = time.Second
	// DefaultJobTimeout bounds an asynchronous job from submit to done.
	DefaultJobTimeout = 30 * time.Minute
	// DefaultReadBuffer is the size of each sender's read buffer,
	// allocated on its first response (HTTP/1.1: the h1 client's, decoded
	// in place; HTTP/2: above the transport's own 16 KiB buffer). A read
	// returns at most what it holds.
	DefaultReadBuffer = h1.ReadBuffer
	// maxErrorBody bounds how much of a non-2xx body is read for the message.
	maxErrorBody = 64 << 10
	// maxErrorMessage bounds the stored error message.
	maxErrorMessage = 512
)

// Caps on what one response may hold (docs/format/cli.md justifies them).
// A response over one ends at once as a [record.ErrTooLarge] failure and
// its connection is closed. With the defaults a response holds at most
// about 20 MB of event table (1,048,576 events × 17 bytes, grown by
// append) plus what its bytes are kept as: a non-streaming body whole
// (≤ 256 MiB, and the content the adapter decodes from it), a stream's
// current event (≤ 16 MiB, held up to three times while it is framed) and
// its content text.
const (
	// DefaultMaxResponseEvents caps the events of one response: 8× the
	// longest outputs of today's models (128k tokens, one event each).
	DefaultMaxResponseEvents = 1 << 20
	// DefaultMaxEventBytes caps one SSE line and one event's joined data
	// lines (an NDJSON line): an event is one token's chunk (hundreds of
	// bytes, a few KB with logprobs); servers that put the whole response
	// in a last event need about 4 bytes per token (0.5 MB for 128k).
	DefaultMaxEventBytes = 16 << 20
	// DefaultMaxResponseBytes caps the body bytes of one response,
	// streamed or not: a 128k-token stream is 30–40 MB, about 100 MB with
	// top-5 logprobs on every token.
	DefaultMaxResponseBytes = 256 << 20
)

// TokenCounter counts tokens of text with the run's tokenizer
// (internal/tokenizer.Tokenizer satisfies it). It must be safe for
// concurrent use and must not keep text after it returns: the engine may
// pass the bytes of its own buffer.
type TokenCounter interface {
	Count(text string) int
}

// ContextCounter is a [TokenCounter] that can stop: CountContext returns
// ctx's error (and what it counted) once ctx ends.
// internal/tokenizer.Tokenizer satisfies it. The engine counts a long
// output with it, under the request's --timeout and cancellation.
type ContextCounter interface {
	TokenCounter
	CountContext(ctx context.Context, text string) (int, error)
}

// Config configures an [Engine]. Build it with [NewConfig].
type Config struct {
	// BaseURL is the server, e.g. http://localhost:8000. The adapter's
	// path is appended.
	BaseURL string
	// Adapter builds requests and parses responses.
	Adapter adapter.Adapter
	// AdapterConfig is passed to every adapter instance.
	AdapterConfig adapter.Config
	// Header is added to every request after the adapter's headers
	// (-H/--header and Authorization from the API key).
	Header []adapter.Header
	// Timeout bounds one request (0 = none).
	Timeout time.Duration
	// JobPollInterval is the wait between two status polls of an
	// asynchronous job (a KindVideo endpoint; NewConfig:
	// DefaultJobPollInterval). JobTimeout bounds a job from its submit to
	// done (0 = none): a job not done by then fails as
	// record.ErrTimeout. JobDownload downloads a done job's content.
	JobPollInterval time.Duration
	JobTimeout      time.Duration
	JobDownload     bool
	// HTTP2 uses prior-knowledge h2c for http:// URLs and h2 over TLS for
	// https:// (x/net/http2 transport, predictable connection count).
	HTTP2 bool
	// MaxConnections caps connections to the server (0 = one per
	// request in flight, as many as needed).
	MaxConnections int
	// ConnReuse says which requests share a connection (HTTP/1.1 only;
	// zero: ConnPooled). Under ConnSticky a request's session is
	// Prepared.Session.
	ConnReuse ConnReuse
	// Concurrency is the expected number of requests in flight (the
	// number of senders); it sizes the keep-alive pool.
	Concurrency int
	// Counter counts client-side tokens of the output, every choice of
	// it; nil skips it. When it also has AppendEncode and Piece (as
	// internal/tokenizer's tokenizers do), exported events carry the
	// tokens that arrived in each.
	Counter TokenCounter
	// CaptureText keeps every response's text for Sender.Response, as
	// Prepared.Capture does for one request (--export-outputs-json).
	CaptureText bool
	// UseServerTokenCount derives output lengths (and ITL) from the
	// server's usage when the server reports it, else from the client
	// tokenizer (NewConfig: true). false always counts on the client.
	// Both counts are recorded either way.
	UseServerTokenCount bool
	// Events collects one record.Event per response event.
	Events bool
	// MaxResponseEvents caps the events of one response, MaxEventBytes
	// one SSE line or event (its data lines joined) or NDJSON line, and
	// MaxResponseBytes the body bytes of one response, streamed or not
	// (a non-2xx body is read up to it, then the connection is closed).
	// Over a cap the request fails as record.ErrTooLarge. 0 = no cap;
	// NewConfig sets the Default… values.
	MaxResponseEvents int
	MaxEventBytes     int
	MaxResponseBytes  int64
	// NoKernelStamps stamps reads when they return to reprise instead of
	// when the kernel received the bytes (SO_TIMESTAMPNS, HTTP/1.1 on
	// Linux; engine/internal/h1). For comparisons and diagnosis only.
	NoKernelStamps bool
	// NoReactor reads each HTTP/1.1 response on its sender's goroutine
	// instead of on the reactors (engine/internal/h1): for tests and
	// benchmarks that compare the two.
	NoReactor bool
	// Clock stamps everything; nil = replay.NewClock(). Run hands it to
	// the scheduler, so intended and dispatch times are on it too.
	Clock *replay.Clock
	// Log receives rare diagnostics; nil discards.
	Log *slog.Logger
	// TLS configures https:// connections; nil = the system's roots and the
	// URL's host name. HTTP/1.1 connections always ask for http/1.1 (ALPN).
	TLS *tls.Config
	// Dial overrides the dialer (tests); nil = net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewConfig returns a Config with the defaults.
func NewConfig() Config {
	return Config{Timeout: DefaultTimeout, JobPollInterval: DefaultJobPollInterval, JobTimeout: DefaultJobTimeout, UseServerTokenCount: true, MaxResponseEvents: DefaultMaxResponseEvents,
		MaxEventBytes: DefaultMaxEventBytes, MaxResponseBytes: DefaultMaxResponseBytes}
}

// Validate reports every problem of c at once. It never changes c.
func (c *Config) Validate() error {
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, errors.New("BaseURL is required"))
	} else if u, err := url.Parse(c.BaseURL); err != nil {
		errs = append(errs, fmt.Errorf("BaseURL %q: %w", c.BaseURL, err))
	} else if u.Scheme != "http" && u.Scheme != "https" {
		errs = append(errs, fmt.Errorf("BaseURL %q: want an http:// or https:// URL", c.BaseURL))
	} else if u.Host == "" {
		errs = append(errs, fmt.Errorf("BaseURL %q: no host", c.BaseURL))
	}
	if c.Adapter == nil {
		errs = append(errs, errors.New("no endpoint adapter"))
	}
	if c.JobPollInterval < 0 || c.JobTimeout < 0 {
		errs = append(errs, fmt.Errorf("job poll interval %v and job timeout %v must not be negative", c.JobPollInterval, c.JobTimeout))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("Timeout %v: must not be negative", c.Timeout))
	}
	if c.MaxConnections < 0 {
		errs = append(errs, fmt.Errorf("MaxConnections %d: must not be negative", c.MaxConnections))
	}
	if c.ConnReuse > ConnSticky {
		errs = append(errs, fmt.Errorf("ConnReuse %d: want ConnPooled, ConnNever or ConnSticky", c.ConnReuse))
	} else if c.ConnReuse != ConnPooled && c.HTTP2 {
		errs = append(errs, fmt.Errorf("connection reuse %s: HTTP/2 multiplexes requests on shared connections; use HTTP/1.1 (drop --http2) or the pooled strategy", c.ConnReuse))
	}
	if c.MaxResponseEvents < 0 {
		errs = append(errs, fmt.Errorf("MaxResponseEvents %d: must not be negative (0 = no cap)", c.MaxResponseEvents))
	}
	if c.MaxEventBytes < 0 || c.MaxEventBytes > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("MaxEventBytes %d: want 0 (no cap) to %d", c.MaxEventBytes, math.MaxInt32))
	}
	if c.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxResponseBytes %d: must not be negative (0 = no cap)", c.MaxResponseBytes))
	}
	for _, h := range c.Header {
		if h.Name == "" || strings.ContainsAny(h.Name, " :\r\n") || strings.ContainsAny(h.Value, "\r\n") {
			errs = append(errs, fmt.Errorf("header %q: want NAME:VALUE without line breaks", h.Name))
		}
	}
	return errors.Join(errs...)
}

// Engine runs requests: HTTP, SSE framing, timestamps and the adapter. It
// is safe for concurrent use; each goroutine that sends uses its own
// [Sender].
type Engine struct {
	cfg       Config
	clock     *replay.Clock
	info      adapter.Info
	base      string     // BaseURL without a trailing slash
	h1c       *h1.Client // HTTP/1.1 (engine/internal/h1); nil in HTTP/2 mode
	client    *http.Client
	transport http.RoundTripper // HTTP/2
	log       *slog.Logger

	// The caps of Config, the largest values for none; ctxCounter is
	// Counter when it can stop.
	maxEvents     int
	maxEventBytes int
	maxBodyBytes  int64
	ctxCounter    ContextCounter
}

// New builds an engine. It does not connect.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, clock: cfg.Clock, info: cfg.Adapter.Info(), log: cfg.Log,
		maxEvents: cfg.MaxResponseEvents, maxEventBytes: cfg.MaxEventBytes, maxBodyBytes: cfg.MaxResponseBytes}
	if e.maxEvents == 0 {
		e.maxEvents = math.MaxInt
	}
	if e.maxEventBytes == 0 {
		e.maxEventBytes = math.MaxInt32 // event lengths are int32 (frameRef)
	}
	if e.maxBodyBytes == 0 {
		e.maxBodyBytes = math.MaxInt64
	}
	e.ctxCounter, _ = cfg.Counter.(ContextCounter)
	if e.clock == nil {
		e.clock = replay.NewClock()
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.base = strings.TrimRight(cfg.BaseURL, "/")
	if !cfg.HTTP2 {
		c, err := h1.New(h1.Config{BaseURL: e.base, TLS: cfg.TLS, Dial: cfg.Dial, MaxConnections: cfg.MaxConnections,
			Reuse: h1.Reuse(cfg.ConnReuse), Timeout: cfg.Timeout, NoKernelStamps: cfg.NoKernelStamps, NoReactor: cfg.NoReactor, Clock: e.clock, Log: e.log})
		if err != nil {
			return nil, err
		}
		e.h1c = c
		return e, nil
	}
	dial := cfg.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	{
		// x/net's transport opens ⌈streams/limit⌉ connections and keeps
		// them, where the stdlib h2c transport churns under bursts
		// (docs/reference/platform.md §4). h2c and TLS never share a transport
		// (golang/go#81656).
		t := &http2.Transport{
			TLSClientConfig:            cfg.TLS,
			AllowHTTP:                  strings.HasPrefix(e.base, "http://"),
			DisableCompression:         true,
			StrictMaxConcurrentStreams: cfg.MaxConnections > 0,
		}
		if t.AllowHTTP {
			t.DialTLSContext = func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
				return dial(ctx, network, addr)
			}
		}
		e.transport = t
	}
	e.client = &http.Client{Transport: e.transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return e, nil
}

// Info returns the adapter's description.
func (e *Engine) Info() adapter.Info { return e.info }

// Clock returns the engine's clock.
func (e *Engine) Clock() *replay.Clock { return e.clock }

// Retries returns how many times a request was sent again because its
// previous attempt provably never reached the server.
func (e *Engine) Retries() int64 {
	if e.h1c == nil {
		return 0 // HTTP/2: x/net re-sends by itself only what it never wrote
	}
	return e.h1c.Retries()
}

// ClosesAfterStream reports whether the server is currently believed to
// close connections after streamed responses (streamed requests then ask
// for Connection: close).
func (e *Engine) ClosesAfterStream() bool {
	return e.h1c != nil && e.h1c.Verdict() == h1.VerdictCloses
}

// Close closes idle connections.
func (e *Engine) Close() {
	if e.h1c != nil {
		e.h1c.Close()
	}
	if t, ok := e.transport.(*http2.Transport); ok {
		t.CloseIdleConnections()
	}
}
