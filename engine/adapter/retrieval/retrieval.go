// Package retrieval is the native endpoint adapter for the APIs of
// retrieval pipelines: embeddings (OpenAI /v1/embeddings, NVIDIA NIM
// embeddings) and rankings (Hugging Face TEI /rerank, Cohere /v2/rerank,
// NVIDIA NIM /v1/ranking, vLLM /v1/rerank and /v1/score).
//
// None of them streams or generates tokens: a request carries a batch of
// inputs (embeddings) or a query and its passages (rankings), and its one
// response body carries a vector or a score per input. The parser checks
// the body's shape, counts the items as content and takes the server's
// prompt-token count where the API reports one (usage.prompt_tokens;
// Cohere's meta.tokens.input_tokens). TEI reports its count only in the
// x-compute-tokens header and NIM ranking not at all: their records have
// no server prompt count.
//
// Responses are whole JSON bodies parsed once per request with
// encoding/json; the vectors are skipped, never decoded.
package retrieval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// API selects the request and response shape.
type API uint8

// The APIs.
const (
	Embeddings    API = iota // OpenAI /v1/embeddings (vLLM, TEI, SGLang, llama.cpp)
	NIMEmbeddings            // NVIDIA NIM /v1/embeddings: input_type and truncate
	RerankTEI                // Hugging Face TEI /rerank
	RerankCohere             // Cohere /v2/rerank
	RankingNIM               // NVIDIA NIM /v1/ranking
	RerankVLLM               // vLLM /v1/rerank (Jina/Cohere-style)
	ScoreVLLM                // vLLM /v1/score
)

var infos = [...]adapter.Info{
	Embeddings:    {Name: "embeddings", Version: "1", Path: "/v1/embeddings", Kind: adapter.KindEmbeddings},
	NIMEmbeddings: {Name: "nim-embeddings", Version: "1", Path: "/v1/embeddings", Kind: adapter.KindEmbeddings},
	RerankTEI:     {Name: "rerank-tei", Version: "1", Path: "/rerank", Kind: adapter.KindRankings},
	RerankCohere:  {Name: "rerank-cohere", Version: "1", Path: "/v2/rerank", Kind: adapter.KindRankings},
	RankingNIM:    {Name: "ranking-nim", Version: "1", Path: "/v1/ranking", Kind: adapter.KindRankings},
	RerankVLLM:    {Name: "rerank-vllm", Version: "1", Path: "/v1/rerank", Kind: adapter.KindRankings},
	ScoreVLLM:     {Name: "score-vllm", Version: "1", Path: "/v1/score", Kind: adapter.KindRankings},
}

// Adapter is the native retrieval adapter for one API. It is safe for
// concurrent use.
type Adapter struct {
	API API
}

var _ adapter.Adapter = Adapter{}

// Info implements adapter.Adapter. The framing is irrelevant: responses
// are never streamed.
func (a Adapter) Info() adapter.Info {
	if int(a.API) < len(infos) {
		return infos[a.API]
	}
	return adapter.Info{Name: "unknown"}
}

// NewInstance implements adapter.Adapter.
func (a Adapter) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	if int(a.API) >= len(infos) {
		return nil, fmt.Errorf("retrieval API %d unknown", a.API)
	}
	if len(cfg.ExtraBody) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cfg.ExtraBody, &m); err != nil {
			return nil, fmt.Errorf("extra body: want a JSON object: %w", err)
		}
	}
	return &Instance{api: a.API, cfg: *cfg, ctx: map[uint32]*state{}}, nil
}

// Instance builds and parses for one goroutine. It is not safe for
// concurrent use.
type Instance struct {
	api API
	cfg adapter.Config
	ctx map[uint32]*state
}

type state struct {
	fin    adapter.Final
	errMsg []byte
}

var _ adapter.Instance = (*Instance)(nil)

// Build implements adapter.Instance: a non-streaming body with the batch
// (PromptText, then Inputs).
func (in *Instance) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	out.Reset()
	out.Method = adapter.MethodPOST
	out.Path = infos[in.api].Path
	out.Header = append(out.Header, adapter.Header{Name: "Content-Type", Value: "application/json"})
	if b.PromptText == "" && len(b.Raw) > 0 {
		// A row with its own text: it is the (first) input, or the query.
		var raw struct {
			TextInput *string `json:"text_input"`
		}
		if err := json.Unmarshal(b.Raw, &raw); err != nil {
			return fmt.Errorf("row %d: raw content: %w", b.TraceRow, err)
		}
		if raw.TextInput != nil {
			c := *b
			c.PromptText = *raw.TextInput
			b = &c
		}
	}
	body := append(out.Body, '{')
	if in.api != RerankTEI {
		body = append(body, `"model":`...)
		body = jsonx.AppendString(body, in.cfg.Model)
		body = append(body, ',')
	}
	list := func(key string, from []string, obj bool) {
		body = append(body, '"')
		body = append(body, key...)
		body = append(body, `":[`...)
		for i, t := range from {
			if i > 0 {
				body = append(body, ',')
			}
			if obj {
				body = append(body, `{"text":`...)
			}
			body = jsonx.AppendString(body, t)
			if obj {
				body = append(body, '}')
			}
		}
		body = append(body, ']')
	}
	if in.api == NIMEmbeddings {
		var err error
		if body, err = appendNIMInputs(body, b); err != nil {
			return err
		}
		body = jsonx.AppendMembers(body, in.cfg.ExtraBody)
		out.Body = append(body, '}')
		return nil
	}
	switch in.api {
	case Embeddings, NIMEmbeddings:
		all := make([]string, 0, 1+len(b.Inputs))
		all = append(append(all, b.PromptText), b.Inputs...)
		list("input", all, false)
		body = append(body, `,"encoding_format":"float"`...)
		if in.api == NIMEmbeddings {
			body = append(body, `,"input_type":"passage","truncate":"NONE"`...)
		}
	case RerankTEI:
		body = append(body, `"query":`...)
		body = jsonx.AppendString(body, b.PromptText)
		body = append(body, ',')
		list("texts", b.Inputs, false)
		body = append(body, `,"raw_scores":false,"return_text":false,"truncate":false`...)
	case RerankCohere, RerankVLLM:
		body = append(body, `"query":`...)
		body = jsonx.AppendString(body, b.PromptText)
		body = append(body, ',')
		list("documents", b.Inputs, false)
		body = append(body, `,"top_n":`...)
		body = strconv.AppendInt(body, int64(len(b.Inputs)), 10)
	case RankingNIM:
		body = append(body, `"query":{"text":`...)
		body = jsonx.AppendString(body, b.PromptText)
		body = append(body, `},`...)
		list("passages", b.Inputs, true)
		body = append(body, `,"truncate":"NONE"`...)
	case ScoreVLLM:
		body = append(body, `"queries":`...)
		body = jsonx.AppendString(body, b.PromptText)
		body = append(body, ',')
		list("documents", b.Inputs, false)
	}
	body = jsonx.AppendMembers(body, in.cfg.ExtraBody)
	out.Body = append(body, '}')
	return nil
}

// Open implements adapter.Instance.
func (in *Instance) Open(ctx uint32, _ adapter.OpenFlags) error {
	if _, ok := in.ctx[ctx]; ok {
		return fmt.Errorf("context %d already open", ctx)
	}
	in.ctx[ctx] = &state{}
	return nil
}

// Parse implements adapter.Instance. Each event is a whole body (a
// response of these APIs never streams); a body of another shape is
// malformed.
func (in *Instance) Parse(ctx uint32, batch *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	st := in.ctx[ctx]
	if st == nil {
		return dst, fmt.Errorf("context %d not open", ctx)
	}
	for i := range batch.Events {
		ev := &batch.Events[i]
		idx := batch.First + uint32(i)
		if ev.Flags&adapter.EventComment != 0 || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		var err error
		dst, err = in.parseBody(st, ev.Data, idx, dst, ev.Flags&adapter.EventNonOK != 0)
		if err != nil {
			return dst, fmt.Errorf("event %d: %w", idx, err)
		}
	}
	return dst, nil
}

// body is every field the parsed APIs' bodies carry, by name.
type body struct {
	Data     []item `json:"data"`     // embeddings, score
	Results  []item `json:"results"`  // Cohere, vLLM rerank
	Rankings []item `json:"rankings"` // NIM ranking
	Usage    *struct {
		PromptTokens *uint32 `json:"prompt_tokens"`
		TotalTokens  *uint32 `json:"total_tokens"`
	} `json:"usage"`
	Meta *struct {
		Tokens *struct {
			InputTokens *uint32 `json:"input_tokens"`
		} `json:"tokens"`
	} `json:"meta"`
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
	Object  string          `json:"object"`
}

// item is one vector or score. Its value is checked for presence, not
// decoded.
type item struct {
	Index     *int            `json:"index"`
	Object    string          `json:"object"`
	Embedding json.RawMessage `json:"embedding"`
	Score     json.RawMessage `json:"score"`
	Relevance json.RawMessage `json:"relevance_score"`
	Logit     json.RawMessage `json:"logit"`
}

func (in *Instance) parseBody(st *state, data []byte, idx uint32, dst []adapter.Record, nonOK bool) ([]adapter.Record, error) {
	data = bytes.TrimSpace(data)
	if nonOK {
		var b body
		if json.Unmarshal(data, &b) == nil {
			msg := b.Message
			if len(b.Error) > 0 {
				var e struct {
					Message string `json:"message"`
				}
				var s string
				switch {
				case json.Unmarshal(b.Error, &e) == nil && e.Message != "":
					msg = e.Message
				case json.Unmarshal(b.Error, &s) == nil:
					msg = s // TEI: {"error": "...", "error_type": ...}
				}
			}
			if msg != "" {
				st.setError(500, msg)
				dst = append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: 500, Tokens: adapter.TokensUnknown})
			}
		}
		return dst, nil
	}
	var items []item
	var b body
	if in.api == RerankTEI {
		// A bare array sorted by score.
		if err := json.Unmarshal(data, &items); err != nil {
			return dst, fmt.Errorf("%w: want a JSON array of {index, score}: %v", adapter.ErrMalformed, err)
		}
	} else {
		if err := json.Unmarshal(data, &b); err != nil {
			return dst, fmt.Errorf("%w: %v", adapter.ErrMalformed, err)
		}
		if len(b.Error) > 0 && string(b.Error) != "null" {
			var e struct {
				Message string `json:"message"`
			}
			msg := string(b.Error)
			if json.Unmarshal(b.Error, &e) == nil && e.Message != "" {
				msg = e.Message
			}
			st.setError(500, msg)
			return append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: 500, Tokens: adapter.TokensUnknown}), nil
		}
		switch in.api {
		case Embeddings, NIMEmbeddings, ScoreVLLM:
			items = b.Data
		case RerankCohere, RerankVLLM:
			items = b.Results
		case RankingNIM:
			items = b.Rankings
		}
	}
	for i, it := range items {
		if it.Index == nil {
			return dst, fmt.Errorf("%w: item %d has no index", adapter.ErrMalformed, i)
		}
		var v json.RawMessage
		switch in.api {
		case Embeddings, NIMEmbeddings:
			v = it.Embedding
		case ScoreVLLM, RerankTEI:
			v = it.Score
		case RerankCohere, RerankVLLM:
			v = it.Relevance
		case RankingNIM:
			v = it.Logit
		}
		if len(v) == 0 || string(v) == "null" {
			return dst, fmt.Errorf("%w: item %d (index %d) has no value", adapter.ErrMalformed, i, *it.Index)
		}
	}
	f := &st.fin
	if len(items) > 0 {
		f.Choices = 1
		// One content record per body: the items are the answer.
		dst = append(dst, adapter.Record{Kind: record.EventContent, Event: idx, TextBytes: uint32(len(data)), Tokens: adapter.TokensUnknown})
	}
	switch {
	case b.Usage != nil && b.Usage.PromptTokens != nil:
		f.PromptTokens, f.Valid = *b.Usage.PromptTokens, f.Valid|adapter.ValidPromptTokens
	case b.Usage != nil && b.Usage.TotalTokens != nil:
		f.PromptTokens, f.Valid = *b.Usage.TotalTokens, f.Valid|adapter.ValidPromptTokens
	case b.Meta != nil && b.Meta.Tokens != nil && b.Meta.Tokens.InputTokens != nil:
		f.PromptTokens, f.Valid = *b.Meta.Tokens.InputTokens, f.Valid|adapter.ValidPromptTokens
	}
	if f.Valid&adapter.ValidPromptTokens != 0 {
		dst = append(dst, adapter.Record{Kind: record.EventUsage, Event: idx, Tokens: adapter.TokensUnknown})
	}
	f.FinishReason, f.Valid = adapter.FinishStop, f.Valid|adapter.ValidFinishReason
	return dst, nil
}

func (st *state) setError(code uint32, msg string) {
	st.fin.Valid |= adapter.ValidError
	st.fin.ErrorCode = code
	st.errMsg = append(st.errMsg[:0], msg...)
}

// Close implements adapter.Instance.
func (in *Instance) Close(ctx uint32, fin *adapter.Final) error {
	st := in.ctx[ctx]
	if st == nil {
		return fmt.Errorf("context %d not open", ctx)
	}
	delete(in.ctx, ctx)
	*fin = st.fin
	fin.ErrorMessage = st.errMsg
	return nil
}

// Release implements adapter.Instance.
func (in *Instance) Release() error { return nil }
