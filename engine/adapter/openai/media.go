package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// hasMedia reports whether the request carries images, audio or video:
// synthetic parts in b.Media or the row's own in raw.Media.
func hasMedia(b *adapter.BuildInput, raw *rawRow) bool {
	return len(b.Media) > 0 || isSet(raw.Media) && string(bytes.TrimSpace(raw.Media)) != "[]"
}

// appendChatContent appends a user message's content as an array of
// parts (AppendChatContent of the row's media and the synthetic media).
func appendChatContent(body []byte, text string, b *adapter.BuildInput, raw *rawRow) []byte {
	body, _ = AppendChatContent(body, text, raw.Media, b.Media)
	return body
}

// AppendChatContent appends a chat message's content as an array of
// OpenAI content parts: the text (when not empty), then rowParts (a row's
// own parts, a JSON array), then the synthetic media, as AIPerf orders
// them (text first); n is the number of parts appended. The chat form of
// embeddings (retrieval.ChatEmbeddings) sends the same content.
func AppendChatContent(body []byte, text string, rowParts json.RawMessage, media []adapter.MediaPart) (_ []byte, n int) {
	body = append(body, '[')
	if text != "" {
		body = append(body, `{"type":"text","text":`...)
		body = jsonx.AppendString(body, text)
		body = append(body, '}')
		n++
	}
	if m := arrayInner(rowParts); len(m) > 0 {
		if n > 0 {
			body = append(body, ',')
		}
		body = append(body, m...)
		n++
	}
	for _, p := range media {
		if n > 0 {
			body = append(body, ',')
		}
		body = append(body, p.Chat...)
		n++
	}
	return append(body, ']'), n
}

// appendResponsesContent is appendChatContent for the Responses API:
// input_text, then input_image / input_file parts. The row's chat parts
// are converted (a trace row carries chat parts only).
func appendResponsesContent(body []byte, text string, b *adapter.BuildInput, raw *rawRow) ([]byte, error) {
	body = append(body, '[')
	n := 0
	if text != "" {
		body = append(body, `{"type":"input_text","text":`...)
		body = jsonx.AppendString(body, text)
		body = append(body, '}')
		n++
	}
	if isSet(raw.Media) {
		var parts []json.RawMessage
		if err := json.Unmarshal(raw.Media, &parts); err != nil {
			return body, err
		}
		for _, p := range parts {
			if n > 0 {
				body = append(body, ',')
			}
			var err error
			if body, err = chatToResponsesPart(body, p); err != nil {
				return body, err
			}
			n++
		}
	}
	for _, p := range b.Media {
		if n > 0 {
			body = append(body, ',')
		}
		body = append(body, p.Responses...)
		n++
	}
	return append(body, ']'), nil
}

// chatToResponsesPart appends the Responses form of one chat content
// part: image_url → input_image; input_audio, audio_url and video_url →
// input_file (file_data as a data URL, or file_url).
func chatToResponsesPart(body []byte, part json.RawMessage) ([]byte, error) {
	var p struct {
		Type string `json:"type"`
		URL  struct {
			URL string `json:"url"`
		}
		ImageURL   *struct{ URL string } `json:"image_url"`
		VideoURL   *struct{ URL string } `json:"video_url"`
		AudioURL   *struct{ URL string } `json:"audio_url"`
		InputAudio *struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		} `json:"input_audio"`
	}
	if err := json.Unmarshal(part, &p); err != nil {
		return body, err
	}
	switch {
	case p.ImageURL != nil:
		body = append(body, `{"type":"input_image","image_url":`...)
		body = jsonx.AppendString(body, p.ImageURL.URL)
		return append(body, '}'), nil
	case p.InputAudio != nil:
		body = append(body, `{"type":"input_file","filename":`...)
		body = jsonx.AppendString(body, "audio."+p.InputAudio.Format)
		body = append(body, `,"file_data":`...)
		mime := "audio/" + p.InputAudio.Format
		if p.InputAudio.Format == "mp3" {
			mime = "audio/mpeg"
		}
		body = jsonx.AppendString(body, "data:"+mime+";base64,"+p.InputAudio.Data)
		return append(body, '}'), nil
	case p.VideoURL != nil || p.AudioURL != nil:
		u := p.VideoURL
		if u == nil {
			u = p.AudioURL
		}
		if strings.HasPrefix(u.URL, "data:") {
			body = append(body, `{"type":"input_file","file_data":`...)
		} else {
			body = append(body, `{"type":"input_file","file_url":`...)
		}
		body = jsonx.AppendString(body, u.URL)
		return append(body, '}'), nil
	}
	return body, fmt.Errorf("content part of type %q has no Responses form", p.Type)
}

// arrayInner is a JSON array's elements without its brackets ("" for an
// empty or unset array).
func arrayInner(a json.RawMessage) []byte {
	a = bytes.TrimSpace(a)
	if len(a) < 2 || a[0] != '[' {
		return nil
	}
	return bytes.TrimSpace(a[1 : len(a)-1])
}
