//go:build wasip1

// Command my-adapter is a reprise endpoint adapter (ABI v1) for a JSON API
// that streams {"text": "..."} events: POST /generate with
// {"model", "prompt", "max_tokens", "stream"}. Change Build and Parse to
// your server's shapes. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o my-adapter.wasm .
package main

import "github.com/reprise-bench/reprise/sdk-wasm/go/adapter"

func main() {}

func init() { adapter.Register(&myAdapter{streams: map[uint32]*stream{}}) }

type myAdapter struct {
	model   string
	streams map[uint32]*stream
}

type stream struct {
	flags uint32
	sum   adapter.Summary
	msg   []byte
}

func (a *myAdapter) Describe() adapter.Description {
	return adapter.Description{Name: "my-adapter", Version: "0.1.0", Path: "/generate"}
}

func (a *myAdapter) Configure(c *adapter.Config) error {
	a.model = c.Model
	return nil
}

// Build writes the request; the prompt goes into a hole the host fills.
func (a *myAdapter) Build(r *adapter.BuildRequest, w *adapter.RequestWriter) error {
	w.SetPath("/generate")
	w.Header("Content-Type", "application/json")
	w.Raw(`{"model":`)
	w.String(a.model)
	w.Raw(`,"prompt":"`)
	w.Prompt(adapter.HoleText)
	w.Raw(`"`)
	if r.MaxTokens > 0 {
		w.Raw(`,"max_tokens":`)
		w.Int(int64(r.MaxTokens))
	}
	if r.Stream() {
		w.Raw(`,"stream":true}`)
	} else {
		w.Raw(`,"stream":false}`)
	}
	return nil
}

func (a *myAdapter) Open(ctx uint32, flags uint32) {
	a.streams[ctx] = &stream{flags: flags, sum: adapter.Summary{Choices: 1}}
}

var text []byte

// Parse classifies one event: {"text": "..."} is content, {"error": "..."}
// an error, "finish_reason" a finish and "usage" the token counts.
func (a *myAdapter) Parse(ctx uint32, ev *adapter.Event, out *adapter.Records) error {
	st := a.streams[ctx]
	switch {
	case ev.Flags&adapter.EventComment != 0:
		out.Add(adapter.Record{Kind: adapter.KindMeta, Tokens: adapter.TokensUnknown})
		return nil
	case ev.Flags&adapter.EventDone != 0:
		return nil
	}
	if e := adapter.Get(ev.Data, "error"); e != nil && !adapter.IsNull(e) {
		st.sum.Valid |= adapter.ValidError
		st.sum.ErrorCode = 500
		st.msg = adapter.AppendString(st.msg[:0], e)
		out.Add(adapter.Record{Kind: adapter.KindError, Aux0: 500, Tokens: adapter.TokensUnknown})
		return nil
	}
	if t := adapter.Get(ev.Data, "text"); adapter.IsString(t) && len(t) > 2 {
		text = adapter.AppendString(text[:0], t)
		out.AddText(adapter.Record{Kind: adapter.KindContent, Tokens: adapter.TokensUnknown}, text, st.flags&adapter.OpenCapture != 0)
	}
	if f := adapter.Get(ev.Data, "finish_reason"); adapter.IsString(f) {
		st.sum.Finish = adapter.FinishCode(f)
		st.sum.Valid |= adapter.ValidFinishReason
		out.Add(adapter.Record{Kind: adapter.KindFinish, Aux0: st.sum.Finish, Tokens: adapter.TokensUnknown})
	}
	if u := adapter.Get(ev.Data, "usage"); u != nil && !adapter.IsNull(u) {
		if n, ok := adapter.Uint(adapter.Get(u, "prompt_tokens")); ok {
			st.sum.PromptTokens, st.sum.Valid = n, st.sum.Valid|adapter.ValidPromptTokens
		}
		if n, ok := adapter.Uint(adapter.Get(u, "completion_tokens")); ok {
			st.sum.CompletionTokens, st.sum.Valid = n, st.sum.Valid|adapter.ValidCompletionTokens
		}
		out.Add(adapter.Record{Kind: adapter.KindUsage, Tokens: adapter.TokensUnknown})
	}
	return nil
}

func (a *myAdapter) Close(ctx uint32, s *adapter.Summary) error {
	st := a.streams[ctx]
	delete(a.streams, ctx)
	*s = st.sum
	s.Message = st.msg
	return nil
}
