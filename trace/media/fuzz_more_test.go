package media

import (
	"bytes"
	"image"
	"testing"
	"time"
)

// FuzzParseWAVHeader: a stream's WAV header parses without panicking, its
// data offset lies within the bytes read, and whatever ParseWAV accepts
// ParseWAVHeader reads with the same format.
func FuzzParseWAVHeader(f *testing.F) {
	wav, _ := SynthAudio(AudioSpec{Duration: 10 * time.Millisecond, Format: "wav", SampleRate: 8000, Depth: 16, Channels: 2})
	f.Add(wav.Data)
	f.Add(wav.Data[:44])
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, off, _, err := ParseWAVHeader(data)
		if err != nil {
			return
		}
		if off < 0 || off > len(data) {
			t.Fatalf("data offset %d of %d bytes", off, len(data))
		}
		if w, err := ParseWAV(data); err == nil && (w.SampleRate != h.SampleRate || w.Channels != h.Channels || w.Depth != h.Depth) {
			t.Fatalf("ParseWAV %+v, ParseWAVHeader %+v", w, h)
		}
	})
}

// FuzzSourceImage: an --image-source file that Probe accepts decodes and
// renders at a drawn size without panicking, at that size.
func FuzzSourceImage(f *testing.F) {
	png, _ := SynthImage(ImageSpec{Width: 8, Height: 5, Format: "png", Seed: 1})
	jpg, _ := SynthImage(ImageSpec{Width: 5, Height: 8, Format: "jpeg", Seed: 1})
	f.Add(png.Data, uint8(3), uint8(4))
	f.Add(jpg.Data, uint8(0), uint8(0))
	f.Add(pngHeader(50000, 50000), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, w, h uint8) {
		if _, err := Probe(Image, data, Limits{MaxPixels: 1 << 16}); err != nil {
			return
		}
		src, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		it, err := sourceImage(src, int(w%32), int(h%32), "png")
		if err != nil {
			t.Fatal(err)
		}
		if w%32 > 0 && h%32 > 0 && (it.Width != int(w%32) || it.Height != int(h%32)) {
			t.Fatalf("%dx%d, want %dx%d", it.Width, it.Height, w%32, h%32)
		}
	})
}
