package reprise

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// TestMediaParquetAgainstMock replays the committed Parquet media table
// (trace/testdata/media_table.parquet: Hugging Face Image and Audio
// struct<bytes, path> cells, a list of images, a plain binary audio
// column; trace/testdata/README.md says how it was made) against the mock
// server, with the default columns and with images and audio_bytes: the
// mock's log shows, per request, every image with its size and format
// (image_url parts) and every clip with its length (input_audio parts),
// and the records agree with the log.
func TestMediaParquetAgainstMock(t *testing.T) {
	const clip = 250 * time.Millisecond
	cases := []struct {
		name   string
		cols   trace.Columns
		images [][]string // per request: "png 16x12"
		audios [][]time.Duration
	}{
		{"image-audio", trace.Columns{},
			[][]string{{"png 16x12"}, nil, {"jpeg 8x6"}},
			[][]time.Duration{nil, {clip}, {clip}}},
		{"images-audio_bytes", trace.Columns{Image: "images", Audio: "audio_bytes"},
			[][]string{{"png 16x12", "jpeg 8x6"}, nil, {"png 10x10"}},
			[][]time.Duration{nil, {2 * clip}, {clip}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := NewOptions()
			o.Trace.Path, o.Trace.Format, o.Trace.Columns = "trace/testdata/media_table.parquet", string(trace.FormatTable), c.cols
			o.Replay.Concurrency = 1
			reqs, logs := mediaRun(t, o)
			if len(reqs) != len(c.images) {
				t.Fatalf("%d records, want %d", len(reqs), len(c.images))
			}
			sort.Slice(reqs, func(i, j int) bool { return reqs[i].RequestID < reqs[j].RequestID })
			for i, r := range reqs {
				if !r.OK() {
					t.Fatalf("request %d failed: %s %s", i, r.ErrorKind, r.ErrorMessage)
				}
				l, ok := logs[fmt.Sprint(r.RequestID)]
				if !ok {
					t.Fatalf("request %d: not in the server's log", r.RequestID)
				}
				var images []string
				var audios []time.Duration
				for _, m := range l.InputMedia {
					switch m.Kind {
					case "image":
						images = append(images, fmt.Sprintf("%s %dx%d", m.Format, m.Width, m.Height))
					case "audio":
						if m.Format != "wav" {
							t.Errorf("request %d: audio format %q, want wav", i, m.Format)
						}
						audios = append(audios, m.Duration)
					}
					if m.Bytes <= 0 {
						t.Errorf("request %d: a %s of %d bytes", i, m.Kind, m.Bytes)
					}
				}
				if fmt.Sprint(images) != fmt.Sprint(c.images[i]) || fmt.Sprint(audios) != fmt.Sprint(c.audios[i]) {
					t.Errorf("request %d: the server got images %v and audio %v, want %v and %v", i, images, audios, c.images[i], c.audios[i])
				}
				if lm := logMedia(l.InputMedia); r.Media() != lm {
					t.Errorf("request %d: records say %+v, the server's log %+v", i, r.Media(), lm)
				}
			}
		})
	}
}
