package adapter_test

import (
	"bytes"
	"fmt"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// lines is a toy adapter for an endpoint that streams plain-text lines
// (NDJSON framing, one token per line, "END" finishes). It shows the whole
// contract: describe, build, and classify events into records by index.
type lines struct{}

func (lines) Info() adapter.Info {
	return adapter.Info{Name: "lines", Version: "1", Path: "/generate", Framing: adapter.FramingNDJSON}
}

func (lines) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	return &linesInstance{model: cfg.Model, open: map[uint32]*adapter.Final{}}, nil
}

type linesInstance struct {
	model string
	open  map[uint32]*adapter.Final
}

func (in *linesInstance) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	out.Reset()
	out.Path = "/generate"
	out.Header = append(out.Header, adapter.Header{Name: "Content-Type", Value: "text/plain"})
	// The engine splices the synthesized prompt at the hole, JSON-escaped.
	out.Body = append(out.Body, `{"model":"`+in.model+`","prompt":"`...)
	out.Holes = append(out.Holes, adapter.Hole{Offset: len(out.Body), Kind: adapter.HolePromptText})
	out.Body = append(out.Body, fmt.Sprintf(`","max_new_tokens":%d}`, b.MaxTokens)...)
	return nil
}

func (in *linesInstance) Open(ctx uint32, _ adapter.OpenFlags) error {
	in.open[ctx] = &adapter.Final{}
	return nil
}

func (in *linesInstance) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	fin := in.open[ctx]
	for i, ev := range b.Events {
		idx := b.First + uint32(i)
		if bytes.Equal(ev.Data, []byte("END")) {
			fin.FinishReason, fin.Valid = adapter.FinishStop, fin.Valid|adapter.ValidFinishReason
			dst = append(dst, adapter.Record{Kind: record.EventFinish, Event: idx, Aux0: uint32(adapter.FinishStop), Tokens: adapter.TokensUnknown})
			continue
		}
		fin.CompletionTokens++
		dst = append(dst, adapter.Record{Kind: record.EventContent, Event: idx, TextBytes: uint32(len(ev.Data)), Tokens: 1, Flags: adapter.RecordTokensExact})
	}
	return dst, nil
}

func (in *linesInstance) Close(ctx uint32, fin *adapter.Final) error {
	*fin = *in.open[ctx]
	fin.Valid |= adapter.ValidCompletionTokens
	delete(in.open, ctx)
	return nil
}

func (in *linesInstance) Release() error { return nil }

func Example() {
	var a adapter.Adapter = lines{}
	inst, _ := a.NewInstance(&adapter.Config{Model: "m"})

	var req adapter.HTTPRequest
	inst.Build(&adapter.BuildInput{MaxTokens: 2}, &req)
	fmt.Printf("%s %s %s hole at %d\n", req.Method, req.Path, req.Body, req.Holes[0].Offset)

	inst.Open(1, adapter.OpenStream)
	recs, _ := inst.Parse(1, &adapter.Batch{Events: []adapter.Event{{Data: []byte("Hel")}, {Data: []byte("lo")}, {Data: []byte("END")}}}, nil)
	var fin adapter.Final
	inst.Close(1, &fin)
	for _, r := range recs {
		fmt.Println(r.Event, r.Kind, r.TextBytes)
	}
	fmt.Println("tokens", fin.CompletionTokens, "finish", fin.FinishReason)
	// Output:
	// POST /generate {"model":"m","prompt":"","max_new_tokens":2} hole at 23
	// 0 content 3
	// 1 content 2
	// 2 finish 0
	// tokens 2 finish stop
}
