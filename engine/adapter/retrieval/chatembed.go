package retrieval

import (
	"encoding/json"
	"fmt"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// ChatEmbeddings is the chat form of /v1/embeddings that vLLM serves for
// multimodal embedding models (VLM2Vec, DSE-Qwen2; AIPerf's
// chat_embeddings): one user message whose content is the text, then the
// row's images, audio and video, then the synthetic ones, as chat content
// parts (design 0022):
//
//	{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"…"},
//	 {"type":"image_url","image_url":{"url":"data:image/png;base64,…"}}]}],"encoding_format":"float"}
//
// The response is an embeddings response, parsed as Embeddings'. It is safe
// for concurrent use.
type ChatEmbeddings struct{}

var _ adapter.Adapter = ChatEmbeddings{}

// Info implements adapter.Adapter.
func (ChatEmbeddings) Info() adapter.Info {
	return adapter.Info{Name: "chat-embeddings", Version: "1", Path: "/v1/embeddings", Kind: adapter.KindEmbeddings}
}

// NewInstance implements adapter.Adapter.
func (ChatEmbeddings) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	in, err := Adapter{API: Embeddings}.NewInstance(cfg)
	if err != nil {
		return nil, err
	}
	return &chatInstance{Instance: in.(*Instance)}, nil
}

// chatInstance builds the chat form and parses as Embeddings.
type chatInstance struct{ *Instance }

// Build implements adapter.Instance.
func (in *chatInstance) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	out.Reset()
	out.Method = adapter.MethodPOST
	out.Path = "/v1/embeddings"
	out.Header = append(out.Header, adapter.Header{Name: "Content-Type", Value: "application/json"})
	text := b.PromptText
	var rowMedia json.RawMessage
	if len(b.Raw) > 0 {
		var raw struct {
			TextInput *string         `json:"text_input"`
			Media     json.RawMessage `json:"media"`
		}
		if err := json.Unmarshal(b.Raw, &raw); err != nil {
			return fmt.Errorf("row %d: raw content: %w", b.TraceRow, err)
		}
		if text == "" && raw.TextInput != nil {
			text = *raw.TextInput
		}
		rowMedia = raw.Media
	}
	body := append(out.Body, `{"model":`...)
	body = jsonx.AppendString(body, in.cfg.Model)
	body = append(body, `,"messages":[{"role":"user","content":`...)
	body, n := openai.AppendChatContent(body, text, rowMedia, b.Media)
	if n == 0 {
		return fmt.Errorf("row %d: a chat embeddings request needs text or media", b.TraceRow)
	}
	body = append(body, `}],"encoding_format":"float"`...)
	body = jsonx.AppendMembers(body, in.cfg.ExtraBody)
	out.Body = append(body, '}')
	return nil
}
