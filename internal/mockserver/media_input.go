package mockserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise/trace/media"
)

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
