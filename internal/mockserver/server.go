package mockserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/internal/chattmpl"
)

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

// serveCompletion serves /v1/chat/completions, /v1/completions,
// /v1/responses and /generate.
func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request, api generationAPI) {
	s.serve(w, r, func(st *reqState, recv int64) { s.completion(st, w, r, recv, api) })
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

// answerTo decides the answer to a prompt: the item's id, whether it is
// right, and the answer's pieces (JSON-escaped, one per output token);
// ok false for a prompt of no item.
func (s *Server) answerTo(texts []string, inflight int) (id string, right bool, pieces []string, ok bool) {
	a := s.cfg.Accuracy
	i, found := a.Key.Lookup(strings.Join(texts, "\n"))
	if !found {
		return "", false, nil, false
	}
	it := a.Key.Item(i)
	right = uniform(s.cfg.Seed, it.ID) < a.p(inflight)
	return it.ID, right, splitPieces(a.Key.Answer(i, right)), true
}
