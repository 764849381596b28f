package mockserver

import (
	"encoding/json"
	"fmt"
)

// decodeEmbedMessages decodes the chat form of an embeddings request
// (vLLM's multimodal embeddings, design 0022): its messages' texts become
// one input, every media part is decoded and logged as a chat request's.
func decodeEmbedMessages(r poolingRequest, raw json.RawMessage) (poolingRequest, error) {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return r, &requestError{msg: "messages: want an array of messages: " + err.Error()}
	}
	if len(msgs) == 0 {
		return r, &requestError{msg: "messages: at least one message is required"}
	}
	text := ""
	for i, m := range msgs {
		s, err := decodeContentMedia(m.Content, &r.media)
		if err != nil {
			return r, &requestError{msg: fmt.Sprintf("messages[%d].content%v", i, err)}
		}
		text += s
	}
	if text == "" && len(r.media) == 0 {
		return r, &requestError{msg: "messages: no text and no media to embed"}
	}
	r.texts = []string{text}
	return r, nil
}
