package media

import (
	"encoding/base64"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// Kind is the modality of an item.
type Kind uint8

// The kinds.
const (
	Image Kind = iota
	Audio
	Video
)

var kindNames = [...]string{"image", "audio", "video"}

// String returns "image", "audio" or "video".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Item is one image, audio clip or video. Either Data holds the media's
// bytes (then Format, and Width/Height or Duration, are known), or URL is a
// remote http(s) URL sent as it is (then nothing else is known). An Item
// is immutable once made: callers must not modify Data.
type Item struct {
	Kind   Kind
	Format string // "png", "jpeg", "gif", "webp", "wav", "mp3", "mp4", "webm", …; "" for a URL
	Data   []byte
	URL    string

	Width, Height int           // images and videos; 0 when unknown
	Duration      time.Duration // audio and video; 0 when unknown
	Frames        int           // a video's frames (its video track's samples); 0 when unknown
	// SampleRate, Depth (bits) and Channels describe PCM audio (WAV).
	SampleRate, Depth, Channels int
	// Track is a video's audio track; nil when it has none.
	Track *AudioTrack
}

// AudioTrack is a video's audio track as its container describes it: the
// codec ("aac", "opus", "vorbis", or the container's own name for
// another), the sample rate and channels of its sample entry or track
// entry, and its presented length (an MP4's edit list's, which leaves out
// AAC's priming samples; else its samples' or blocks').
type AudioTrack struct {
	Codec      string
	SampleRate int
	Channels   int
	Duration   time.Duration
}

// Bytes is the size of the media's bytes (0 for a URL).
func (it *Item) Bytes() int { return len(it.Data) }

// MIME is the media type of the item's format.
func (it *Item) MIME() string { return mimeType(it.Kind, it.Format) }

func mimeType(k Kind, format string) string {
	switch format {
	case "jpeg", "jpg":
		return "image/jpeg"
	case "png", "gif", "webp", "bmp", "tiff":
		return "image/" + format
	case "wav":
		return "audio/wav"
	case "mp3":
		return "audio/mpeg"
	case "flac", "ogg":
		return "audio/" + format
	case "mp4", "webm":
		if k == Audio {
			return "audio/" + format
		}
		return "video/" + format
	case "mov":
		return "video/quicktime"
	}
	return "application/octet-stream"
}

// AppendDataURL appends the item as a data URL ("data:image/png;base64,…"),
// or its URL when it has no bytes.
func AppendDataURL(dst []byte, it *Item) []byte {
	if it.Data == nil {
		return append(dst, it.URL...)
	}
	dst = append(dst, "data:"...)
	dst = append(dst, it.MIME()...)
	dst = append(dst, ";base64,"...)
	return base64.StdEncoding.AppendEncode(dst, it.Data)
}

// AppendChatPart appends the item as an OpenAI chat content part:
//
//	{"type":"image_url","image_url":{"url":"data:image/png;base64,…"}}
//	{"type":"input_audio","input_audio":{"data":"<base64>","format":"wav"}}
//	{"type":"video_url","video_url":{"url":"data:video/mp4;base64,…"}}
//
// Audio given by URL is an audio_url part (vLLM's extension), since
// input_audio carries bytes only. Data URLs and base64 need no JSON
// escaping; a URL is escaped.
func AppendChatPart(dst []byte, it *Item) []byte {
	switch {
	case it.Kind == Audio && it.Data != nil:
		dst = append(dst, `{"type":"input_audio","input_audio":{"data":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, it.Data)
		dst = append(dst, `","format":"`...)
		dst = append(dst, it.Format...)
		return append(dst, `"}}`...)
	case it.Kind == Audio:
		return appendURLPart(dst, "audio_url", it)
	case it.Kind == Video:
		return appendURLPart(dst, "video_url", it)
	}
	return appendURLPart(dst, "image_url", it)
}

// imagePartPrefix opens an image_url part as AppendChatPart writes it.
const imagePartPrefix = `{"type":"image_url","image_url":{"url":`

// ChatPartURL returns the url of an image_url part as AppendChatPart
// wrote it, as the JSON string literal it is there (a slice of part); ok
// is false for any other part.
func ChatPartURL(part []byte) (url []byte, ok bool) {
	n := len(imagePartPrefix)
	if len(part) < n+4 || string(part[:n]) != imagePartPrefix || string(part[len(part)-2:]) != "}}" {
		return nil, false
	}
	return part[n : len(part)-2], true
}

func appendURLPart(dst []byte, typ string, it *Item) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","`...)
	dst = append(dst, typ...)
	dst = append(dst, `":{"url":`...)
	if it.Data == nil {
		dst = jsonx.AppendString(dst, it.URL)
	} else {
		dst = append(dst, '"')
		dst = AppendDataURL(dst, it)
		dst = append(dst, '"')
	}
	return append(dst, "}}"...)
}

// AppendResponsesPart appends the item as a Responses API input content
// part: an image as {"type":"input_image","image_url":"…"}, audio and
// video as {"type":"input_file","file_data":"data:…","filename":"…"} (or
// "file_url" for a URL).
func AppendResponsesPart(dst []byte, it *Item) []byte {
	if it.Kind == Image {
		dst = append(dst, `{"type":"input_image","image_url":`...)
		if it.Data == nil {
			dst = jsonx.AppendString(dst, it.URL)
		} else {
			dst = append(dst, '"')
			dst = AppendDataURL(dst, it)
			dst = append(dst, '"')
		}
		return append(dst, '}')
	}
	if it.Data == nil {
		dst = append(dst, `{"type":"input_file","file_url":`...)
		dst = jsonx.AppendString(dst, it.URL)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"input_file","filename":"`...)
	dst = append(dst, it.Kind.String()...)
	dst = append(dst, '.')
	dst = append(dst, it.Format...)
	dst = append(dst, `","file_data":"`...)
	dst = AppendDataURL(dst, it)
	return append(dst, `"}`...)
}
