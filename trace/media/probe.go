package media

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers GIF for image.DecodeConfig
	"image/jpeg"
	"image/png"
	"strings"
	"time"
)

// Limits bound what Probe accepts. The zero value means the defaults.
type Limits struct {
	// MaxPixels bounds width × height of an image, checked from its
	// header before any pixel is decoded (DefaultMaxPixels when 0).
	MaxPixels int64
	// MaxBytes bounds the bytes of one item (DefaultMaxBytes when 0).
	MaxBytes int64
}

// Default limits: 8192 × 8192 pixels (a 50,000 × 50,000 PNG header is
// refused before decoding) and 64 MiB per item.
const (
	DefaultMaxPixels = 8192 * 8192
	DefaultMaxBytes  = 64 << 20
)

func (l Limits) maxPixels() int64 {
	if l.MaxPixels > 0 {
		return l.MaxPixels
	}
	return DefaultMaxPixels
}

func (l Limits) maxBytes() int64 {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultMaxBytes
}

// Probe checks data as media of kind k and returns it as an Item (which
// keeps data; the caller must not modify it afterwards). Images: the
// format from the magic bytes, the size from the header (refused over
// lim.MaxPixels before decoding), then a full decode for PNG, JPEG and
// GIF (WebP is checked by its header only). Audio: WAV (RIFF/WAVE, PCM or
// IEEE float) and MP3 (frame headers), with the clip's length. Video: MP4
// (ftyp box) and WebM (EBML magic) by their magic bytes, then their track
// boxes or elements for the video's length and frames and its audio track
// (Item.Track). It never panics
// (FuzzProbe).
func Probe(k Kind, data []byte, lim Limits) (Item, error) {
	if int64(len(data)) > lim.maxBytes() {
		return Item{}, fmt.Errorf("%w: %d bytes, more than the %d bytes a %s may have", ErrTooBig, len(data), lim.maxBytes(), k)
	}
	if len(data) == 0 {
		return Item{}, fmt.Errorf("%w: empty %s", ErrCorrupt, k)
	}
	switch k {
	case Image:
		return probeImage(data, lim)
	case Audio:
		return probeAudio(data)
	case Video:
		return probeVideo(data)
	}
	return Item{}, fmt.Errorf("%w: kind %d", ErrFormat, k)
}

// imageFormat names an image format by its magic bytes ("" = unknown).
func imageFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

func probeImage(data []byte, lim Limits) (Item, error) {
	f := imageFormat(data)
	if f == "" {
		return Item{}, fmt.Errorf("%w: not a PNG, JPEG, GIF or WebP image (its first bytes are %q)", ErrFormat, head(data))
	}
	it := Item{Kind: Image, Format: f, Data: data}
	if f == "webp" {
		w, h, err := webpSize(data)
		if err != nil {
			return Item{}, err
		}
		it.Width, it.Height = w, h
		return it, checkPixels(w, h, lim)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Item{}, fmt.Errorf("%w %s header: %v", ErrCorrupt, f, err)
	}
	if err := checkPixels(cfg.Width, cfg.Height, lim); err != nil {
		return Item{}, err
	}
	it.Width, it.Height = cfg.Width, cfg.Height
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return Item{}, fmt.Errorf("%w %s image (%d×%d): %v", ErrCorrupt, f, cfg.Width, cfg.Height, err)
	}
	return it, nil
}

func checkPixels(w, h int, lim Limits) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w image: %d×%d pixels", ErrCorrupt, w, h)
	}
	if int64(w)*int64(h) > lim.maxPixels() {
		return fmt.Errorf("%w: a %d×%d image has %d pixels, more than the %d allowed (refused before decoding)", ErrTooBig, w, h, int64(w)*int64(h), lim.maxPixels())
	}
	return nil
}

// webpSize reads a WebP's canvas size from its VP8, VP8L or VP8X chunk.
func webpSize(d []byte) (int, int, error) {
	if len(d) < 30 {
		return 0, 0, fmt.Errorf("%w webp: %d bytes is too short for a header", ErrCorrupt, len(d))
	}
	c := d[12:]
	switch string(c[:4]) {
	case "VP8 ":
		if c[11] != 0x9d || c[12] != 0x01 || c[13] != 0x2a {
			return 0, 0, fmt.Errorf("%w webp: bad VP8 start code", ErrCorrupt)
		}
		return int(c[14]) | int(c[15]&0x3f)<<8, int(c[16]) | int(c[17]&0x3f)<<8, nil
	case "VP8L":
		if c[8] != 0x2f {
			return 0, 0, fmt.Errorf("%w webp: bad VP8L signature", ErrCorrupt)
		}
		b := uint32(c[9]) | uint32(c[10])<<8 | uint32(c[11])<<16 | uint32(c[12])<<24
		return int(b&0x3fff) + 1, int(b>>14&0x3fff) + 1, nil
	case "VP8X":
		w := int(c[12]) | int(c[13])<<8 | int(c[14])<<16
		h := int(c[15]) | int(c[16])<<8 | int(c[17])<<16
		return w + 1, h + 1, nil
	}
	return 0, 0, fmt.Errorf("%w webp: unknown chunk %q", ErrCorrupt, c[:4])
}

func probeAudio(data []byte) (Item, error) {
	switch {
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		w, err := ParseWAV(data)
		if err != nil {
			return Item{}, err
		}
		return Item{Kind: Audio, Format: "wav", Data: data, Duration: w.Duration, SampleRate: w.SampleRate, Depth: w.Depth, Channels: w.Channels}, nil
	case bytes.HasPrefix(data, []byte("ID3")) || len(data) >= 2 && data[0] == 0xff && data[1]&0xe0 == 0xe0:
		d, rate, ch, err := mp3Duration(data)
		if err != nil {
			return Item{}, err
		}
		return Item{Kind: Audio, Format: "mp3", Data: data, Duration: d, SampleRate: rate, Channels: ch}, nil
	}
	return Item{}, fmt.Errorf("%w: not a WAV or MP3 clip (its first bytes are %q)", ErrFormat, head(data))
}

func probeVideo(data []byte) (Item, error) {
	switch {
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		f := "mp4"
		if string(data[8:10]) == "qt" {
			f = "mov"
		}
		return videoItem(f, data)
	case bytes.HasPrefix(data, []byte("\x1a\x45\xdf\xa3")):
		return videoItem("webm", data)
	}
	return Item{}, fmt.Errorf("%w: not an MP4 or WebM video (its first bytes are %q)", ErrFormat, head(data))
}

// videoItem is data as a video of format, with its audio track.
func videoItem(format string, data []byte) (Item, error) {
	v, tr, err := videoTracks(format, data)
	if err != nil {
		return Item{}, err
	}
	return Item{Kind: Video, Format: format, Data: data, Duration: v.Duration, Frames: v.Frames, Track: tr}, nil
}

func head(d []byte) []byte {
	if len(d) > 8 {
		return d[:8]
	}
	return d
}

// DecodeDataURL decodes a base64 data URL ("data:image/png;base64,…") and
// returns its bytes. A data URL that is not base64 is an error.
func DecodeDataURL(u string) ([]byte, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return nil, errors.New("not a data URL")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("data URL without a comma before its data")
	}
	if !strings.HasSuffix(meta, ";base64") {
		return nil, fmt.Errorf("data URL %q… is not base64 (want data:<type>;base64,<data>)", clip(u, 40))
	}
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, fmt.Errorf("data URL's base64: %v", err)
	}
	return b, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Compile-time use of the registered decoders.
var (
	_ = png.Decode
	_ = jpeg.Decode
	_ = time.Second
)
