// What every handler shares: the life of one request (serve, admission, sleeping
// until a deadline, the event log), the response headers and the error replies.

package mockserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// tooLarge is the message of a 413 (built only then: the request path
// must not allocate for it).
func (s *Server) tooLarge() string { return fmt.Sprintf("request body over %d bytes", s.cfg.maxBody) }

// enter registers an in-flight handler; false when the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	if s.inflight == 0 {
		s.idle = make(chan struct{})
	}
	s.inflight++
	return true
}

// exit unregisters an in-flight handler after its log entry was added.
func (s *Server) exit() {
	s.mu.Lock()
	s.inflight--
	if s.inflight == 0 {
		close(s.idle)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// Shared header values; net/http only reads them.
var (
	hdrSSE       = []string{"text/event-stream"}
	hdrJSON      = []string{"application/json"}
	hdrJSONUTF8  = []string{"application/json; charset=utf-8"}
	hdrServer    = []string{"reprise-mock"}
	hdrLlama     = []string{"llama.cpp"}
	hdrKeepAlive = []string{"timeout=5, max=100"}
	hdrEmpty     = []string{""}
	hdrClose     = []string{"close"}
	hdrMetrics   = []string{"text/plain; version=0.0.4; charset=utf-8; escaping=underscores"}
	hdrMetricsLl = []string{"text/plain; version=0.0.4"}
)

// setHeaders sets the flavor's response headers for a JSON or SSE response.
func (s *Server) setHeaders(h http.Header, sse bool) {
	if s.cfg.Flavor == FlavorLlamaCPP {
		h["Keep-Alive"] = hdrKeepAlive
		if sse {
			h["Content-Type"] = hdrSSE
		} else {
			h["Content-Type"] = hdrJSONUTF8
		}
		h["Server"] = hdrLlama
		h["Access-Control-Allow-Origin"] = hdrEmpty
		h["Date"] = nil // llama-server sends no Date
		return
	}
	h["Server"] = hdrServer
	if sse {
		h["Content-Type"] = hdrSSE
	} else {
		h["Content-Type"] = hdrJSON
	}
}

// defaultMaxBody bounds request bodies (a 1M-token prompt is about 4 MiB).
const defaultMaxBody = 64 << 20

var errBodyTooLarge = errors.New("request body too large")

func readBody(dst []byte, r *http.Request, maxBody int) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= int64(maxBody) && int64(cap(dst)) < n+1 {
		dst = make([]byte, 0, n+1)
	}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Body.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > maxBody {
			return dst, errBodyTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// serve answers one request with a pooled reqState, between enter and
// exit: it reads the body (413 over the size limit, 408 past BodyTimeout),
// starts the request's log (handed to the oracle when it returns), draws
// the request's faults and, unless one of them answered it, calls handle
// with the time the body was received.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, handle func(st *reqState, recv int64)) {
	if !s.enter() {
		return
	}
	// An HTTP/2 stream cannot be hijacked: a reset fault aborts the handler
	// (RST_STREAM) after everything else was recorded and released.
	abort := false
	defer func() {
		if abort {
			panic(http.ErrAbortHandler)
		}
	}()
	defer s.exit()
	st := s.states.Get().(*reqState)
	defer func() {
		abort = st.hs.abort
		s.states.Put(st)
	}()
	// A body that cannot fit is refused before it is read; a body that
	// does not arrive within BodyTimeout is answered 408. Either way
	// net/http closes the connection after the answer (body left unread).
	if r.ContentLength > int64(s.cfg.maxBody) {
		s.reject(st, w, r, s.mono(), http.StatusRequestEntityTooLarge, s.tooLarge())
		return
	}
	dl, hasDL := w.(interface{ SetReadDeadline(time.Time) error })
	hasDL = hasDL && s.cfg.BodyTimeout > 0
	if hasDL {
		_ = dl.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	}
	var err error
	st.body, err = readBody(st.body[:0], r, s.cfg.maxBody)
	recv := s.mono()
	if hasDL && err == nil {
		// After a failure the deadline stays: net/http's discard of the
		// unread body then fails at once and it closes the connection.
		_ = dl.SetReadDeadline(time.Time{})
	}
	switch {
	case errors.Is(err, errBodyTooLarge):
		s.reject(st, w, r, recv, http.StatusRequestEntityTooLarge, s.tooLarge())
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.reject(st, w, r, recv, http.StatusRequestTimeout,
			fmt.Sprintf("request body not received within %v (--body-timeout)", s.cfg.BodyTimeout))
		return
	case err != nil:
		return // the client went away while sending; nothing to answer
	}
	seq := s.seq.Add(1) - 1
	st.pcg.Seed(s.cfg.Seed, seq)
	lg := &st.log
	events := lg.Events[:0]
	if s.oracle.keep {
		events = nil
	}
	*lg = RequestLog{Seq: seq, ClientRequestID: r.Header.Get(RequestIDHeader), RemoteAddr: r.RemoteAddr, Endpoint: r.URL.Path,
		ReceivedNS: s.wall(recv), Events: events}
	st.faults = faultSet{}
	st.headersSent = false
	st.writeStart = 0 // a failed write of the previous request may have left it set
	st.due = 0
	st.pending = st.pending[:0]
	st.hs = httpSink{w: w}
	st.raw = rawSink{w: w, buf: st.raw.buf}
	st.h2 = r.ProtoMajor >= 2
	defer s.finishLog(st)
	if s.drawFaults(st, w, r) {
		handle(st, recv)
	}
}

// admit waits for a scheduler slot and counts the request as running from
// then (its admission time, also logged); false when the client went away
// while queued. release ends what admit began.
func (s *Server) admit(ctx context.Context, st *reqState) (int64, bool) {
	if !s.adm.acquire(ctx) {
		st.log.Error = "client went away while queued"
		return 0, false
	}
	s.running.Add(1)
	admitted := s.mono()
	st.log.AdmittedNS = s.wall(admitted)
	return admitted, true
}

// release frees the slot admit took.
func (s *Server) release() {
	s.running.Add(-1)
	s.adm.release()
}

// reject answers a request whose body was not read (too large, too slow)
// with an error, and logs it.
func (s *Server) reject(st *reqState, w http.ResponseWriter, r *http.Request, recv int64, status int, msg string) {
	st.hs = httpSink{w: w}
	st.writeStart = 0
	st.due = 0
	st.log = RequestLog{Seq: s.seq.Add(1) - 1, ClientRequestID: r.Header.Get(RequestIDHeader), RemoteAddr: r.RemoteAddr, Endpoint: r.URL.Path,
		ReceivedNS: s.wall(recv)}
	s.writeError(st, w, status, msg, "")
	s.finishLog(st)
}

func faultMessage(code int, model string) string {
	switch code {
	case 429:
		return "Rate limit reached for " + model + " (injected by reprise mock-server)."
	case 503:
		return "The server is overloaded (injected by reprise mock-server); retry later."
	}
	return "Internal server error (injected by reprise mock-server)."
}

// sleepUntil waits until the mono deadline; false when the client left or
// the server is closing. It uses one reusable timer per request.
func (s *Server) sleepUntil(ctx context.Context, st *reqState, deadline int64) bool {
	d := time.Duration(deadline - s.mono())
	if d <= 0 {
		return true
	}
	if st.timer == nil {
		st.timer = time.NewTimer(d)
	} else {
		st.timer.Reset(d)
	}
	select {
	case <-st.timer.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	st.timer.Stop()
	st.log.Error = "client went away"
	return false
}

// event records one written event at the time its write returned (and,
// from st.writeStart, the time it began).
func (s *Server) event(st *reqState, kind EventKind, choice int, err error) bool {
	t := s.mono()
	start := st.writeStart
	st.writeStart = 0
	if start == 0 {
		start = t // no write (a reset): one instant
	}
	if err != nil {
		st.log.Error = "write: " + err.Error()
		st.log.EndNS = s.wall(t)
		return false
	}
	st.log.EndNS = s.wall(t)
	if s.oracle.enabled() {
		var due int64
		if st.due != 0 {
			due = s.wall(st.due)
		}
		st.log.Events = append(st.log.Events, Event{Kind: kind, Choice: int32(choice), StartNS: s.wall(start), TimeNS: s.wall(t), DueNS: due})
	}
	return true
}

func (s *Server) finishLog(st *reqState) {
	if st.log.EndNS == 0 {
		st.log.EndNS = s.wall(s.mono())
	}
	if s.oracle.enabled() {
		if err := s.oracle.add(&st.log); err != nil {
			s.log.Error("mock-server event log: no more lines will be written", "err", err)
		}
	}
}

// writeRequestError answers a request that failed to decode.
func (s *Server) writeRequestError(st *reqState, w http.ResponseWriter, err error) {
	re, ok := errors.AsType[*requestError](err)
	if !ok {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	if !re.syntax {
		s.writeError(st, w, 400, re.msg, "")
		return
	}
	if s.cfg.Flavor == FlavorLlamaCPP {
		s.writeError(st, w, 500, fmt.Sprintf("[json.exception.parse_error.101] parse error at byte %d: syntax error - %s",
			re.offset, re.msg), "")
		return
	}
	s.writeError(st, w, 400, "Failed to read and parse request body, "+re.msg, "")
}

// drawFaults sets the request's faults, from its FaultHeader and drawn at
// the configured rates, and answers the ones that strike before the queue
// (a reset, an error status); false when the request is answered.
func (s *Server) drawFaults(st *reqState, w http.ResponseWriter, r *http.Request) bool {
	if hv := r.Header.Get(FaultHeader); hv != "" {
		if err := parseFaultHeader(hv, &st.faults); err != nil {
			s.writeError(st, w, 400, FaultHeader+": "+err.Error(), "")
			return false
		}
	}
	for _, fr := range s.cfg.Faults {
		if fr.Rate > 0 && st.rng.Float64() < fr.Rate {
			st.faults.add(fr.Fault)
		}
	}
	st.log.Fault = st.faults.names
	if st.faults.resetBefore {
		st.hs.reset()
		s.event(st, EventReset, 0, nil)
		return false
	}
	if code := st.faults.status; code != 0 {
		s.writeError(st, w, code, faultMessage(code, s.cfg.Models[0]), "")
		return false
	}
	return true
}

// writeError answers with an OpenAI-style error body before any stream.
func (s *Server) writeError(st *reqState, w http.ResponseWriter, status int, msg, typ string) {
	llama := s.cfg.Flavor == FlavorLlamaCPP
	st.buf = appendErrorBody(st.buf[:0], llama, status, msg, typ)
	s.writeErrorBody(st, w, status, msg)
}

func (s *Server) writeLlamaContextError(st *reqState, w http.ResponseWriter, msg string, prompt int) {
	b := append(st.buf[:0], `{"error":{"code":400,"message":"`...)
	b = jsonx.AppendContents(b, msg)
	b = append(b, `","type":"exceed_context_size_error","n_prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"n_ctx":`...)
	b = strconv.AppendInt(b, int64(s.cfg.MaxModelLen), 10)
	st.buf = append(b, "}}"...)
	s.writeErrorBody(st, w, 400, msg)
}

func (s *Server) writeErrorBody(st *reqState, w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	s.setHeaders(h, false)
	if s.cfg.Flavor == FlavorLlamaCPP {
		h["Connection"] = hdrClose
	}
	h["Content-Length"] = []string{strconv.Itoa(len(st.buf))}
	st.writeStart = s.mono()
	w.WriteHeader(status)
	_, err := w.Write(st.buf)
	if err == nil {
		err = st.hs.flush()
	}
	st.log.Status = status
	st.log.Error = msg
	s.event(st, EventBody, 0, err)
}
