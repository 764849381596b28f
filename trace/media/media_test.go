package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
	"time"
)

// TestSynthImageDeterministic: the same spec gives the same bytes, another
// seed other bytes, and the bytes decode at the asked size and format.
func TestSynthImageDeterministic(t *testing.T) {
	for _, f := range []string{"png", "jpeg"} {
		a, err := SynthImage(ImageSpec{Width: 120, Height: 80, Format: f, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := SynthImage(ImageSpec{Width: 120, Height: 80, Format: f, Seed: 7})
		c, _ := SynthImage(ImageSpec{Width: 120, Height: 80, Format: f, Seed: 8})
		if !bytes.Equal(a.Data, b.Data) {
			t.Errorf("%s: the same seed gave different bytes", f)
		}
		if bytes.Equal(a.Data, c.Data) {
			t.Errorf("%s: seeds 7 and 8 gave the same bytes", f)
		}
		p, err := Probe(Image, a.Data, Limits{})
		if err != nil || p.Format != f || p.Width != 120 || p.Height != 80 {
			t.Errorf("%s: probe %+v, %v; want %s 120×80", f, p, err, f)
		}
	}
}

// TestSynthAudioWAV: a WAV clip has the asked length, rate, depth and
// channels, and the same seed gives the same bytes.
func TestSynthAudioWAV(t *testing.T) {
	for _, depth := range []int{8, 16, 24, 32} {
		s := AudioSpec{Duration: 1250 * time.Millisecond, Format: "wav", SampleRate: 16000, Depth: depth, Channels: 2, Seed: 1}
		a, err := SynthAudio(s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := SynthAudio(s)
		if !bytes.Equal(a.Data, b.Data) {
			t.Errorf("depth %d: the same seed gave different bytes", depth)
		}
		p, err := Probe(Audio, a.Data, Limits{})
		if err != nil || p.Duration != 1250*time.Millisecond || p.SampleRate != 16000 || p.Depth != depth || p.Channels != 2 {
			t.Errorf("depth %d: probe %v %d Hz %d bits %d channels, %v", depth, p.Duration, p.SampleRate, p.Depth, p.Channels, err)
		}
		if want := 44 + 16000*1250/1000*2*depth/8; len(a.Data) != want {
			t.Errorf("depth %d: %d bytes, want %d", depth, len(a.Data), want)
		}
	}
}

// pngHeader is a PNG signature and an IHDR chunk claiming w × h pixels,
// with nothing after it: a decompression bomb's header.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, 13)
	chunk := append([]byte("IHDR"), ihdr...)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// TestProbeRefuses: a 50,000 × 50,000 PNG header is refused by its size
// before decoding; a truncated image, a non-image, an empty file, a
// non-base64 data URL and an over-large item are errors of their kind.
func TestProbeRefuses(t *testing.T) {
	good, _ := SynthImage(ImageSpec{Width: 40, Height: 30, Format: "png", Seed: 1})
	wav, _ := SynthAudio(AudioSpec{Duration: time.Second, Format: "wav", SampleRate: 8000, Depth: 16, Channels: 1})
	for _, c := range []struct {
		name string
		kind Kind
		data []byte
		lim  Limits
		want error
		msg  string
	}{
		{"bomb", Image, pngHeader(50000, 50000), Limits{}, ErrTooBig, "2500000000 pixels"},
		{"cap", Image, good.Data, Limits{MaxPixels: 100}, ErrTooBig, "40×30"},
		{"truncated", Image, good.Data[:len(good.Data)/2], Limits{}, ErrCorrupt, "png"},
		{"not an image", Image, []byte("hello, world"), Limits{}, ErrFormat, "not a PNG"},
		{"empty", Image, nil, Limits{}, ErrCorrupt, "empty"},
		{"bytes cap", Image, good.Data, Limits{MaxBytes: 10}, ErrTooBig, "bytes"},
		{"truncated wav", Audio, wav.Data[:1000], Limits{}, ErrCorrupt, "truncated"},
		{"not audio", Audio, good.Data, Limits{}, ErrFormat, "not a WAV"},
		{"not video", Video, good.Data, Limits{}, ErrFormat, "not an MP4"},
	} {
		_, err := Probe(c.kind, c.data, c.lim)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
	}
	if _, err := DecodeDataURL("data:image/png,abc"); err == nil || !strings.Contains(err.Error(), "not base64") {
		t.Errorf("a data URL without ;base64: %v", err)
	}
	if _, err := DecodeDataURL("data:image/png;base64,%%%"); err == nil {
		t.Error("bad base64 decoded")
	}
}

// TestChatParts: the content parts are OpenAI's shapes.
func TestChatParts(t *testing.T) {
	img := Item{Kind: Image, Format: "png", Data: []byte{1, 2, 3}}
	aud := Item{Kind: Audio, Format: "wav", Data: []byte{4, 5}}
	vid := Item{Kind: Video, URL: "https://x/v.mp4"}
	for _, c := range []struct {
		got, want string
	}{
		{string(AppendChatPart(nil, &img)), `{"type":"image_url","image_url":{"url":"data:image/png;base64,AQID"}}`},
		{string(AppendChatPart(nil, &aud)), `{"type":"input_audio","input_audio":{"data":"BAU=","format":"wav"}}`},
		{string(AppendChatPart(nil, &vid)), `{"type":"video_url","video_url":{"url":"https://x/v.mp4"}}`},
		{string(AppendResponsesPart(nil, &img)), `{"type":"input_image","image_url":"data:image/png;base64,AQID"}`},
		{string(AppendResponsesPart(nil, &aud)), `{"type":"input_file","filename":"audio.wav","file_data":"data:audio/wav;base64,BAU="}`},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

// TestGeneratorCaches: a generator encodes each distinct item once (the
// same request twice gives the same parts, pointer-equal), with reuse
// every request has the same images, without it they differ.
func TestGeneratorCaches(t *testing.T) {
	cfg := SyntheticConfig{Images: 2, ImageWidthMean: 32, ImageHeightMean: 32}
	g := NewGenerator(cfg, 1)
	a, _ := g.Request(nil, 3)
	b, _ := g.Request(nil, 3)
	c, _ := g.Request(nil, 4)
	if a[0] != b[0] || a[1] != b[1] {
		t.Error("the same request was encoded twice")
	}
	if bytes.Equal(a[0].Item.Data, a[1].Item.Data) || bytes.Equal(a[0].Item.Data, c[0].Item.Data) {
		t.Error("images of different slots or requests are equal")
	}
	cfg.ImageReuse = true
	g = NewGenerator(cfg, 1)
	a, _ = g.Request(nil, 3)
	c, _ = g.Request(nil, 4)
	if a[0] != c[0] || a[1] != c[1] {
		t.Error("with reuse, requests 3 and 4 have different images")
	}
	if _, err := NewGenerator(SyntheticConfig{Audios: 1, AudioLengthMean: 1, AudioFormat: "mp3"}, 1).Request(nil, 0); err != nil && !errors.Is(err, ErrNoFFmpeg) && !strings.Contains(err.Error(), "ffmpeg") {
		t.Errorf("mp3: %v", err)
	}
}

// BenchmarkBuildPart1024PNG is the cost of making one 1024 × 1024
// synthetic PNG and rendering its content part (what the cache saves), and
// of a cache hit (what a request build pays after).
func BenchmarkBuildPart1024PNG(b *testing.B) {
	b.Run("encode", func(b *testing.B) {
		for i := range b.N {
			it, err := SynthImage(ImageSpec{Width: 1024, Height: 1024, Format: "png", Seed: uint64(i)})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(it.Data)))
			_ = NewPart(it)
		}
	})
	b.Run("cached", func(b *testing.B) {
		g := NewGenerator(SyntheticConfig{Images: 1, ImageWidthMean: 1024, ImageHeightMean: 1024, ImageReuse: true}, 1)
		g.Request(nil, 0)
		var dst []*Part
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			dst, _ = g.Request(dst[:0], uint64(i))
		}
	})
}
