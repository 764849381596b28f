package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// ndjsonAdapter streams NDJSON lines {"t":"…"} / {"done":true}, builds its
// body with a prompt hole and asks for deferred parsing: the seam a Wasm
// adapter uses.
type ndjsonAdapter struct{ deferred bool }

func (a ndjsonAdapter) Info() adapter.Info {
	return adapter.Info{Name: "ndjson", Path: "/gen", Framing: adapter.FramingNDJSON, Deferred: a.deferred, MaxEventsPerCall: 2}
}
func (a ndjsonAdapter) NewInstance(*adapter.Config) (adapter.Instance, error) {
	return &ndjsonInst{fin: map[uint32]*adapter.Final{}}, nil
}

type ndjsonInst struct {
	fin   map[uint32]*adapter.Final
	calls int
}

func (in *ndjsonInst) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	out.Reset()
	out.Body = append(out.Body, `{"p":"`...)
	out.Holes = append(out.Holes, adapter.Hole{Offset: len(out.Body), Kind: adapter.HolePromptText})
	out.Body = append(out.Body, `","ids":`...)
	out.Holes = append(out.Holes, adapter.Hole{Offset: len(out.Body), Kind: adapter.HolePromptTokens})
	out.Body = append(out.Body, `}`...)
	return nil
}
func (in *ndjsonInst) Open(ctx uint32, _ adapter.OpenFlags) error {
	in.fin[ctx] = &adapter.Final{}
	return nil
}
func (in *ndjsonInst) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	in.calls++
	for i, ev := range b.Events {
		var m struct {
			T    string
			Done bool
		}
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			return dst, adapter.ErrMalformed
		}
		k := record.EventContent
		if m.Done {
			k = record.EventFinish
		}
		dst = append(dst, adapter.Record{Kind: k, Event: b.First + uint32(i), TextBytes: uint32(len(m.T)), Tokens: adapter.TokensUnknown})
	}
	return dst, nil
}
func (in *ndjsonInst) Close(ctx uint32, fin *adapter.Final) error {
	*fin = *in.fin[ctx]
	return nil
}
func (in *ndjsonInst) Release() error { return nil }

// TestAdapterSeam: prompt holes are spliced JSON-escaped, NDJSON is framed
// per line across reads, and deferred parsing (in batches of
// MaxEventsPerCall) gives the same records and timeline as live parsing.
func TestAdapterSeam(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		parts := []string{`{"t":"a"}` + "\n" + `{"t":`, `"bc"}` + "\n", `{"t":"d"}` + "\n" + `{"done":true}` + "\n"}
		for _, p := range parts {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	var results []record.Request
	for _, deferred := range []bool{false, true} {
		cfg := NewConfig()
		cfg.BaseURL = srv.URL
		cfg.Adapter = ndjsonAdapter{deferred: deferred}
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := e.NewBuilder()
		var p Prepared
		if err := b.Build(&adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "say \"hi\"\n", PromptTokens: []int{1, 2}}, &p); err != nil {
			t.Fatal(err)
		}
		s, _ := e.NewSender()
		var r record.Request
		s.Do(context.Background(), &p, &r)
		e.Close()
		if want := `{"p":"say \"hi\"\n","ids":[1,2]}`; !bytes.Equal(got, []byte(want)) {
			t.Errorf("body %s, want %s", got, want)
		}
		if !r.OK() || r.Events != 4 || r.ContentEvents != 3 {
			t.Errorf("deferred=%v: %s %s events %d content %d reads %d", deferred, r.ErrorKind, r.ErrorMessage, r.Events, r.ContentEvents, r.Reads)
		}
		if deferred && s.inst.(*ndjsonInst).calls != 2 {
			t.Errorf("deferred parsing in %d calls, want 2 batches of ≤ 2 events", s.inst.(*ndjsonInst).calls)
		}
		results = append(results, r)
	}
	if results[0].ContentEvents != results[1].ContentEvents || results[0].Events != results[1].Events {
		t.Error("live and deferred parsing disagree")
	}
}
