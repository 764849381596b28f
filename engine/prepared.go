package engine

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/httpfield"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// Prepared is a request built ahead of its send time: everything the send
// path needs, so sending does no building. It is immutable once built and
// may be sent by any [Sender].
type Prepared struct {
	Method string
	URL    string
	Header http.Header // HTTP/2 (net/http)
	// Head is the HTTP/1.1 request line and headers, without the request
	// id and the final blank line (HTTP/1.1 mode).
	Head   []byte
	Body   []byte
	Stream bool

	// Known at build time, copied into the record.
	InputTokens          int32 // client-side prompt tokens (the wire prompt)
	TraceInputTokens     int32 // the trace row's input length, -1 unknown
	MaxTokens            int32
	ExpectedCachedTokens int32        // -1 unknown
	BuildNS              int64        // time spent in the adapter's Build
	Media                record.Media // the request's images, audio and video
	// Capture asks for the response's text (Sender.Response): a later
	// turn of the session carries it in its history.
	Capture bool
	// RowHeader are this request's own headers, set before Build: the
	// session id for router affinity (--session-header) and the trace
	// row's "headers". They win over the adapter's and --header's of the
	// same name. Build keeps the slice only during the call.
	RowHeader []adapter.Header
	// CancelAfter, when positive, cancels the request this long after it
	// was written whole unless its response ended first (a planned
	// cancellation, AIPerf's request cancellation): recorded as
	// record.ErrCancelled with CancelAfterNS set.
	CancelAfter time.Duration
	// Session keys the request's connection under ConnSticky: requests
	// of one session (replay.Job.SessionRun) share one, no other request
	// does; 0 gives the request a connection of its own. EndSession
	// marks the session's last request: its connection is closed after
	// it. Other strategies ignore both.
	Session    uint64
	EndSession bool
	// Err is set when the request could not be built; sending it records
	// ErrKind (record.ErrBuild when empty; record.ErrAdapter when the
	// adapter failed) without any I/O.
	Err     error
	ErrKind record.ErrorKind
}

// Builder renders [Prepared] requests with one adapter instance. It is not
// safe for concurrent use: use one per building goroutine.
type Builder struct {
	e    *Engine
	inst adapter.Instance
	out  adapter.HTTPRequest
}

// NewBuilder returns a builder with its own adapter instance.
func (e *Engine) NewBuilder() (*Builder, error) {
	inst, err := e.cfg.Adapter.NewInstance(&e.cfg.AdapterConfig)
	if err != nil {
		return nil, err // it names the adapter
	}
	return &Builder{e: e, inst: inst}, nil
}

// Close releases the builder's adapter instance.
func (b *Builder) Close() error { return b.inst.Release() }

// Build builds in into p. in.Flags' stream bit decides streaming. A build
// failure is stored in p.Err (and returned): it is data for the record.
func (b *Builder) Build(in *adapter.BuildInput, p *Prepared) error {
	t0 := time.Now()
	err := b.inst.Build(in, &b.out)
	p.BuildNS = int64(time.Since(t0))
	p.Stream = in.Flags&adapter.BuildStream != 0
	if p.MaxTokens == 0 {
		p.MaxTokens = int32(in.MaxTokens)
	}
	if err != nil {
		p.Err = fmt.Errorf("adapter %s build: %w", b.e.info.Name, err)
		p.ErrKind = record.ErrAdapter
		return p.Err
	}
	return b.render(in, p)
}

// render makes p of the adapter's request in b.out.
func (b *Builder) render(in *adapter.BuildInput, p *Prepared) error {
	body, err := splice(b.out.Body, b.out.Holes, in)
	if err != nil {
		p.Err = err
		return err
	}
	p.Body = body
	p.Method = b.out.Method.String()
	path := b.out.Path
	if path == "" {
		path = b.e.info.Path
	}
	if len(path) > 0 && path[0] != '/' {
		path = "/" + path
	}
	// Every header and the path can come from data (a trace row, a
	// template's placeholders, a Wasm adapter): a CR, LF or space
	// written raw would add headers or a second request.
	if err := checkWire(path, b.out.Header, b.e.cfg.Header, p.RowHeader); err != nil {
		p.Err = fmt.Errorf("adapter %s build: %w", b.e.info.Name, err)
		p.ErrKind = record.ErrBuild
		return p.Err
	}
	p.URL = b.e.base + path
	if c := b.e.h1c; c != nil {
		p.Head = b.h1Head(p, c, path)
		return nil
	}
	h := make(http.Header, len(b.out.Header)+len(b.e.cfg.Header)+1)
	for _, kv := range b.out.Header {
		h[http.CanonicalHeaderKey(kv.Name)] = []string{kv.Value}
	}
	for _, kv := range b.e.cfg.Header {
		h[http.CanonicalHeaderKey(kv.Name)] = []string{kv.Value}
	}
	for _, kv := range p.RowHeader {
		h[http.CanonicalHeaderKey(kv.Name)] = []string{kv.Value}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(p.Body))}
	p.Header = h
	return nil
}

// splice inserts the synthesized prompt at the adapter's holes. body is
// copied (the adapter's buffer is reused by the next Build).
func splice(body []byte, holes []adapter.Hole, in *adapter.BuildInput) ([]byte, error) {
	if len(holes) == 0 {
		return bytes.Clone(body), nil
	}
	out := make([]byte, 0, len(body)+len(in.PromptText)+16)
	last := 0
	for _, h := range holes {
		if h.Offset < last || h.Offset > len(body) {
			return nil, fmt.Errorf("adapter hole at offset %d outside the body (%d bytes) or out of order", h.Offset, len(body))
		}
		out = append(out, body[last:h.Offset]...)
		last = h.Offset
		switch h.Kind {
		case adapter.HolePromptText:
			out = jsonx.AppendContents(out, in.PromptText)
		case adapter.HolePromptTokens:
			out = append(out, '[')
			for i, id := range in.PromptTokens {
				if i > 0 {
					out = append(out, ',')
				}
				out = strconv.AppendInt(out, int64(id), 10)
			}
			out = append(out, ']')
		case adapter.HoleMessages:
			if in.Flags&adapter.BuildHistory != 0 && len(in.Messages) > 0 {
				out = appendMessages(out, in.Messages)
				break
			}
			out = append(out, `[{"role":"user","content":"`...)
			out = jsonx.AppendContents(out, in.PromptText)
			out = append(out, `"}]`...)
		default:
			return nil, fmt.Errorf("adapter hole kind %d unknown", h.Kind)
		}
	}
	return append(out, body[last:]...), nil
}

// appendMessages appends msgs as an OpenAI messages array.
func appendMessages(dst []byte, msgs []adapter.Message) []byte {
	dst = append(dst, '[')
	for i, m := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"role":"`...)
		dst = jsonx.AppendContents(dst, m.Role)
		dst = append(dst, `","content":"`...)
		dst = jsonx.AppendContents(dst, m.Content)
		dst = append(dst, `"}`...)
	}
	return append(dst, ']')
}

// h1Head renders the request line and headers for reprise's HTTP/1.1
// client: what net/http would send, in a fixed order.
func (b *Builder) h1Head(p *Prepared, c *h1.Client, path string) []byte {
	h := c.AppendRequestLine(make([]byte, 0, 256), p.Method, path)
	ua := false
	// Precedence: the row's headers, then -H, then the adapter's.
	add := func(kvs []adapter.Header, rank int) {
		for _, kv := range kvs {
			name := http.CanonicalHeaderKey(kv.Name)
			if (rank < 1 && userSets(b.e.cfg.Header, name)) || (rank < 2 && userSets(p.RowHeader, name)) {
				continue // overridden
			}
			switch name {
			case "Host", "Content-Length", "Connection", "Transfer-Encoding", "X-Request-Id":
				continue // reprise's own
			case "User-Agent":
				ua = true
			}
			h = append(h, name...)
			h = append(h, ": "...)
			h = append(h, kv.Value...)
			h = append(h, "\r\n"...)
		}
	}
	add(b.out.Header, 0)
	add(b.e.cfg.Header, 1)
	add(p.RowHeader, 2)
	if !ua {
		h = append(h, "User-Agent: reprise\r\n"...)
	}
	h = append(h, "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(p.Body)), 10)
	h = append(h, "\r\n"...)
	return h
}

// checkWire returns why path or a header of hss cannot be written into a
// request as it is, or nil. It does not allocate when all is well.
func checkWire(path string, hss ...[]adapter.Header) error {
	if err := httpfield.CheckPath(path); err != nil {
		return fmt.Errorf("path %.60q: %w", path, err)
	}
	for _, hs := range hss {
		for _, kv := range hs {
			if err := httpfield.Check(kv.Name, kv.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func userSets(hs []adapter.Header, name string) bool {
	for _, kv := range hs {
		if http.CanonicalHeaderKey(kv.Name) == name {
			return true
		}
	}
	return false
}
