package reprise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of [ServerControlOptions], as AIPerf has them.
const (
	// DefaultWaitForModelInterval is the pause between two readiness
	// polls.
	DefaultWaitForModelInterval = 5 * time.Second
	// DefaultWaitForModelMode polls with a one-token request.
	DefaultWaitForModelMode = WaitInference
	// DefaultResetCacheTimeout bounds one cache reset request.
	DefaultResetCacheTimeout = 10 * time.Second
	// DefaultProfilerTimeout bounds a /start_profile or /stop_profile
	// request (vLLM's stop writes the trace before it answers).
	DefaultProfilerTimeout = 5 * time.Minute
)

// The readiness probes of [ServerControlOptions.WaitMode].
const (
	// WaitModels polls GET /v1/models until it lists the model.
	WaitModels = "models"
	// WaitHealth polls GET /health until it answers 200 (llama.cpp
	// answers 503 "Loading model" before).
	WaitHealth = "health"
	// WaitInference polls with a one-token request of the run's API
	// (chat or completions; another endpoint polls as WaitModels).
	WaitInference = "inference"
	// WaitBoth polls as WaitModels, then as WaitInference.
	WaitBoth = "both"
)

// ResetCachePaths are the paths a cache reset tries, in order, when
// ServerControlOptions.ResetCachePath is empty: vLLM's, then SGLang's.
var ResetCachePaths = []string{"/reset_prefix_cache", "/flush_cache"}

// ServerControlOptions say what [Run] asks of each server (the URL and
// every target) besides the load: wait until it serves the model, empty
// its prefix cache, and run its profiler around the requests.
type ServerControlOptions struct {
	// WaitForModel, when > 0, polls every server before anything else
	// (before the trace is read, so a --tokenizer server finds it up)
	// until it serves the model, for at most this long; then Run fails
	// with a [*NotReadyError] that names the last answer. An answer
	// that waiting cannot change (401, 403) fails at once.
	WaitForModel time.Duration
	// WaitMode is WaitModels, WaitHealth, WaitInference or WaitBoth
	// ("" = DefaultWaitForModelMode).
	WaitMode string
	// WaitInterval is the pause between polls (0 =
	// DefaultWaitForModelInterval).
	WaitInterval time.Duration

	// ResetCache POSTs the server's prefix-cache reset after the server
	// check, before the first request (each run of a repeated run or a
	// sweep is a Run, so each starts cold): ResetCachePath, or else the
	// paths of ResetCachePaths in order until one exists. Any 2xx is
	// success; a server that has none is a [*ServerControlError] and
	// nothing is sent.
	ResetCache        bool
	ResetCachePath    string
	ResetCacheTimeout time.Duration // 0 = DefaultResetCacheTimeout

	// Profiler POSTs /start_profile before the first request and
	// /stop_profile after the last one ended (vLLM and SGLang's torch
	// profiler). A refused start is a [*ServerControlError] with nothing
	// sent; a refused stop is logged.
	Profiler bool
}

// ServerTarget is the server a control request goes to: its base URL
// (user info is sent as Basic authorization), the model, extra headers
// ("NAME: VALUE"), a bearer token and the endpoint ("" or "chat",
// "completions": what a WaitInference probe sends).
type ServerTarget struct {
	URL      string
	Model    string
	Headers  []string
	APIKey   string
	Endpoint string
}

// NotReadyError is a server that did not serve the model within
// ServerControlOptions.WaitForModel, or answered what waiting cannot
// change.
type NotReadyError struct {
	// URL is the server, without user info.
	URL string
	// Model is the model waited for.
	Model string
	// Waited is how long it was polled; Polls how many times.
	Waited time.Duration
	Polls  int
	// Last is the last answer, e.g. "GET /health: 503 Loading model".
	Last string
	// Final reports an answer that waiting cannot change.
	Final bool
}

func (e *NotReadyError) Error() string {
	if e.Final {
		return fmt.Sprintf("wait for model: %s: %s; nothing was sent", e.URL, e.Last)
	}
	return fmt.Sprintf("wait for model: %s did not serve %q within %v (%d polls): last answer: %s; nothing was sent (raise --wait-for-model, in profile --wait-for-model-timeout, or read the server's log)",
		e.URL, e.Model, e.Waited.Round(time.Millisecond), e.Polls, e.Last)
}

// ServerControlError is a control request (cache reset, profiler) the
// server refused or does not serve.
type ServerControlError struct {
	// URL is the server, without user info; What the request ("reset
	// the prefix cache", "start the profiler").
	URL, What string
	// Answers are the server's answers, one per path tried.
	Answers []string
	// Hint says what to do.
	Hint string
}

func (e *ServerControlError) Error() string {
	return fmt.Sprintf("%s at %s: %s; %s", e.What, e.URL, strings.Join(e.Answers, "; "), e.Hint)
}

// CacheReset is what a cache reset did: the path that answered, its
// status and how long it took.
type CacheReset struct {
	Path   string
	Status int
	Took   time.Duration
}

// controlClient sends control requests to one server.
type controlClient struct {
	base    string // without user info or trailing slash
	display string // base without user info, for messages
	header  http.Header
	client  *http.Client
	srvName string // the Server header of the last answer
}

func newControlClient(t ServerTarget) (*controlClient, error) {
	u, err := url.Parse(strings.TrimRight(t.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://HOST:PORT or https://HOST:PORT", t.URL)
	}
	h := http.Header{}
	if u.User != nil {
		pw, _ := u.User.Password()
		req := &http.Request{Header: h}
		req.SetBasicAuth(u.User.Username(), pw)
		u.User = nil
	}
	if t.APIKey != "" {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	for _, kv := range t.Headers {
		if k, v, ok := strings.Cut(kv, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	return &controlClient{base: u.String(), display: u.String(), header: h,
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// do sends one request and returns the status and up to 64 KiB of the
// body; err is a failure to get any answer.
func (c *controlClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	c.srvName = resp.Header.Get("Server")
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, b, nil
}

// answer describes a status and body in a few words: the status and the
// server's error message (OpenAI's error.message, else the body's first
// line).
func answer(status int, body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			msg = obj.Message
		} else {
			var s string
			if json.Unmarshal(e.Error, &s) == nil {
				msg = s
			}
		}
	}
	if msg == "" {
		msg, _, _ = strings.Cut(strings.TrimSpace(string(body)), "\n")
		if len(msg) > 120 {
			msg = msg[:120] + "…"
		}
	}
	msg = strings.TrimSpace(strings.TrimPrefix(msg, strconv.Itoa(status)))
	if msg == "" {
		return fmt.Sprintf("%d %s", status, http.StatusText(status))
	}
	return fmt.Sprintf("%d %s", status, msg)
}

// noAnswer describes a request that got no answer.
func noAnswer(err error) string {
	if oe, ok := errors.AsType[*net.OpError](err); ok {
		if strings.Contains(oe.Error(), "refused") {
			return fmt.Sprintf("connection refused (nothing listens at %s yet)", oe.Addr)
		}
		return oe.Error()
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		if ue.Timeout() {
			return "no answer before the poll's deadline"
		}
		return ue.Err.Error()
	}
	return err.Error()
}

// WaitForModel polls the server t until it serves t.Model, as
// [ServerControlOptions] describes for mode, every interval, for at
// most timeout. It returns nil once the server is ready, a
// [*NotReadyError] when the time is up (or at once for an answer that
// waiting cannot change), or ctx's error.
func WaitForModel(ctx context.Context, t ServerTarget, mode string, timeout, interval time.Duration, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if mode == "" {
		mode = DefaultWaitForModelMode
	}
	if interval <= 0 {
		interval = DefaultWaitForModelInterval
	}
	c, err := newControlClient(t)
	if err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(timeout)
	e := &NotReadyError{URL: c.display, Model: t.Model}
	probes := []string{mode}
	if mode == WaitBoth {
		probes = []string{WaitModels, WaitInference}
	}
	for _, probe := range probes {
		for {
			pctx, cancel := context.WithDeadline(ctx, deadline)
			ready, last, final := c.probe(pctx, probe, t)
			cut := pctx.Err() != nil && ctx.Err() == nil // the wait's deadline ended this poll
			cancel()
			e.Polls++
			if !cut || e.Last == "" {
				e.Last = last // a poll cut short says less than the answer before it
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if ready {
				log.Info("server ready", slog.String("url", c.display), slog.String("probe", probe), slog.Int("polls", e.Polls),
					slog.Duration("waited", time.Since(start)))
				break
			}
			e.Waited = time.Since(start)
			if final {
				e.Final = true
				return e
			}
			left := time.Until(deadline)
			if left <= 0 {
				return e
			}
			log.Info("waiting for the model", slog.String("url", c.display), slog.String("answer", last), slog.Duration("next_in", min(interval, left)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(interval, left)):
			}
			if time.Until(deadline) <= 0 {
				e.Waited = time.Since(start)
				return e
			}
		}
	}
	return nil
}

// probe polls once: ready, the answer in words, and whether waiting
// cannot change it.
func (c *controlClient) probe(ctx context.Context, probe string, t ServerTarget) (ready bool, last string, final bool) {
	method, path := http.MethodGet, "/v1/models"
	var body []byte
	switch probe {
	case WaitHealth:
		path = "/health"
	case WaitInference:
		switch t.Endpoint {
		case "", "chat":
			path = "/v1/chat/completions"
			body, _ = json.Marshal(map[string]any{"model": t.Model, "max_tokens": 1, "stream": false,
				"messages": []map[string]string{{"role": "user", "content": "ready?"}}})
		case "completions":
			path = "/v1/completions"
			body, _ = json.Marshal(map[string]any{"model": t.Model, "max_tokens": 1, "stream": false, "prompt": "ready?"})
		}
		if body != nil {
			method = http.MethodPost
		}
	}
	status, b, err := c.do(ctx, method, path, body)
	what := method + " " + path + ": "
	if err != nil {
		return false, what + noAnswer(err), false
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return false, what + answer(status, b) + " (check --api-key and --header)", true
	case status < 200 || status > 299:
		return false, what + answer(status, b), false
	case path != "/v1/models":
		return true, what + answer(status, nil), false
	}
	ids, ok := modelIDs(b)
	switch {
	case !ok:
		return false, what + "200 but not a model list", false
	case slices.Contains(ids, t.Model):
		return true, what + "200 lists " + t.Model, false
	}
	return false, fmt.Sprintf("%s200 without %q (serves %s)", what, t.Model, strings.Join(ids[:min(len(ids), 5)], ", ")), false
}

// modelIDs returns the model ids of an OpenAI /v1/models body (data[].id);
// false when it is no such list.
func modelIDs(b []byte) ([]string, bool) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &list) != nil {
		return nil, false
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, true
}

// ResetServerCache POSTs the prefix-cache reset of the server t: path,
// or else the paths of [ResetCachePaths] in order until one exists (a
// 404 or 405 tries the next). Each request is bounded by timeout (0 =
// [DefaultResetCacheTimeout]). It returns what answered, or a
// [*ServerControlError] naming every answer and what to do. It is what
// [Run] calls with ServerControlOptions.ResetCache, exported for a
// caller that resets between its own runs (a sweep's points).
func ResetServerCache(ctx context.Context, t ServerTarget, path string, timeout time.Duration) (CacheReset, error) {
	if timeout <= 0 {
		timeout = DefaultResetCacheTimeout
	}
	c, err := newControlClient(t)
	if err != nil {
		return CacheReset{}, err
	}
	paths := ResetCachePaths
	if path != "" {
		paths = []string{"/" + strings.TrimLeft(path, "/")}
	}
	e := &ServerControlError{URL: c.display, What: "reset the prefix cache"}
	missing := 0
	for _, p := range paths {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		status, b, err := c.do(rctx, http.MethodPost, p, nil)
		cancel()
		if ctx.Err() != nil {
			return CacheReset{}, ctx.Err()
		}
		if err != nil {
			e.Answers = append(e.Answers, "POST "+p+": "+noAnswer(err))
			e.Hint = fmt.Sprintf("raise --reset-cache-timeout (%v now) or check the server", timeout)
			return CacheReset{}, e
		}
		if status >= 200 && status <= 299 {
			return CacheReset{Path: p, Status: status, Took: time.Since(start)}, nil
		}
		e.Answers = append(e.Answers, "POST "+p+": "+answer(status, b))
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			missing++
			continue
		}
		e.Hint = "the server refused the reset (vLLM resets only while no request runs); run without --reset-cache or fix the server"
		return CacheReset{}, e
	}
	switch {
	case strings.HasPrefix(c.srvName, "llama.cpp"):
		e.Hint = "llama.cpp's server has no prefix-cache reset: restart it between runs, or keep it from reusing prompts with --extra-body '{\"cache_prompt\":false}', and run without --reset-cache"
	case path != "":
		e.Hint = "check the path (--reset-cache-path), or run without --reset-cache"
	default:
		e.Hint = "vLLM serves /reset_prefix_cache only when started with VLLM_SERVER_DEV_MODE=1; for another server give its path with --reset-cache-path, or run without --reset-cache"
	}
	return CacheReset{}, e
}

// profilerCall POSTs /start_profile or /stop_profile to t.
func profilerCall(ctx context.Context, t ServerTarget, start bool) error {
	c, err := newControlClient(t)
	if err != nil {
		return err
	}
	path, what := "/stop_profile", "stop the profiler"
	if start {
		path, what = "/start_profile", "start the profiler"
	}
	cctx, cancel := context.WithTimeout(ctx, DefaultProfilerTimeout)
	defer cancel()
	status, b, err := c.do(cctx, http.MethodPost, path, nil)
	e := &ServerControlError{URL: c.display, What: what}
	switch {
	case err != nil:
		e.Answers = []string{"POST " + path + ": " + noAnswer(err)}
		e.Hint = "check the server"
	case status >= 200 && status <= 299:
		return nil
	default:
		e.Answers = []string{"POST " + path + ": " + answer(status, b)}
		e.Hint = "vLLM profiles only when started with VLLM_TORCH_PROFILER_DIR set (SGLang: SGLANG_TORCH_PROFILER_DIR); run without --server-profiler"
		if strings.HasPrefix(c.srvName, "llama.cpp") {
			e.Hint = "llama.cpp's server has no profiler endpoint; run without --server-profiler"
		}
	}
	return e
}

// serverTargets lists the servers of o: the URL, then every target.
func serverTargets(o *Options) []ServerTarget {
	ts := []ServerTarget{{URL: o.URL, Model: o.Model, Headers: o.Headers, APIKey: o.APIKey, Endpoint: o.Endpoint}}
	for _, t := range o.Targets {
		m := t.Model
		if m == "" {
			m = o.Model
		}
		ts = append(ts, ServerTarget{URL: t.URL, Model: m, Headers: append(append([]string(nil), o.Headers...), t.Headers...),
			APIKey: o.APIKey, Endpoint: o.Endpoint})
	}
	return ts
}

// waitForServers is Run's first step with ServerControlOptions.WaitForModel:
// every server is waited for, within one budget.
func waitForServers(ctx context.Context, o *Options, log *slog.Logger) error {
	sc := o.Server
	if sc.WaitForModel <= 0 || len(validateServerControl(&sc)) > 0 {
		return nil // validate reports bad options
	}
	deadline := time.Now().Add(sc.WaitForModel)
	for _, t := range serverTargets(o) {
		if err := WaitForModel(ctx, t, sc.WaitMode, time.Until(deadline), sc.WaitInterval, log); err != nil {
			return err
		}
	}
	return nil
}

// resetServers resets every server's cache (ServerControlOptions.ResetCache).
func resetServers(ctx context.Context, o *Options, log *slog.Logger) error {
	if !o.Server.ResetCache {
		return nil
	}
	for _, t := range serverTargets(o) {
		r, err := ResetServerCache(ctx, t, o.Server.ResetCachePath, o.Server.ResetCacheTimeout)
		if err != nil {
			return err
		}
		log.Info("reset the server's prefix cache", slog.String("url", urlForFiles(t.URL)), slog.String("path", r.Path),
			slog.Int("status", r.Status), slog.Duration("took", r.Took))
	}
	return nil
}

// profileServers starts (start) or stops every server's profiler
// (ServerControlOptions.Profiler).
func profileServers(ctx context.Context, o *Options, start bool) error {
	if !o.Server.Profiler {
		return nil
	}
	var errs []error
	for _, t := range serverTargets(o) {
		if err := profilerCall(ctx, t, start); err != nil {
			if start {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validateServerControl reports the problems of o.Server.
func validateServerControl(sc *ServerControlOptions) []*FieldError {
	var errs []*FieldError
	switch sc.WaitMode {
	case "", WaitModels, WaitHealth, WaitInference, WaitBoth:
	default:
		errs = append(errs, fieldError("Server.WaitMode", "{Server.WaitMode} %q: want models, health, inference or both", sc.WaitMode))
	}
	if sc.WaitForModel < 0 || sc.WaitInterval < 0 || sc.ResetCacheTimeout < 0 {
		errs = append(errs, fieldError("Server.WaitForModel", "{Server.WaitForModel}, {Server.WaitInterval} and {Server.ResetCacheTimeout} must not be negative"))
	}
	if sc.ResetCachePath != "" && !sc.ResetCache {
		errs = append(errs, fieldError("Server.ResetCachePath", "{Server.ResetCachePath} needs {Server.ResetCache}"))
	}
	return errs
}
