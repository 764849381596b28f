package synth_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/media"
	"github.com/reprise-bench/reprise/trace/synth"
)

// TestDeriveKeepsMedia: synthesize --from an AIPerf single_turn dataset
// whose rows carry images and audio, at 2× speed, writes Mooncake lines
// that carry the same media: read back, every row has the images (sizes)
// and clips (lengths) it had, at half its offset, and the summary counts
// them. Before, the media parts were written but not read back.
func TestDeriveKeepsMedia(t *testing.T) {
	dir := t.TempDir()
	png, err := media.SynthImage(media.ImageSpec{Width: 12, Height: 8, Format: "png", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	wav, err := media.SynthAudio(media.AudioSpec{Duration: 300 * time.Millisecond, Format: "wav", SampleRate: 8000, Depth: 8, Channels: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"a.png": png.Data, "c.wav": wav.Data,
		"in.jsonl": []byte(`{"text": "describe", "images": ["a.png", "a.png"], "output_length": 3, "timestamp": 0}` + "\n" +
			`{"text": "listen", "audio": "c.wav", "output_length": 3, "timestamp": 100}` + "\n" +
			`{"text": "plain", "output_length": 3, "timestamp": 200}` + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := filepath.Join(dir, "in.jsonl")
	want, _, err := trace.ReadAll(in, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := synth.NewOptions()
	o.From, o.Speedup = in, 2
	o.Set = map[string]bool{"from": true, "speedup": true}
	var out bytes.Buffer
	sum, err := synth.Run(context.Background(), o, synth.Env{Write: func(fill func(io.Writer) error) error { return fill(&out) }})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := trace.ReadAll(p, trace.Options{Format: trace.FormatMooncake})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows out, want %d", len(got), len(want))
	}
	for i := range want {
		if d := cmp.Diff(want[i].Media, got[i].Media); d != "" || got[i].Offset != want[i].Offset/2 {
			t.Errorf("row %d at %v (in: %v): media (-in +out):\n%s", i, got[i].Offset, want[i].Offset, d)
		}
	}
	var s strings.Builder
	sum.Print(&s)
	if !strings.Contains(s.String(), "media: 2 rows with media, 2 images") || !strings.Contains(s.String(), "1 audio clips (0.30 s)") {
		t.Errorf("summary:\n%s", s.String())
	}
}
