package retrieval

import (
	"encoding/json"
	"fmt"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

// appendNIMInputs appends a NIM embeddings request's members after its model:
// the texts (PromptText, then Inputs), then the row's and the synthetic
// images as data URL (or http URL) strings, each one input of the same
// array, as NVIDIA's VLM embedding NIMs take them
// (nvidia/llama-nemotron-embed-vl-1b-v2):
//
//	"input":["…text…","data:image/png;base64,…"],"modality":["text","image"],
//	"encoding_format":"float","input_type":"passage","truncate":"NONE"
//
// modality is sent only when the request carries images (a text-only
// request is unchanged). Audio and video are an error: NIM embeds text
// and images.
func appendNIMInputs(body []byte, b *adapter.BuildInput) ([]byte, error) {
	images, err := nimImages(b)
	if err != nil {
		return body, err
	}
	body = append(body, `"input":[`...)
	body = jsonx.AppendString(body, b.PromptText)
	for _, t := range b.Inputs {
		body = append(body, ',')
		body = jsonx.AppendString(body, t)
	}
	for _, u := range images {
		body = append(body, ',')
		body = append(body, u...)
	}
	body = append(body, ']')
	if len(images) > 0 {
		body = append(body, `,"modality":[`...)
		for i := range 1 + len(b.Inputs) + len(images) {
			if i > 0 {
				body = append(body, ',')
			}
			if i <= len(b.Inputs) {
				body = append(body, `"text"`...)
			} else {
				body = append(body, `"image"`...)
			}
		}
		body = append(body, ']')
	}
	return append(body, `,"encoding_format":"float","input_type":"passage","truncate":"NONE"`...), nil
}

// nimImages returns the JSON string literals of the row's images (Raw's
// "media") and the synthetic ones (Media), in that order.
func nimImages(b *adapter.BuildInput) ([][]byte, error) {
	var out [][]byte
	if len(b.Raw) > 0 {
		_, m, ok := media.CutMedia(b.Raw, nil)
		if ok {
			var ps []struct {
				Type     string `json:"type"`
				ImageURL *struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			if err := json.Unmarshal(m, &ps); err != nil {
				return nil, fmt.Errorf("row %d: media: %w", b.TraceRow, err)
			}
			for _, p := range ps {
				if p.Type != "image_url" || p.ImageURL == nil {
					return nil, fmt.Errorf("row %d: a %s part: NIM embeddings take text and images only", b.TraceRow, p.Type)
				}
				out = append(out, jsonx.AppendString(nil, p.ImageURL.URL))
			}
		}
	}
	for _, p := range b.Media {
		u, ok := media.ChatPartURL(p.Chat)
		if !ok {
			return nil, fmt.Errorf("row %d: synthetic %.40s…: NIM embeddings take text and images only", b.TraceRow, p.Chat)
		}
		out = append(out, u)
	}
	return out, nil
}
