package media

import (
	"bytes"
	"testing"
	"time"
)

// TestFFmpegMedia makes MP3 audio and MP4 and WebM video with ffmpeg
// (scripts/need-tools.sh installs it): the MP3's frames give the asked
// length within a frame, the videos are recognised by Probe, and the same
// spec gives the same bytes.
func TestFFmpegMedia(t *testing.T) {
	a, err := SynthAudio(AudioSpec{Duration: 2 * time.Second, Format: "mp3", SampleRate: 16000, Depth: 16, Channels: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Duration - 2*time.Second; d < -100*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("mp3 of %v, want 2 s", a.Duration)
	}
	p, err := Probe(Audio, a.Data, Limits{})
	if err != nil || p.Format != "mp3" || p.Duration != a.Duration {
		t.Errorf("mp3 probe %v %v, %v", p.Format, p.Duration, err)
	}
	b, _ := SynthAudio(AudioSpec{Duration: 2 * time.Second, Format: "mp3", SampleRate: 16000, Depth: 16, Channels: 1, Seed: 1})
	if !bytes.Equal(a.Data, b.Data) {
		t.Error("mp3: the same spec gave different bytes")
	}
	for _, f := range []string{"mp4", "webm"} {
		v, err := SynthVideo(VideoSpec{Width: 64, Height: 48, FPS: 4, Duration: time.Second, Format: f, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Probe(Video, v.Data, Limits{})
		if err != nil || p.Format != f {
			t.Errorf("%s: probe %q, %v", f, p.Format, err)
		}
		w, _ := SynthVideo(VideoSpec{Width: 64, Height: 48, FPS: 4, Duration: time.Second, Format: f, Seed: 3})
		if !bytes.Equal(v.Data, w.Data) {
			t.Errorf("%s: the same spec gave different bytes", f)
		}
	}
}
