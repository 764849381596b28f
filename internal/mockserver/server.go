package mockserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reprise-bench/reprise/internal/chattmpl"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// Server is a running mock server. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	ln      net.Listener
	srv     *http.Server
	url     string
	start   time.Time // carries the monotonic reading all times derive from
	startNS int64     // start as Unix ns

	seq     atomic.Uint64
	running atomic.Int64
	adm     *admission
	cache   *prefixCache
	met     *metrics
	oracle  *oracle
	ctl     controls
	tok     Tokenizer
	timing  timing
	states  sync.Pool
	jobs    jobs // video jobs (media.go)
	log     *slog.Logger

	mu       sync.Mutex // guards closing, inflight, idle and wg.Add
	closing  bool
	inflight int
	idle     chan struct{}  // closed while inflight == 0
	wg       sync.WaitGroup // in-flight completion handlers
	done     chan struct{}  // closed by Close
	served   chan error     // the result of http.Server.Serve
	closeMu  sync.Once
	closeEr  error
}

// Start validates cfg, listens on cfg.Addr and serves until ctx ends or
// Close is called. The server copies cfg; later changes have no effect.
func Start(ctx context.Context, cfg *Config) (*Server, error) {
	if cfg == nil {
		panic("BUG: mockserver.Start with a nil config")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mock-server listen %s: %w", cfg.Addr, err)
	}
	s := newServer(cfg)
	if s.tok == nil {
		tok, err := DefaultTokenizer()
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("mock-server tokenizer: %w", err)
		}
		s.tok = tok
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true) // prior-knowledge h2c on the same port
	s.srv = &http.Server{
		Protocols:         &protocols,
		Handler:           s.handler(),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.srv.IdleTimeout = cfg.IdleTimeout // 5 s by default: uvicorn's (vLLM) and llama-server's keep-alive timeout
	go func() { s.served <- s.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

func newServer(cfg *Config) *Server {
	c := *cfg
	c.Models = slices.Clone(cfg.Models)
	c.Faults = slices.Clone(cfg.Faults)
	if c.JitterDist == "" {
		c.JitterDist = JitterNone
	}
	if c.VideoFPS == 0 {
		c.VideoFPS = DefaultVideoFPS
	}
	if c.maxBody <= 0 {
		c.maxBody = defaultMaxBody
	}
	s := &Server{
		cfg:    c,
		start:  time.Now(),
		adm:    newAdmission(c.MaxNumSeqs),
		cache:  newPrefixCache(c.BlockSize, c.PrefixCacheTokens),
		met:    newMetrics(),
		oracle: newOracle(c.KeepLog, c.EventLog),
		tok:    c.Tokenizer,
		log:    c.Log,
		done:   make(chan struct{}),
		served: make(chan error, 1),
		timing: timing{ttft: c.TTFT, prefill: c.PrefillPerToken, itl: c.ITL, perRunning: c.ITLPerRunning,
			jitter: c.Jitter, dist: c.JitterDist, perImage: c.PrefillPerImage, perAudioSecond: c.PrefillPerAudioSecond},
	}
	s.startNS = s.start.UnixNano()
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.states.New = func() any { return newReqState() }
	return s
}

// URL returns the base URL, e.g. "http://127.0.0.1:41234" (no trailing slash).
func (s *Server) URL() string { return s.url }

// Addr returns the listen address with the chosen port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server: it closes the listener and every connection,
// waits for in-flight handlers to return and flushes the event log. It is
// safe to call more than once; later calls return the first result.
func (s *Server) Close() error {
	s.closeMu.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		close(s.done)
		err := s.srv.Close()
		s.wg.Wait()
		if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		if ferr := s.oracle.flush(); ferr != nil {
			err = errors.Join(err, fmt.Errorf("mock-server event log: %w", ferr))
		}
		s.closeEr = err
	})
	return s.closeEr
}

// Done is closed when the server starts closing.
func (s *Server) Done() <-chan struct{} { return s.done }

// Log returns a copy of the in-memory oracle log (Config.KeepLog), one
// entry per finished request in completion order. Callers own the result.
func (s *Server) Log() []RequestLog { return s.oracle.snapshot() }

// ResetLog forgets the in-memory log (the JSONL file is not touched).
func (s *Server) ResetLog() { s.oracle.reset() }

// CachedBlocks returns the number of blocks in the prefix cache.
func (s *Server) CachedBlocks() int { return s.cache.blocks() }

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

// WaitIdle blocks until no completion request is in flight, so that the
// log holds every request whose response a client has read (a client can
// read the end of a response just before the server logs it). It returns
// ctx's error if ctx ends first.
func (s *Server) WaitIdle(ctx context.Context) error {
	s.mu.Lock()
	idle := s.idle
	s.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// mono returns the monotonic time since start in ns.
func (s *Server) mono() int64 { return int64(time.Since(s.start)) }

// wall converts a mono time to Unix ns.
func (s *Server) wall(mono int64) int64 { return s.startNS + mono }

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiChat) })
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiCompletions) })
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiResponses) })
	// SGLang's /generate; a body with "inputs" is TGI's /generate.
	mux.HandleFunc("POST /generate", func(w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiSGLang) })
	mux.HandleFunc("POST /generate_stream", func(w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiTGIStream) })
	for path, api := range map[string]poolingAPI{"/v1/embeddings": apiEmbeddings, "/rerank": apiRerankTEI, "/v2/rerank": apiRerankCohere,
		"/v1/ranking": apiRankingNIM, "/v1/rerank": apiRerankVLLM, "/v1/score": apiScoreVLLM, "/score": apiScoreVLLM} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) { s.servePooling(w, r, api) })
	}
	s.mediaRoutes(mux) // media.go
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("GET /health", s.serveHealth)
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("POST /tokenize", s.serveTokenize)
	mux.HandleFunc("POST /detokenize", s.serveDetokenize)
	for _, k := range []ControlKind{ControlResetPrefixCache, ControlFlushCache, ControlStartProfile, ControlStopProfile} {
		mux.HandleFunc("POST /"+string(k), s.serveControl(k))
	}
	return mux
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

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	if s.cfg.Flavor == FlavorLlamaCPP {
		s.setHeaders(w.Header(), false)
		_, _ = io.WriteString(w, `{"status":"ok"}`)
		return
	}
	w.Header()["Server"] = hdrServer
	w.WriteHeader(http.StatusOK)
}

func (s *Server) serveModels(w http.ResponseWriter, _ *http.Request) {
	owner := "vllm"
	if s.cfg.Flavor == FlavorLlamaCPP {
		owner = "llamacpp"
	}
	created := s.startNS / 1e9
	b := []byte(`{"object":"list","data":[`)
	for i, m := range s.cfg.Models {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":"`...)
		b = append(b, m...)
		b = append(b, `","object":"model","created":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, `,"owned_by":"`...)
		b = append(b, owner...)
		b = append(b, `","root":"`...)
		b = append(b, m...)
		b = append(b, `","parent":null,"max_model_len":`...)
		b = strconv.AppendInt(b, int64(s.cfg.MaxModelLen), 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	s.setHeaders(w.Header(), false)
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(b))}
	_, _ = w.Write(b)
}

func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	b := s.appendMetrics(make([]byte, 0, 8<<10))
	if s.cfg.Flavor == FlavorLlamaCPP {
		s.setHeaders(w.Header(), false)
		w.Header()["Content-Type"] = hdrMetricsLl
		w.Header()["Process-Start-Time-Unix"] = []string{strconv.FormatInt(s.startNS/1e9, 10)}
	} else {
		w.Header()["Server"] = hdrServer
		w.Header()["Content-Type"] = hdrMetrics
	}
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(b))}
	_, _ = w.Write(b)
}

// reqState is the pooled per-request working memory.
type reqState struct {
	body        []byte
	ids         []int
	buf         []byte
	lens        []int
	finish      []string
	rd          renderer
	timer       *time.Timer
	pcg         rand.PCG
	rng         *rand.Rand
	log         RequestLog
	faults      faultSet
	prev        []time.Duration // per choice: schedule offset of the previous token
	choices     []choiceText
	headersSent bool
	h2          bool   // HTTP/2 (h2c): no hijacking
	pending     []byte // coalesced events not yet written
	stamped     int    // log.Events before this index have their write time
	due         int64  // mono deadline of the events being written; 0 = as soon as possible
	writeStart  int64  // mono time the write being recorded began; 0 = no write
	raw         rawSink
	hs          httpSink
}

func newReqState() *reqState {
	st := &reqState{buf: make([]byte, 0, 1024), body: make([]byte, 0, 1024)}
	st.rng = rand.New(&st.pcg)
	return st
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

// generationAPI is the shape of a text-generation endpoint.
type generationAPI uint8

const (
	apiCompletions generationAPI = iota // /v1/completions
	apiChat                             // /v1/chat/completions
	apiResponses                        // /v1/responses (OpenAI shape in every flavor)
	apiSGLang                           // SGLang /generate (generate.go)
	apiTGI                              // TGI /generate (not streamed)
	apiTGIStream                        // TGI /generate_stream
)

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

// serveCompletion serves /v1/chat/completions, /v1/completions,
// /v1/responses and /generate.
func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request, api generationAPI) {
	s.serve(w, r, func(st *reqState, recv int64) { s.completion(st, w, r, recv, api) })
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

// completion answers a text-generation request whose body serve has read:
// it decodes the request and counts its prompt (answering an invalid one
// with an error), draws the output lengths, waits for a scheduler slot and
// the prefill, and streams or writes the answer.
func (s *Server) completion(st *reqState, w http.ResponseWriter, r *http.Request, recv int64, api generationAPI) {
	chat := api == apiChat || api == apiResponses // Responses input is messages, like chat
	llama := s.cfg.Flavor == FlavorLlamaCPP && (api == apiChat || api == apiCompletions)
	req, api, model, ok := s.decodeCompletion(st, w, api, chat, llama)
	if !ok {
		return
	}
	st.log.Stream = req.stream
	limit, ok := s.countPrompt(st, w, &req, chat, llama)
	if !ok {
		return
	}
	prompt := len(st.ids)
	reasoning, total := s.drawLengths(st, req.n, req.ignoreEOS, limit)
	reasoning, total = s.answerAccuracy(st, &req, api, limit, reasoning, total)
	created := s.initRenderer(st, api, chat, llama, model, recv)

	ctx := r.Context()
	if !s.slowHeaders(ctx, st, w, recv, req.stream, llama) {
		return
	}
	admitted, ok := s.admit(ctx, st)
	if !ok {
		return
	}
	defer s.release()
	held := int64(prompt + total)
	s.met.runningTokens.Add(held)
	defer s.met.runningTokens.Add(-held)
	if prompt+total > int(s.met.maxTokensSeen.Load()) {
		s.met.maxTokensSeen.Store(int64(prompt + total)) // a gauge of the largest seen; races only lose a max
	}
	cached, first := s.prefill(st, &req, prompt, admitted, recv)

	run := runInfo{req: &req, chat: chat, llama: llama, model: model, created: created, prompt: prompt,
		cached: cached, reasoning: reasoning, total: total, admitted: admitted, first: first}
	s.countFinish(st, s.generate(ctx, st, &run, api))
}

// decodeCompletion decodes the body of api and picks the model that
// answers; a /generate body in TGI's shape turns api into apiTGI. False
// when the request was answered with an error (an invalid body, an
// unknown model).
func (s *Server) decodeCompletion(st *reqState, w http.ResponseWriter, api generationAPI, chat, llama bool) (request, generationAPI, string, bool) {
	var req request
	var err error
	switch api {
	case apiResponses:
		req, err = decodeResponsesRequest(st.body)
	case apiSGLang, apiTGI, apiTGIStream:
		req, err = decodeGenerateRequest(st.body, api)
		if api == apiSGLang && req.tgi {
			api = apiTGI
		}
	default:
		req, err = decodeRequest(st.body, chat)
	}
	if err != nil {
		s.writeRequestError(st, w, err)
		return req, api, "", false
	}
	model := s.cfg.Models[0]
	if !llama && req.model != "" {
		if !slices.Contains(s.cfg.Models, req.model) {
			s.writeError(st, w, 404, "The model `"+req.model+"` does not exist.", "")
			return req, api, "", false
		}
		model = req.model
	}
	return req, api, model, true
}

// countPrompt tokenizes the prompt into st.ids (its length logged) and
// returns the largest output length per choice. False when the request
// was answered with an error: a prompt that does not tokenize, or one
// that leaves no room in the context.
func (s *Server) countPrompt(st *reqState, w http.ResponseWriter, req *request, chat, llama bool) (limit int, ok bool) {
	ids, err := s.promptIDs(st.ids[:0], req, chat)
	if err != nil {
		s.writeError(st, w, http.StatusBadRequest, err.Error(), "BadRequestError")
		return 0, false
	}
	st.ids = ids
	prompt := len(ids)
	st.log.PromptTokens = prompt
	limit, msg, typ := s.outputLimit(*req, prompt, chat)
	if msg != "" {
		if llama {
			s.writeLlamaContextError(st, w, msg, prompt)
		} else {
			s.writeError(st, w, 400, msg, typ)
		}
		return 0, false
	}
	return limit, true
}

// drawLengths draws the output length of each choice (limit when
// ignoreEOS) into st.lens, with its finish reason into st.finish, and
// returns the reasoning and the output tokens over all choices.
func (s *Server) drawLengths(st *reqState, choices int, ignoreEOS bool, limit int) (reasoning, total int) {
	st.lens, st.finish = st.lens[:0], st.finish[:0]
	for range choices {
		n := limit
		if !ignoreEOS {
			n = 1 + st.rng.IntN(limit)
		}
		reason := "stop"
		if n == limit {
			reason = "length"
		}
		st.lens = append(st.lens, n)
		st.finish = append(st.finish, reason)
		reasoning += min(s.cfg.ReasoningTokens, n)
		total += n
	}
	return reasoning, total
}

// answerAccuracy, when Config.Accuracy knows the prompt of a chat or
// completions request, makes the first choice answer it (st.rd.answer,
// logged) and returns the reasoning and output tokens changed to match;
// else it returns them as they are.
func (s *Server) answerAccuracy(st *reqState, req *request, api generationAPI, limit, reasoning, total int) (int, int) {
	st.rd.answer = st.rd.answer[:0]
	if s.cfg.Accuracy == nil || api != apiChat && api != apiCompletions {
		return reasoning, total
	}
	s.mu.Lock()
	inflight := s.inflight
	s.mu.Unlock()
	item, right, pieces, ok := s.answerTo(req.texts, inflight)
	if !ok {
		return reasoning, total
	}
	// The answer, then the end of the response: a model that answered
	// stops (capped by the output limit).
	R := min(s.cfg.ReasoningTokens, limit)
	n := min(R+len(pieces), limit)
	total += n - st.lens[0]
	reasoning += R - min(s.cfg.ReasoningTokens, st.lens[0])
	st.lens[0] = n
	st.finish[0] = "stop"
	if n == limit && R+len(pieces) > limit {
		st.finish[0] = "length"
	}
	st.rd.answer, st.rd.ansFrom = pieces, R
	st.log.AccuracyItem, st.log.AccuracyRight, st.log.InFlight = item, right, inflight
	return reasoning, total
}

// initRenderer draws the response id (logged) and readies the request's
// renderer for api; it returns the answer's created time, in Unix
// seconds from the time the body was received.
func (s *Server) initRenderer(st *reqState, api generationAPI, chat, llama bool, model string, recv int64) int64 {
	id := s.responseID(st, chat, st.log.Seq)
	if api == apiResponses {
		id = "resp_" + id[len("chatcmpl-"):]
	}
	st.log.ResponseID = id
	created := s.wall(recv) / 1e9
	st.rd.init(llama, chat, id, model, created)
	st.rd.responses = api == apiResponses
	st.rd.gen = api
	return created
}

// slowHeaders, for a request with the slow-headers fault, waits out its
// delay from recv and sends the 200 headers; false when the client went
// away or the write failed. Without the fault it returns true at once.
func (s *Server) slowHeaders(ctx context.Context, st *reqState, w http.ResponseWriter, recv int64, stream, llama bool) bool {
	d := st.faults.slowHeaders
	if d <= 0 {
		return true
	}
	if !s.sleepUntil(ctx, st, recv+int64(d)) {
		return false
	}
	st.due = recv + int64(d)
	s.setHeaders(w.Header(), stream)
	st.writeStart = s.mono()
	if stream && llama && !st.h2 {
		if st.raw.headers() != nil {
			return false
		}
	} else {
		w.WriteHeader(http.StatusOK)
		if st.hs.flush() != nil {
			return false
		}
	}
	st.headersSent = true
	s.event(st, EventHeaders, 0, nil)
	st.due = 0
	return true
}

// prefill looks the prompt (st.ids) up in the prefix cache, inserting it,
// counts its tokens and the time to the first token in the metrics, and
// returns the cached tokens and the time from admission to the first
// token (with the request's media).
func (s *Server) prefill(st *reqState, req *request, prompt int, admitted, recv int64) (cached int, first time.Duration) {
	lg := &st.log
	cached = s.cache.lookupInsert(st.ids)
	lg.CachedTokens = cached
	s.met.promptTokens.Add(int64(prompt))
	s.met.evaluatedTokens.Add(int64(prompt - cached))
	if s.cache != nil {
		s.met.cacheHits.Add(int64(cached))
		s.met.cacheQueries.Add(int64(prompt))
	}
	first = s.timing.firstToken(prompt-cached, st.rng)
	if len(req.media) > 0 {
		lg.InputMedia = append(lg.InputMedia[:0], req.media...)
		first += s.timing.mediaDelay(req.media)
	}
	s.met.ttft.observe(time.Duration(admitted-recv) + first)
	s.met.prefillNS.Add(int64(first))
	return cached, first
}

// generate writes the answer in api's shape, streamed or not, and returns
// its finish reason ("" when it did not finish).
func (s *Server) generate(ctx context.Context, st *reqState, run *runInfo, api generationAPI) string {
	stream := run.req.stream
	switch {
	case stream && api == apiResponses:
		return s.streamResponses(ctx, st, run)
	case stream && (api == apiSGLang || api == apiTGIStream):
		return s.streamGenerate(ctx, st, run)
	case stream:
		return s.stream(ctx, st, run)
	default:
		return s.nonStream(ctx, st, run)
	}
}

// countFinish counts a generation's finish reason ("": aborted) and its
// end-to-end time in the metrics.
func (s *Server) countFinish(st *reqState, reason string) {
	switch reason {
	case "length":
		s.met.finishedLength.Add(1)
	case "stop":
		s.met.finishedStop.Add(1)
	case "":
		s.met.finishedAbort.Add(1)
	}
	if lg := &st.log; lg.EndNS != 0 {
		s.met.e2e.observe(time.Duration(lg.EndNS - lg.ReceivedNS))
	}
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

// promptIDs appends the prompt's token ids of req to ids: its token-id
// prompt, its texts through Config.ChatTemplate, or its texts with
// Config.ChatTemplateTokens per chat message. An error is a template that
// refused the messages (a 400, as vLLM answers).
func (s *Server) promptIDs(ids []int, req *request, chat bool) ([]int, error) {
	switch {
	case req.hasIDs:
		return append(ids, req.ids...), nil
	case chat && s.cfg.ChatTemplate != nil:
		return s.templateIDs(ids, req)
	}
	for _, t := range req.texts {
		if chat {
			for range s.cfg.ChatTemplateTokens {
				ids = append(ids, templateToken)
			}
		}
		ids = s.tok.AppendEncode(ids, t)
	}
	return ids, nil
}

// templateIDs appends the ids of req's messages rendered through
// Config.ChatTemplate: an added token is templateToken, the text between
// is encoded.
func (s *Server) templateIDs(ids []int, req *request) ([]int, error) {
	msgs := make([]chattmpl.Message, len(req.texts))
	for i, t := range req.texts {
		msgs[i] = chattmpl.Message{Role: "user", Content: t}
		if len(req.messages) == len(req.texts) {
			msgs[i].Role = req.messages[i].Role // else a Responses input: its items
		}
	}
	text, err := s.cfg.ChatTemplate.Render(msgs)
	if err != nil {
		return ids, err
	}
	for piece, added := range s.cfg.ChatTemplate.Pieces(text) {
		if added {
			ids = append(ids, templateToken)
		} else {
			ids = s.tok.AppendEncode(ids, piece)
		}
	}
	return ids, nil
}

// templateToken is the id standing for one chat-template token.
const templateToken = 199_999

type runInfo struct {
	req                              *request
	chat, llama                      bool
	model                            string
	created                          int64
	prompt, cached, reasoning, total int
	admitted                         int64
	first                            time.Duration
}

// outputLimit returns the largest output length per choice, or the error
// message (and vLLM error type) when the request does not fit the context.
func (s *Server) outputLimit(req request, prompt int, chat bool) (limit int, msg, typ string) {
	ctxLen := s.cfg.MaxModelLen
	where := "messages"
	if !chat {
		where = "prompt"
	}
	if s.cfg.Flavor == FlavorLlamaCPP {
		if prompt >= ctxLen {
			return 0, fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt, ctxLen), ""
		}
		limit = ctxLen - prompt
		if req.maxTokens > 0 {
			limit = min(limit, req.maxTokens)
		}
		return limit, "", ""
	}
	if req.maxTokens > 0 {
		if prompt+req.maxTokens > ctxLen {
			return 0, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens "+
				"(%d in the %s, %d in the completion). Please reduce the length of the %s or completion",
				ctxLen, prompt+req.maxTokens, prompt, where, req.maxTokens, where), "BadRequestError"
		}
		return req.maxTokens, "", ""
	}
	if prompt >= ctxLen {
		return 0, fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input "+
			"tokens. Please reduce the length of the input %s.", ctxLen, prompt, where), "BadRequestError"
	}
	return ctxLen - prompt, "", ""
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

// responseID renders a flavor-shaped response id from the request's RNG:
// vLLM chatcmpl-<uuid> / cmpl-<uuid>-0, llama.cpp chatcmpl-<32 alphanumerics>.
func (s *Server) responseID(st *reqState, chat bool, seq uint64) string {
	b := st.buf[:0]
	if s.cfg.Flavor == FlavorLlamaCPP {
		const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		b = append(b, "chatcmpl-"...)
		for range 32 {
			b = append(b, alnum[st.rng.IntN(len(alnum))])
		}
		return string(b)
	}
	const hex = "0123456789abcdef"
	if chat {
		b = append(b, "chatcmpl-"...)
	} else {
		b = append(b, "cmpl-"...)
	}
	hi, lo := st.rng.Uint64(), st.rng.Uint64()^seq
	for i := range 32 {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b = append(b, '-')
		}
		v := hi
		if i >= 16 {
			v = lo
		}
		b = append(b, hex[(v>>(60-4*(i%16)))&15])
	}
	if !chat {
		b = append(b, "-0"...)
	}
	return string(b)
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

// httpSink writes events through net/http: one Write and one flush each.
type httpSink struct {
	w     http.ResponseWriter
	abort bool // reset requested on a connection that cannot be hijacked
}

func (h *httpSink) write(p []byte) error {
	if _, err := h.w.Write(p); err != nil {
		return err
	}
	return h.flush()
}

func (h *httpSink) flush() error {
	if f, ok := h.w.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	return http.NewResponseController(h.w).Flush()
}

// reset hijacks the connection and closes it with an RST. On HTTP/2 it
// marks the handler for abort instead, which resets the stream.
func (h *httpSink) reset() {
	conn, _, err := http.NewResponseController(h.w).Hijack()
	if err != nil {
		h.abort = true
		return
	}
	resetConn(conn)
}

func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// rawSink writes a llama.cpp stream on the hijacked connection, framing
// chunks itself, and closes the connection after the response, as
// llama-server does (net/http cannot close after a response without
// announcing it in a Connection header).
type rawSink struct {
	w    http.ResponseWriter
	conn net.Conn
	buf  []byte
	sent bool // headers written
}

const llamaSSEHeaders = "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Type: text/event-stream\r\n" +
	"Server: llama.cpp\r\nTransfer-Encoding: chunked\r\nAccess-Control-Allow-Origin: \r\n\r\n"

func (r *rawSink) hijack() error {
	if r.conn != nil {
		return nil
	}
	conn, _, err := http.NewResponseController(r.w).Hijack()
	if err != nil {
		return err
	}
	r.conn = conn
	return nil
}

// headers writes the header block alone (slow-headers).
func (r *rawSink) headers() error {
	if err := r.hijack(); err != nil {
		return err
	}
	r.sent = true
	_, err := io.WriteString(r.conn, llamaSSEHeaders)
	return err
}

func (r *rawSink) write(p []byte) error {
	if err := r.hijack(); err != nil {
		return err
	}
	b := r.buf[:0]
	if !r.sent {
		b = append(b, llamaSSEHeaders...)
		r.sent = true
	}
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	b = append(b, "\r\n"...)
	r.buf = b
	_, err := r.conn.Write(b)
	return err
}

// end writes the last chunk and closes the connection (FIN).
func (r *rawSink) end() {
	if r.conn == nil {
		return
	}
	_, _ = io.WriteString(r.conn, "0\r\n\r\n")
	_ = r.conn.Close()
	r.conn = nil
}

func (r *rawSink) reset() {
	if r.hijack() != nil {
		return
	}
	resetConn(r.conn)
	r.conn = nil
}

func (r *rawSink) abort() {
	if r.conn != nil {
		_ = r.conn.Close()
		r.conn = nil
	}
}
