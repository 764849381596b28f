package media

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzProbe: Probe and ParseWAV never panic, and whatever Probe accepts
// as an image is within the pixel cap.
func FuzzProbe(f *testing.F) {
	png, _ := SynthImage(ImageSpec{Width: 8, Height: 8, Format: "png", Seed: 1})
	jpg, _ := SynthImage(ImageSpec{Width: 8, Height: 8, Format: "jpeg", Seed: 1})
	wav, _ := SynthAudio(AudioSpec{Duration: 10 * time.Millisecond, Format: "wav", SampleRate: 8000, Depth: 16, Channels: 1})
	for _, s := range [][]byte{png.Data, jpg.Data, wav.Data, pngHeader(50000, 50000), []byte("RIFF\x00\x00\x00\x00WEBPVP8X"), []byte("ID3\x03\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00"), []byte("\x00\x00\x00\x18ftypmp42")} {
		for k := range 3 {
			f.Add(uint8(k), s)
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		lim := Limits{MaxPixels: 1 << 16}
		it, err := Probe(Kind(k%3), data, lim)
		if err == nil && it.Kind == Image && int64(it.Width)*int64(it.Height) > lim.MaxPixels {
			t.Fatalf("accepted a %d×%d image over the cap", it.Width, it.Height)
		}
		ParseWAV(data)
		mp3Duration(data)
	})
}

// FuzzDecodeDataURL: DecodeDataURL never panics.
func FuzzDecodeDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,AQID", "data:,x", "data:image/png;base64", "http://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { DecodeDataURL(s) })
}

// FuzzCutMedia: CutMedia never panics, and what it cuts from a valid JSON
// object leaves a valid object and a valid array.
func FuzzCutMedia(f *testing.F) {
	for _, s := range []string{`{"media":[{"a":"]"}],"text_input":"x"}`, `{"text_input":"x","media":[1,[2]]}`, `{"media":[`, `{"x":"\"media\":["}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rest, m, ok := CutMedia([]byte(s), nil)
		var v map[string]json.RawMessage
		if ok && json.Unmarshal([]byte(s), &v) == nil && v["media"] != nil && bytes.HasPrefix(bytes.TrimSpace(v["media"]), []byte("[")) {
			if !json.Valid(rest) || !json.Valid(m) {
				t.Fatalf("%q: rest %q media %q", s, rest, m)
			}
		}
	})
}
