// Command recordtokenize records a real server's /tokenize answers as a
// fixture for internal/servertok's tests: every request servertok.Load
// sends while it learns the server's words (a full session), then the
// shapes the server takes and refuses, asked one by one. Each line of the
// output is one exchange: {"method", "path", "body", "status",
// "content_type", "response"}.
//
//	go run ./internal/servertok/recordtokenize -url http://127.0.0.1:18080 -model tiny -out FILE
//
// It is a development tool, not part of reprise.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/reprise-bench/reprise/internal/servertok"
)

type exchange struct {
	Note        string `json:"note,omitempty"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	Body        string `json:"body"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Response    string `json:"response"`
}

type recorder struct {
	rt  http.RoundTripper
	out []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := r.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	r.out = append(r.out, exchange{Method: req.Method, Path: req.URL.Path, Body: string(body), Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Response: string(data)})
	return resp, nil
}

func main() {
	base := flag.String("url", "", "server root")
	model := flag.String("model", "", "model name")
	out := flag.String("out", "", "fixture file (JSON Lines)")
	flag.Parse()
	if err := run(*base, *model, *out); err != nil {
		fmt.Fprintln(os.Stderr, "recordtokenize:", err)
		os.Exit(1)
	}
}

func run(base, model, out string) error {
	rec := &recorder{rt: http.DefaultTransport}
	client := &http.Client{Transport: rec, Timeout: time.Minute}
	ctx := context.Background()
	tok, info, err := servertok.Load(ctx, servertok.Config{BaseURL: base, Model: model, Client: client, CacheDir: "-"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err) // recorded all the same: the error is what the fixture shows
	} else {
		fmt.Fprintf(os.Stderr, "learned %d words, shape %s, %d requests\n", tok.Words(), info.Shape, info.Requests)
	}
	session := len(rec.out)
	for i := range rec.out {
		rec.out[i].Note = "servertok.Load session"
	}
	// The shapes one by one, for texts that matter.
	for _, text := range []string{"\n", " the quick brown fox", "\n the\n quick"} {
		for _, body := range []map[string]any{
			{"prompt": text},
			{"model": model, "prompt": text, "add_special_tokens": false},
			{"content": text},
			{"content": text, "add_special": false, "parse_special": false},
			{"content": text, "with_pieces": true},
			{"inputs": text, "parameters": map[string]any{}},
		} {
			if err := post(client, base+"/tokenize", body); err != nil {
				return err
			}
		}
	}
	if err := post(client, base+"/tokenize", map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": " the quick brown fox"}}, "add_generation_prompt": true}); err != nil {
		return err
	}
	if err := post(client, base+"/no-such-endpoint", map[string]any{"prompt": "x"}); err != nil {
		return err
	}
	for i := session; i < len(rec.out); i++ {
		rec.out[i].Note = "shape probe"
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, x := range rec.out {
		if err := enc.Encode(x); err != nil {
			return err
		}
	}
	return f.Close()
}

func post(c *http.Client, u string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := c.Post(u, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}
