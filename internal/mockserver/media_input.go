package mockserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

// InputMediaLog is one image, audio clip or video a request carried, as the
// mock server decoded it (design 0022): Kind "image", "audio" or
// "video"; Format from its bytes ("png", "jpeg", "wav", "mp3", …; "url"
// for a remote URL, not fetched); Width and Height of an image; Duration
// of an audio clip; Bytes of the media (before base64); AudioTrack, a
// video's audio track as its container describes it (nil: none).
type InputMediaLog struct {
	Kind          string
	Format        string
	Width, Height int
	Duration      time.Duration
	Bytes         int
	AudioTrack    *media.AudioTrack
}

// wireMedia is the media member of a content part: chat's image_url
// ({"url"}), input_audio ({"data", "format"}), video_url, audio_url; the
// Responses API's input_image (image_url as a string) and input_file
// (file_data as a data URL).
type wireMedia struct {
	ImageURL   json.RawMessage `json:"image_url"`
	VideoURL   *wireURL        `json:"video_url"`
	AudioURL   *wireURL        `json:"audio_url"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	FileData string `json:"file_data"`
	FileURL  string `json:"file_url"`
}

type wireURL struct {
	URL string `json:"url"`
}

// decodeMedia decodes the media of one content part of type typ into a
// InputMediaLog, checking it as a server would: a data URL must be base64, an
// image must decode (its header checked against the pixel cap first), a
// WAV or MP3 clip must have readable headers. ok is false for a part that
// is not media.
func decodeMedia(typ string, m *wireMedia) (l InputMediaLog, ok bool, err error) {
	var (
		url  string
		kind media.Kind
	)
	switch typ {
	case "image_url", "input_image":
		kind = media.Image
		raw := bytes.TrimSpace(m.ImageURL)
		if len(raw) > 0 && raw[0] == '"' {
			err = json.Unmarshal(raw, &url)
		} else {
			var u wireURL
			err = json.Unmarshal(raw, &u)
			url = u.URL
		}
		if err != nil {
			return l, true, fmt.Errorf("image_url: %v", err)
		}
	case "video_url":
		kind = media.Video
		if m.VideoURL != nil {
			url = m.VideoURL.URL
		}
	case "audio_url":
		kind = media.Audio
		if m.AudioURL != nil {
			url = m.AudioURL.URL
		}
	case "input_audio":
		if m.InputAudio == nil {
			return l, true, fmt.Errorf("input_audio: missing")
		}
		b, err := base64.StdEncoding.DecodeString(m.InputAudio.Data)
		if err != nil {
			return l, true, fmt.Errorf("input_audio.data is not base64: %v", err)
		}
		return probeLog(media.Audio, b)
	case "input_file":
		url = m.FileData
		if url == "" {
			url = m.FileURL
		}
		kind = media.Audio
		if strings.HasPrefix(url, "data:video/") {
			kind = media.Video
		} else if strings.HasPrefix(url, "data:image/") {
			kind = media.Image
		}
	default:
		return l, false, nil
	}
	if url == "" {
		return l, true, fmt.Errorf("%s: no url", typ)
	}
	if !strings.HasPrefix(url, "data:") {
		return InputMediaLog{Kind: kind.String(), Format: "url"}, true, nil
	}
	b, err := media.DecodeDataURL(url)
	if err != nil {
		return l, true, fmt.Errorf("%s: %v", typ, err)
	}
	return probeLog(kind, b)
}

func probeLog(kind media.Kind, b []byte) (InputMediaLog, bool, error) {
	it, err := media.Probe(kind, b, media.Limits{})
	if err != nil {
		return InputMediaLog{}, true, fmt.Errorf("invalid %s: %v", kind, err)
	}
	return InputMediaLog{Kind: kind.String(), Format: it.Format, Width: it.Width, Height: it.Height, Duration: it.Duration, Bytes: len(b), AudioTrack: it.Track}, true, nil
}

// mediaDelay is the latency model's extra time to first token for a
// request's media: PrefillPerImage per image and PrefillPerAudioSecond
// per second of audio.
func (t *timing) mediaDelay(ms []InputMediaLog) time.Duration {
	var d time.Duration
	for _, m := range ms {
		switch m.Kind {
		case "image":
			d += t.perImage
		case "audio":
			d += time.Duration(m.Duration.Seconds() * float64(t.perAudioSecond))
		}
	}
	return d
}

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

// nimImageToken stands for an image input of a NIM embeddings request in
// the token count: its prefill is PrefillPerImage, not its base64.
const nimImageToken = "<image>"

// decodeNIMImages decodes the image inputs of a NIM embeddings request
// (NVIDIA's VLM embedding NIMs): an input that is an image data URL, or
// that modality ("text", "image", one for the batch or one per input)
// says is an image, is decoded and logged as a chat request's image, and
// counts as nimImageToken. A modality of another length, or "image" for
// an input that is no image data URL, is refused with 400 as NIM does.
func decodeNIMImages(r poolingRequest, raw json.RawMessage) (poolingRequest, error) {
	var mods []string
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
		var m string
		if err := json.Unmarshal(t, &m); err != nil {
			return r, &requestError{msg: "modality: " + err.Error()}
		}
		mods = []string{m}
	} else if len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &mods); err != nil {
			return r, &requestError{msg: "modality: want a string or an array of strings"}
		}
		if len(mods) != 1 && len(mods) != len(r.texts) {
			return r, &requestError{msg: fmt.Sprintf("modality: %d values for %d inputs (want one per input, or one for the batch)", len(mods), len(r.texts))}
		}
	}
	for i, t := range r.texts {
		mod := ""
		if len(mods) == 1 {
			mod = mods[0]
		} else if len(mods) > 0 {
			mod = mods[i]
		}
		isImage := strings.HasPrefix(t, "data:image/")
		switch mod {
		case "", "text", "image", "text_image":
		default:
			return r, &requestError{msg: fmt.Sprintf("modality[%d]: %q: want text, image or text_image", i, mod)}
		}
		if mod == "image" && !isImage {
			return r, &requestError{msg: fmt.Sprintf("input[%d]: modality image, but the input is no image data URL", i)}
		}
		if !isImage || mod == "text" {
			continue
		}
		l, _, err := decodeMedia("image_url", &wireMedia{ImageURL: jsonx.AppendString(nil, t)})
		if err != nil {
			return r, &requestError{msg: fmt.Sprintf("input[%d]: %v", i, err)}
		}
		r.media = append(r.media, l)
		r.texts[i] = nimImageToken
	}
	return r, nil
}
