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

// TestVideoAudioTrack muxes an audio track into synthetic MP4 and WebM
// videos (AIPerf's --video-audio-*) and reads it back from the container:
// the codec, sample rate and channels asked for, and the video's length
// within one codec frame (AAC's 1024 samples, Vorbis's up to 2048, Opus's
// 20 ms). A video without the track has none.
func TestVideoAudioTrack(t *testing.T) {
	for _, c := range []struct {
		format, codec, want string
		rate, channels      int
	}{
		{"mp4", "", "aac", 16000, 1},
		{"mp4", "aac", "aac", 44100, 2},
		{"mp4", "libopus", "opus", 24000, 2},
		{"webm", "", "vorbis", 44100, 2},
		{"webm", "libopus", "opus", 16000, 1},
	} {
		v, err := SynthVideo(VideoSpec{Width: 64, Height: 48, FPS: 4, Duration: 2 * time.Second, Format: c.format, Seed: 5,
			Audio: VideoAudio{SampleRate: c.rate, Depth: 16, Channels: c.channels, Codec: c.codec}})
		if err != nil {
			t.Fatalf("%s %s: %v", c.format, c.codec, err)
		}
		p, err := Probe(Video, v.Data, Limits{})
		if err != nil {
			t.Fatalf("%s %s: probe: %v", c.format, c.codec, err)
		}
		if p.Frames != 8 || p.Duration != 2*time.Second {
			t.Errorf("%s %s: video of %d frames, %v; want 8 frames (4 fps), 2 s", c.format, c.codec, p.Frames, p.Duration)
		}
		tr := p.Track
		if tr == nil {
			t.Fatalf("%s %s: no audio track", c.format, c.codec)
		}
		rate := c.rate
		frame := 2048 * time.Second / time.Duration(c.rate)
		if d := tr.Duration - 2*time.Second; tr.Codec != c.want || tr.SampleRate != rate || tr.Channels != c.channels || d < -frame || d > frame {
			t.Errorf("%s %s: track %+v, want %s at %d Hz, %d channels, 2 s ± %v", c.format, c.codec, *tr, c.want, rate, c.channels, frame)
		}
		w, _ := SynthVideo(VideoSpec{Width: 64, Height: 48, FPS: 4, Duration: 2 * time.Second, Format: c.format, Seed: 5,
			Audio: VideoAudio{SampleRate: c.rate, Depth: 16, Channels: c.channels, Codec: c.codec}})
		if !bytes.Equal(v.Data, w.Data) {
			t.Errorf("%s %s: the same spec gave different bytes", c.format, c.codec)
		}
	}
	v, err := SynthVideo(VideoSpec{Width: 64, Height: 48, FPS: 4, Duration: time.Second, Format: "mp4", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if v.Track != nil {
		t.Errorf("a video without audio has a track %+v", *v.Track)
	}
	if v.Frames != 4 || v.Duration != time.Second {
		t.Errorf("a fragmented MP4 of %d frames, %v; want 4 frames, 1 s", v.Frames, v.Duration)
	}
}
