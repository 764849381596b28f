package media

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
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

// videoSeeds are the testdata videos with an audio track.
var videoSeeds = []struct{ name, format string }{
	{"video-audio.mp4", "mp4"}, {"video-audio-fragmented.mp4", "mp4"}, {"video-audio.webm", "webm"},
}

// TestVideoAudioTrackFiles reads the recorded videos' audio tracks: mono
// 8 kHz, 0.5 s (the fragmented MP4's first AAC sample carries ffmpeg's
// made-up duration, so its length is only known to be longer).
func TestVideoAudioTrackFiles(t *testing.T) {
	for _, s := range videoSeeds {
		b, err := os.ReadFile(filepath.Join("testdata", s.name))
		if err != nil {
			t.Fatal(err)
		}
		it, err := Probe(Video, b, Limits{})
		if err != nil || it.Format != s.format || it.Track == nil {
			t.Fatalf("%s: %+v, %v", s.name, it.Track, err)
		}
		tr := *it.Track
		want := map[string]string{"mp4": "aac", "webm": "opus"}[s.format]
		d := tr.Duration - 500*time.Millisecond
		if tr.Codec != want || tr.SampleRate != 8000 || tr.Channels != 1 || d < -30*time.Millisecond || d > 260*time.Millisecond ||
			s.name != "video-audio-fragmented.mp4" && d > 30*time.Millisecond {
			t.Errorf("%s: %+v, want %s, 8000 Hz, mono, 0.5 s", s.name, tr, want)
		}
		// ffprobe agrees: 2 frames, 0.5 s (the fragmented MP4: 0.628 s).
		long := 500 * time.Millisecond
		if s.name == "video-audio-fragmented.mp4" {
			long = 628052 * time.Microsecond
		}
		if d := it.Duration - long; it.Frames != 2 || d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s: a video of %d frames, %v; want 2, %v", s.name, it.Frames, it.Duration, long)
		}
		if _, err := Probe(Video, b[:len(b)/2], Limits{}); err == nil && s.format == "mp4" && s.name == "video-audio.mp4" {
			t.Errorf("%s cut in half: no error", s.name)
		}
	}
}

// FuzzVideoAudioTrack: the MP4 and WebM track readers never panic, and
// a track they return has no negative field.
func FuzzVideoAudioTrack(f *testing.F) {
	for _, s := range videoSeeds {
		b, err := os.ReadFile(filepath.Join("testdata", s.name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.format == "webm", b)
	}
	f.Fuzz(func(t *testing.T, webm bool, data []byte) {
		format := "mp4"
		if webm {
			format = "webm"
		}
		tr, err := videoAudioTrack(format, data)
		if err == nil && tr != nil && (tr.SampleRate < 0 || tr.Channels < 0 || tr.Duration < 0) {
			t.Fatalf("track %+v", *tr)
		}
	})
}
