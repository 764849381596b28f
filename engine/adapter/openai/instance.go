package openai

import (
	"encoding/json"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// Endpoint selects the API shape.
type Endpoint uint8

// The endpoints.
const (
	Chat        Endpoint = iota // /v1/chat/completions
	Completions                 // /v1/completions
	Responses                   // /v1/responses
	SGLang                      // SGLang's native /generate
	TGI                         // Hugging Face TGI's /generate_stream and /generate

	endpointTemplate // a declarative template (Template)
)

// Instance builds and parses for one goroutine. It is not safe for
// concurrent use.
type Instance struct {
	ep       Endpoint
	cfg      adapter.Config
	path     string
	maxField string
	streams  map[uint32]*stream
	free     []*stream
	tpl      *Template // endpointTemplate
	rawBuf   []byte    // Raw without its media, while Build decodes it
}

// rawRow is the row's own content (trace.Row.Raw).
type rawRow struct {
	TextInput json.RawMessage `json:"text_input"`
	Messages  json.RawMessage `json:"messages"`
	Tools     json.RawMessage `json:"tools"`
	Payload   json.RawMessage `json:"payload"`
	Extra     json.RawMessage `json:"extra"`
	// Media is the row's images, audio and videos as an array of chat
	// content parts (trace.Row.Raw, design 0022).
	Media json.RawMessage `json:"media"`
}
