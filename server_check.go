package reprise

import (
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
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine"
)

// maxModelsBody bounds the /v1/models answer the preflight reads.
const maxModelsBody = 1 << 20

// checkServers is the preflight of [PreflightOptions]: every target in
// turn, within the one timeout. It returns an [*UnreachableError] for the
// first target that does not answer, the context's error when ctx ends
// first, and nil when every target answered (or o.Preflight.Skip).
func checkServers(ctx context.Context, o *Options, rp *replayPlan, log *slog.Logger) error {
	if o.Preflight.Skip {
		return nil
	}
	timeout := o.Preflight.Timeout
	if timeout == 0 {
		timeout = DefaultPreflightTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	for i, ec := range slices.Concat([]engine.Config{rp.engine}, rp.targets) {
		u, model := rp.url, o.Model
		if i > 0 {
			u = rp.targetURLs[i-1]
			if m := o.Targets[i-1].Model; m != "" {
				model = m
			}
		}
		err := checkServer(cctx, &ec, model, log)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err() // interrupted: nothing is wrong with the server
		}
		if cctx.Err() != nil {
			err = fieldError("Preflight.Timeout", "no answer to GET /v1/models within %v ({Preflight.Timeout})", timeout)
		}
		return &UnreachableError{URL: u, Err: err}
	}
	log.Debug("server preflight", slog.Int("targets", 1+len(rp.targets)), slog.Duration("took", time.Since(start)))
	return nil
}

// checkServer connects to ec's server and sends GET /v1/models with ec's
// headers, speaking the protocol the run speaks. Any HTTP answer is nil;
// a 200 model list without model is logged as a warning.
func checkServer(ctx context.Context, ec *engine.Config, model string, log *slog.Logger) error {
	base := strings.TrimRight(ec.BaseURL, "/")
	dial := ec.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var p http.Protocols
	switch {
	case ec.HTTP2 && strings.HasPrefix(base, "http://"):
		p.SetUnencryptedHTTP2(true)
	case ec.HTTP2:
		p.SetHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	t := &http.Transport{DialContext: dial, TLSClientConfig: ec.TLS, Protocols: &p, DisableKeepAlives: true}
	defer t.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return err
	}
	for _, h := range ec.Header {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	client := &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		if oe, ok := errors.AsType[*net.OpError](err); ok {
			return oe // "dial tcp 127.0.0.1:1: connect: connection refused"
		}
		if ue, ok := errors.AsType[*url.Error](err); ok {
			return fmt.Errorf("GET /v1/models: %w", ue.Err) // the URL is the message's
		}
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if resp.StatusCode != http.StatusOK {
		log.Debug("server preflight: GET /v1/models", slog.String("url", base), slog.Int("status", resp.StatusCode))
		return nil // a server without /v1/models, or one that wants other credentials
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		return nil
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID == model {
			return nil
		}
		ids = append(ids, m.ID)
	}
	log.Warn("the server's /v1/models does not list the model requests are sent for: they may all fail",
		slog.String("url", base), slog.String("model", model), slog.String("served", strings.Join(ids[:min(len(ids), 5)], ", ")))
	return nil
}
