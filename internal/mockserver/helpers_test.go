package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/testfiles"
)

// fixture is one recorded response with its request.
type fixture struct {
	Request struct {
		Method  string      `json:"method"`
		Path    string      `json:"path"`
		Headers [][2]string `json:"headers"`
		Body    string      `json:"body"`
	} `json:"request"`
	Response struct {
		Status  int         `json:"status"`
		Headers [][2]string `json:"headers"`
	} `json:"response"`
	body []byte // the recorded (de-chunked) body
}

func loadFixture(t *testing.T, flavor, name string) *fixture {
	t.Helper()
	dir := filepath.Join(testfiles.Servers(t), flavor)
	side, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatalf("fixture %s/%s: %v", flavor, name, err)
	}
	var f fixture
	if err := json.Unmarshal(side, &f); err != nil {
		t.Fatalf("fixture %s/%s.json: %v", flavor, name, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".http"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("fixture %s/%s.http: no header/body separator", flavor, name)
	}
	f.body = body
	return &f
}

// startServer starts an in-process server on a free port with zero TTFT and
// ITL unless mutate sets them; it is closed when the test ends.
func startServer(t testing.TB, mutate func(*Config)) *Server {
	t.Helper()
	cfg := NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT, cfg.ITL = 0, 0
	if mutate != nil {
		mutate(cfg)
	}
	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

type response struct {
	status int
	header http.Header
	body   []byte
	err    error // read error after the headers
}

// do sends one request on a fresh connection (no pooling, so llama.cpp's
// closes and injected resets never leak into other requests).
func do(t testing.TB, s *Server, method, path, body string, headers ...string) (response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b, err: rerr}, nil
}

func mustDo(t testing.TB, s *Server, method, path, body string, headers ...string) response {
	t.Helper()
	r, err := do(t, s, method, path, body, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, r.err)
	}
	return r
}

// sseData splits an SSE body into the data payloads of its events.
func sseData(body []byte) []string {
	var out []string
	for ev := range strings.SplitSeq(string(body), "\n\n") {
		if ev == "" {
			continue
		}
		out = append(out, strings.TrimPrefix(ev, "data: "))
	}
	return out
}

// shape renders the structure of a JSON document with its key order:
// strings become s, numbers n, except the values of "object" and "role",
// which are kept. Runs of equal array elements collapse to one.
func shape(data string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	var b strings.Builder
	if err := shapeValue(dec, &b, ""); err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("trailing data")
	}
	return b.String(), nil
}

func shapeValue(dec *json.Decoder, b *strings.Builder, key string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			b.WriteByte('{')
			for first := true; dec.More(); first = false {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if !first {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Quote(k.(string)) + ":")
				if err := shapeValue(dec, b, k.(string)); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			b.WriteByte('}')
			return err
		case '[':
			var elems []string
			for dec.More() {
				var eb strings.Builder
				if err := shapeValue(dec, &eb, ""); err != nil {
					return err
				}
				if len(elems) == 0 || elems[len(elems)-1] != eb.String() {
					elems = append(elems, eb.String())
				}
			}
			_, err := dec.Token()
			b.WriteString("[" + strings.Join(elems, ",") + "]")
			return err
		}
	case string:
		if key == "object" || key == "role" {
			b.WriteString(strconv.Quote(v))
		} else {
			b.WriteByte('s')
		}
	case json.Number:
		b.WriteByte('n')
	case bool:
		b.WriteByte('b')
	case nil:
		b.WriteString("null")
	}
	return nil
}

// streamShape is the shape of every SSE event of body, with runs of equal
// shapes collapsed into one.
func streamShape(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, d := range sseData(body) {
		s := d
		if d != "[DONE]" {
			var err error
			if s, err = shape(d); err != nil {
				s = "MALFORMED"
			}
		}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// withGotConn records in *reused whether the request reused a connection.
func withGotConn(ctx context.Context, reused *bool) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { *reused = i.Reused }})
}

func readAllString(resp *http.Response) (string, error) {
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
