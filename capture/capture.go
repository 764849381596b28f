package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/internal/secret"
	"github.com/reprise-bench/reprise/trace"
)

// Defaults of [Config].
const (
	// DefaultBlockSize is the tokens per hash id of a recorded trace.
	DefaultBlockSize = 16
	// DefaultSessionHeader names the request header that carries a session id.
	DefaultSessionHeader = "X-Session-Id"
	// DefaultMaxBodyBytes bounds a request body the proxy reads.
	DefaultMaxBodyBytes = 64 << 20
	// DefaultMaxHeldBytes bounds the request bodies and response copies
	// held at once.
	DefaultMaxHeldBytes = 256 << 20
	// DefaultBodyTimeout bounds the time a request body takes to arrive.
	DefaultBodyTimeout = 60 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle that long.
	DefaultIdleTimeout = 30 * time.Second
	// headerTimeout bounds the time a request's headers take to arrive.
	headerTimeout = 30 * time.Second
	// DefaultReorderRows bounds the rows held back to write rows in
	// arrival order.
	DefaultReorderRows = 4096
	// maxCapture bounds the response bytes kept for recording.
	maxCapture = 16 << 20
)

// Tokenizer is what capture needs of a tokenizer: the ids of a text
// (the prompts' blocks are hashed from them) and a count (responses'
// tokens when the server reports no usage). reprise's tokenizers (the
// ones --tokenizer loads) have these methods.
type Tokenizer interface {
	// AppendEncode appends the token ids of text to dst and returns the
	// extended slice.
	AppendEncode(dst []int, text string) []int
	// Count returns the number of tokens of text.
	Count(text string) int
}

// Config configures a [Recorder]. Build it with [NewConfig].
type Config struct {
	// Upstream is the server's base URL (scheme and host; a path prefix
	// is kept in front of the request's path).
	Upstream *url.URL
	// BlockSize is the number of tokens per hash id.
	BlockSize int
	// Tokenizer cuts prompts into tokens (and counts responses when the
	// server reports no usage).
	Tokenizer Tokenizer
	// SessionHeader names the request header whose value is the session
	// id; "" infers sessions from prefix continuation only.
	SessionHeader string
	// MaxBodyBytes bounds a request body; a larger one gets 413.
	MaxBodyBytes int64
	// MaxHeldBytes bounds the bytes held at once for recording: the
	// bodies of chat and completions requests (read whole before they
	// are forwarded) and the copies of their responses. A request whose
	// body would go over it gets 503 and is not forwarded; a response
	// whose copy would is passed on, and not recorded.
	MaxHeldBytes int64
	// BodyTimeout bounds the time a chat or completions request's body
	// takes to arrive once its headers did; a slower one gets 408. 0: no
	// bound.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for that
	// long ([Recorder.NewServer]). 0: no bound.
	IdleTimeout time.Duration
	// ReorderRows bounds the finished rows held back while an earlier
	// request is still in flight, so that rows are written in arrival
	// order: beyond it, the oldest request still in flight is passed over
	// (Stats.Late) and its row written when it ends, after later ones.
	ReorderRows int
	// Text, when set, receives one JSON line per recorded request with
	// its request_id, the request body as sent (the value of every
	// secret-looking key, such as api_key, redacted as in inputs.json)
	// and the response text:
	// the trace itself never holds text.
	Text io.Writer
	// Log receives warnings (nil: none).
	Log *slog.Logger
}

// NewConfig returns a Config with the defaults: 16-token blocks, the
// X-Session-Id header, 64 MiB bodies, 256 MiB held at once, bodies within
// 60 s, keep-alive connections idle 30 s, 4096 rows held back for order. Upstream and Tokenizer must be set.
func NewConfig() Config {
	return Config{BlockSize: DefaultBlockSize, SessionHeader: DefaultSessionHeader, MaxBodyBytes: DefaultMaxBodyBytes,
		MaxHeldBytes: DefaultMaxHeldBytes, BodyTimeout: DefaultBodyTimeout, IdleTimeout: DefaultIdleTimeout,
		ReorderRows: DefaultReorderRows}
}

// Stats counts what a Recorder saw.
type Stats struct {
	Requests int64 // requests proxied
	Recorded int64 // rows written
	Skipped  int64 // chat/completions requests not recorded (failed, cut short, unreadable)
	// Cancelled counts chat/completions requests whose client went away
	// (or whose connection the server closed, shutting down) before the
	// response ended: not recorded (their lengths are not the request's).
	Cancelled int64
	Late      int64 // rows written after later ones (Config.ReorderRows)
	Held      int64 // finished rows waiting for an earlier request, now
}

// Recorder is the recording proxy, an http.Handler. It is safe for
// concurrent use; call Close after the server stopped.
type Recorder struct {
	cfg   Config
	proxy *httputil.ReverseProxy
	log   *slog.Logger

	wg sync.WaitGroup

	heldMu sync.Mutex
	held   int64 // bytes held for recording (Config.MaxHeldBytes)

	mu       sync.Mutex
	w        *trace.Writer
	out      io.Writer
	flush    interface{ Flush() error }
	t0       time.Time
	started  bool
	nextReq  int64
	nextOut  int64               // the next request_id to write
	pending  map[int64]*measured // settled requests after nextOut (nil: not recorded)
	late     map[int64]bool      // requests passed over while in flight
	ids      map[[32]byte]uint64 // chained block hash → dense id
	nextID   uint64
	ends     map[[32]byte]string // chain at a prompt's last full block → its session
	replies  map[[32]byte]int64  // sha256 of a response's text → request id
	nextSess int64
	stats    Stats
	err      error
}

// New returns a Recorder writing the trace to out (Mooncake JSONL). If
// out has a Flush() error method (a bufio.Writer), it is flushed after
// every row.
func New(cfg Config, out io.Writer) (*Recorder, error) {
	var errs []error
	if cfg.Upstream == nil || cfg.Upstream.Scheme == "" || cfg.Upstream.Host == "" {
		errs = append(errs, errors.New("capture: Upstream: want an absolute URL such as http://127.0.0.1:8000"))
	}
	if cfg.BlockSize < 1 {
		errs = append(errs, fmt.Errorf("capture: BlockSize %d: want ≥ 1", cfg.BlockSize))
	}
	if cfg.Tokenizer == nil {
		errs = append(errs, errors.New("capture: Tokenizer is nil"))
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxHeldBytes <= 0 {
		cfg.MaxHeldBytes = DefaultMaxHeldBytes
	}
	if cfg.BodyTimeout < 0 || cfg.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("capture: BodyTimeout %v, IdleTimeout %v: want ≥ 0 (0: no bound)", cfg.BodyTimeout, cfg.IdleTimeout))
	}
	if cfg.ReorderRows <= 0 {
		cfg.ReorderRows = DefaultReorderRows
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	tw, err := trace.NewWriter(out, trace.FormatMooncake)
	if err != nil {
		return nil, err
	}
	r := &Recorder{cfg: cfg, w: tw, out: out, log: cfg.Log,
		ids: map[[32]byte]uint64{}, ends: map[[32]byte]string{}, replies: map[[32]byte]int64{},
		pending: map[int64]*measured{}, late: map[int64]bool{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.flush, _ = out.(interface{ Flush() error })
	up := cfg.Upstream
	// The request goes on as the client sent it: no Accept-Encoding added
	// (the transport would ask for gzip and decompress behind the
	// client's back), X-Forwarded-* kept, with the client's address
	// appended to X-Forwarded-For as proxies do.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	r.proxy = &httputil.ReverseProxy{
		Transport: tr,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.Out.Host = pr.In.Host
			for _, h := range [...]string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v := pr.In.Header.Values(h); v != nil {
					pr.Out.Header[h] = slices.Clone(v)
				}
			}
			if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
				if prior := pr.Out.Header.Values("X-Forwarded-For"); len(prior) > 0 {
					ip = strings.Join(prior, ", ") + ", " + ip
				}
				pr.Out.Header.Set("X-Forwarded-For", ip)
			}
		},
		FlushInterval: -1, // flush after every write: events pass one by one
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if req.Context().Err() == nil {
				r.log.Warn("reprise record: upstream", slog.Any("err", err))
			}
			w.WriteHeader(http.StatusBadGateway)
		},
		ModifyResponse: func(resp *http.Response) error {
			if c, ok := resp.Request.Context().Value(captureKey{}).(*exchange); ok {
				c.status = resp.StatusCode
				c.sse = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
				c.encoding = resp.Header.Get("Content-Encoding")
				resp.Body = &teeBody{rc: resp.Body, c: c}
			}
			return nil
		},
	}
	return r, nil
}

type captureKey struct{}

// exchange is one recorded request and what came back.
type exchange struct {
	id       int64
	arrival  time.Time
	session  string
	body     []byte
	path     string
	status   int
	sse      bool
	resp     bytes.Buffer
	cut      bool
	held     int64 // bytes of r.held this exchange holds
	r        *Recorder
	encoding string // the response's Content-Encoding
	ended    bool   // the response body was read to its end
	gone     bool   // the client went away before ServeHTTP returned
}

// teeBody copies what the client reads into the exchange, up to maxCapture.
type teeBody struct {
	rc io.ReadCloser
	c  *exchange
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if err == io.EOF {
		t.c.ended = true
	}
	if n > 0 && !t.c.cut {
		if t.c.resp.Len()+n > maxCapture || !t.c.r.hold(int64(n)) {
			t.c.cut = true // passed on; not recorded
		} else {
			t.c.held += int64(n)
			t.c.resp.Write(p[:n])
		}
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// recorded reports whether path is an endpoint the recorder writes rows for.
func recorded(path string) bool {
	return strings.HasSuffix(path, "/chat/completions") || strings.HasSuffix(path, "/completions")
}

// ServeHTTP proxies one request and, for chat and completions requests,
// records it once the response has been passed on.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.ProtoMajor != 1 || req.Method == "PRI" {
		// An HTTP/2 preface (h2c with prior knowledge) cannot be
		// forwarded over HTTP/1.1 as it came: refuse it.
		w.Header().Set("Connection", "close")
		http.Error(w, "reprise record: HTTP/1.1 only; "+req.Proto+" is not forwarded", http.StatusHTTPVersionNotSupported)
		return
	}
	r.mu.Lock()
	now := time.Now() // under the lock: arrival order is request_id order
	r.stats.Requests++
	if !r.started {
		r.t0, r.started = now, true
	}
	id := r.nextReq
	if req.Method == http.MethodPost && recorded(req.URL.Path) {
		r.nextReq++
	}
	r.mu.Unlock()
	if req.Method != http.MethodPost || !recorded(req.URL.Path) {
		r.proxy.ServeHTTP(w, req)
		return
	}
	r.wg.Add(1) // before anything can end the exchange: Close waits for it
	body, status, msg := r.readBody(w, req)
	req.Body.Close()
	if status != 0 {
		r.release(int64(len(body)))
		r.wg.Done()
		r.resolve(id, nil, false)
		w.Header().Set("Connection", "close")
		http.Error(w, "reprise record: "+msg, status)
		return
	}
	c := &exchange{id: id, arrival: now, body: body, path: req.URL.Path, r: r, held: int64(len(body))}
	if h := r.cfg.SessionHeader; h != "" {
		c.session = req.Header.Get(h)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req = req.WithContext(context.WithValue(req.Context(), captureKey{}, c))
	// The response went to the client, or the client went away mid-way
	// and ReverseProxy panics with http.ErrAbortHandler (net/http
	// recovers it): either way the exchange is settled off the request's
	// path, so Close never waits for it.
	defer func() {
		c.gone = req.Context().Err() != nil
		go func() {
			defer r.wg.Done()
			r.record(c)
		}()
	}()
	r.proxy.ServeHTTP(w, req)
}

// Close waits for the rows still being recorded and flushes the trace;
// it returns the first write error. Call it once no request is being
// received any more (the server was shut down, or its clients are done).
func (r *Recorder) Close() error {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.flush != nil {
		if err := r.flush.Flush(); err != nil && r.err == nil {
			r.err = err
		}
	}
	return r.err
}

// Stats returns the counts so far.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	st.Held = int64(len(r.pending))
	return st
}

// request is the part of a chat or completions body the recorder reads.
type request struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Prompt json.RawMessage `json:"prompt"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type choice struct {
	Text    string `json:"text"`
	Message struct {
		Content string `json:"content"`
	} `json:"message"`
	Delta struct {
		Content string `json:"content"`
	} `json:"delta"`
}

type response struct {
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
}

// contentText returns a message content's text: a string, or the text
// parts of an array of parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// parseResponse returns the response text of choice 0 and the usage, from
// an SSE stream or a JSON body.
func parseResponse(c *exchange) (string, *usage) {
	var text strings.Builder
	var u *usage
	add := func(data []byte) {
		var r response
		if json.Unmarshal(data, &r) != nil {
			return
		}
		if r.Usage != nil {
			u = r.Usage
		}
		if len(r.Choices) > 0 {
			ch := &r.Choices[0]
			text.WriteString(ch.Text)
			text.WriteString(ch.Message.Content)
			text.WriteString(ch.Delta.Content)
		}
	}
	if !c.sse {
		add(c.resp.Bytes())
		return text.String(), u
	}
	for line := range bytes.Lines(c.resp.Bytes()) {
		line = bytes.TrimRight(line, "\r\n")
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			d = bytes.TrimSpace(d)
			if !bytes.Equal(d, []byte("[DONE]")) {
				add(d)
			}
		}
	}
	return text.String(), u
}

// measured is what an exchange's row is made of, computed off the
// Recorder's lock (tokenizing and hashing) and kept until the row's turn
// to be written comes (arrival order): it holds no text.
type measured struct {
	id       int64
	arrival  time.Time
	session  string // from the session header
	endpoint string
	in, out  int
	template int
	ntok     int        // the tokenizer's tokens of the prompt
	chains   [][32]byte // chain value of each block of those tokens, the last maybe partial
	replies  [][32]byte // sha256 of each assistant message's text
	text     [32]byte   // sha256 of the response text
	hasText  bool
}

// measure turns an exchange into its row's measurements; nil when the
// exchange is not recorded (counted as skipped).
func (r *Recorder) measure(c *exchange) *measured {
	if c.status != http.StatusOK || c.cut || !c.ended {
		return nil
	}
	switch strings.ToLower(c.encoding) {
	case "", "identity":
	case "gzip", "x-gzip":
		// Passed on compressed, as the client asked; read uncompressed.
		zr, err := gzip.NewReader(bytes.NewReader(c.resp.Bytes()))
		if err != nil {
			return nil
		}
		plain, err := io.ReadAll(io.LimitReader(zr, maxCapture+1))
		if err != nil || len(plain) > maxCapture {
			return nil
		}
		c.resp.Reset()
		c.resp.Write(plain)
	default:
		r.log.Warn("reprise record: a response encoding the recorder does not read; not recorded", slog.Int64("request_id", c.id), slog.String("content_encoding", c.encoding))
		return nil
	}
	var req request
	if err := json.Unmarshal(c.body, &req); err != nil {
		r.log.Warn("reprise record: a request body is not JSON; not recorded", slog.Int64("request_id", c.id))
		return nil
	}
	tok := r.cfg.Tokenizer
	m := &measured{id: c.id, arrival: c.arrival, session: c.session, endpoint: trace.EndpointCompletions}
	var tokens []int
	if strings.HasSuffix(c.path, "/chat/completions") {
		m.endpoint = trace.EndpointChat
		for _, msg := range req.Messages {
			t := contentText(msg.Content)
			tokens = tok.AppendEncode(tokens, t)
			if msg.Role == "assistant" && t != "" {
				m.replies = append(m.replies, sha256.Sum256([]byte(t)))
			}
		}
	} else {
		var s string
		var ids []int
		switch {
		case json.Unmarshal(req.Prompt, &s) == nil:
			tokens = tok.AppendEncode(tokens, s)
		case json.Unmarshal(req.Prompt, &ids) == nil:
			tokens = ids
		default:
			var ss []string
			if json.Unmarshal(req.Prompt, &ss) == nil && len(ss) > 0 {
				tokens = tok.AppendEncode(tokens, ss[0])
			}
		}
	}
	text, u := parseResponse(c)
	m.in, m.ntok = len(tokens), len(tokens)
	if u != nil && u.PromptTokens > 0 {
		m.in = u.PromptTokens
		// What the server counted beyond the prompt's text: its chat
		// template (or BOS token), which a replay's request gets again.
		m.template = max(m.in-len(tokens), 0)
	}
	if u != nil && u.CompletionTokens > 0 {
		m.out = u.CompletionTokens
	} else if text != "" {
		m.out = tok.Count(text)
	}
	if m.in < 1 {
		return nil
	}
	if m.template >= m.in {
		m.template = 0
	}
	// Chained block hashes: chain_i = sha256(chain_{i-1} ‖ tokens of block i).
	B := r.cfg.BlockSize
	m.chains = make([][32]byte, 0, (len(tokens)+B-1)/B)
	var chain [32]byte
	var buf []byte
	for k := 0; k*B < len(tokens); k++ {
		buf = append(buf[:0], chain[:]...)
		for _, t := range tokens[k*B : min((k+1)*B, len(tokens))] {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(t))
		}
		chain = sha256.Sum256(buf)
		m.chains = append(m.chains, chain)
	}
	if text != "" {
		m.text, m.hasText = sha256.Sum256([]byte(text)), true
	}
	if r.cfg.Text != nil {
		line, _ := json.Marshal(struct {
			RequestID int64           `json:"request_id"`
			Request   json.RawMessage `json:"request"`
			Response  string          `json:"response"`
		}{c.id, secret.Body(c.body), text}) // api keys redacted as in inputs.json
		r.mu.Lock()
		if _, err := r.cfg.Text.Write(append(line, '\n')); err != nil && r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	return m
}

// record measures an exchange and hands its row (or its absence) to the
// arrival-order writer.
func (r *Recorder) record(c *exchange) {
	m := r.measure(c)
	r.release(c.held)
	c.body, c.resp = nil, bytes.Buffer{}
	r.resolve(c.id, m, c.gone && !c.ended)
}

// readBody reads a recorded request's body within Config.MaxBodyBytes,
// Config.MaxHeldBytes (the bytes it returns are held: release them) and
// Config.BodyTimeout. A status other than 0 refuses the request, with
// msg saying why.
func (r *Recorder) readBody(w http.ResponseWriter, req *http.Request) (body []byte, status int, msg string) {
	limit := r.cfg.MaxBodyBytes
	if req.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes is over %d bytes", req.ContentLength, limit)
	}
	// The deadline is lifted once the body is in (a long stream's client
	// may stay quiet), and left to expire on a refused body, so that what
	// is left of it is not waited for.
	var rc *http.ResponseController
	if d := r.cfg.BodyTimeout; d > 0 {
		if c := http.NewResponseController(w); c.SetReadDeadline(time.Now().Add(d)) == nil {
			rc = c
		}
	}
	var buf bytes.Buffer
	if req.ContentLength > 0 {
		buf.Grow(int(req.ContentLength))
	}
	chunk := make([]byte, 32<<10)
	for {
		n, err := req.Body.Read(chunk)
		if n > 0 {
			if int64(buf.Len()+n) > limit {
				return buf.Bytes(), http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", limit)
			}
			if !r.hold(int64(n)) {
				return buf.Bytes(), http.StatusServiceUnavailable,
					fmt.Sprintf("%d bytes of request bodies and responses are held for recording (--max-held-bytes); retry later", r.cfg.MaxHeldBytes)
			}
			buf.Write(chunk[:n])
		}
		if err == io.EOF {
			if rc != nil {
				rc.SetReadDeadline(time.Time{})
			}
			return buf.Bytes(), 0, ""
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return buf.Bytes(), http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %v (--body-timeout)", r.cfg.BodyTimeout)
		}
		if err != nil {
			return buf.Bytes(), http.StatusBadRequest, "reading the request body: " + err.Error()
		}
	}
}

// hold takes n bytes of Config.MaxHeldBytes; false when they are not left.
func (r *Recorder) hold(n int64) bool {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	if r.held+n > r.cfg.MaxHeldBytes {
		return false
	}
	r.held += n
	return true
}

// release gives back n bytes taken by hold.
func (r *Recorder) release(n int64) {
	r.heldMu.Lock()
	r.held -= n
	r.heldMu.Unlock()
}

// NewServer returns an HTTP server for r with its bounds: request headers
// within 30 s, keep-alive connections closed after Config.IdleTimeout
// without a request. Request bodies are bounded by r itself.
func (r *Recorder) NewServer() *http.Server {
	return &http.Server{Handler: r, ReadHeaderTimeout: headerTimeout, IdleTimeout: r.cfg.IdleTimeout}
}

// resolve settles request id: m is its row, nil when it is not recorded
// (cancelled: because its client went away before the response ended).
// Rows are written in arrival order (request_id order): a row waits here
// until every earlier request is settled, unless more than
// Config.ReorderRows rows wait, in which case the oldest request still in
// flight is passed over and its row written whenever it ends.
func (r *Recorder) resolve(id int64, m *measured, cancelled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case m == nil && cancelled:
		r.stats.Cancelled++
	case m == nil:
		r.stats.Skipped++
	}
	if r.late[id] {
		delete(r.late, id)
		if m != nil {
			r.write(m)
		}
		r.flushTrace()
		return
	}
	r.pending[id] = m
	for {
		if m, ok := r.pending[r.nextOut]; ok {
			delete(r.pending, r.nextOut)
			r.nextOut++
			if m != nil {
				r.write(m)
			}
			continue
		}
		if len(r.pending) <= r.cfg.ReorderRows || r.nextOut >= r.nextReq {
			break
		}
		// Too many rows wait for one request still in flight (a long
		// stream): pass it over.
		r.late[r.nextOut] = true
		r.stats.Late++
		r.nextOut++
	}
	r.flushTrace()
}

// write writes m's row; r.mu is held and rows come in arrival order, so
// dense ids, sessions and dependencies are numbered in that order.
func (r *Recorder) write(m *measured) {
	B := r.cfg.BlockSize
	row := trace.Row{Index: m.id, RequestID: m.id, ParentID: -1, InputTokens: m.in, OutputTokens: m.out, HasOffset: true,
		BlockSize: B, Cumulative: true, Endpoint: m.endpoint, TemplateTokens: m.template}
	row.Offset = max(m.arrival.Sub(r.t0), 0)
	need := (m.in + B - 1) / B
	row.HashIDs = make([]uint64, 0, need)
	session := m.session
	best := 0
	for k, chain := range m.chains {
		if k >= need {
			break
		}
		id, ok := r.ids[chain]
		if !ok {
			id = r.nextID
			r.nextID++
			r.ids[chain] = id
		}
		row.HashIDs = append(row.HashIDs, id)
		full := (k+1)*B <= m.ntok
		if s, ok := r.ends[chain]; ok && full && k+1 > best && m.session == "" {
			best, session = k+1, s
		}
	}
	for len(row.HashIDs) < need { // the server counted more tokens than the tokenizer: fresh blocks
		row.HashIDs = append(row.HashIDs, r.nextID)
		r.nextID++
	}
	if session == "" {
		session = "s" + strconv.FormatInt(r.nextSess, 10)
		r.nextSess++
	}
	row.SessionID = session
	if full := m.ntok / B; full > 0 {
		// The chain at this prompt's last full block: a later request
		// extending the prompt continues the session.
		r.ends[m.chains[full-1]] = session
	}
	for _, h := range m.replies {
		if p, ok := r.replies[h]; ok && p != m.id {
			row.WaitFor = append(row.WaitFor, p)
		}
	}
	if len(row.WaitFor) > 1 {
		row.WaitFor = dedupe(row.WaitFor)
	}
	if m.hasText {
		r.replies[m.text] = m.id
	}
	if err := r.w.Write(&row); err != nil && r.err == nil {
		r.err = err
		return
	}
	r.stats.Recorded++
}

// flushTrace passes the rows written so far on to the output; r.mu is held.
func (r *Recorder) flushTrace() {
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if r.flush != nil {
		if err := r.flush.Flush(); err != nil && r.err == nil {
			r.err = err
		}
	}
}

// dedupe removes repeated ids, keeping the first of each.
func dedupe(ids []int64) []int64 {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
