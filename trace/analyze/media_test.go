package analyze

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// TestMediaReport: rows with images and audio are counted in Report.Media
// (Azure's NumImages too); a trace without media has none.
func TestMediaReport(t *testing.T) {
	a := New(Config{})
	a.Add(&trace.Row{HasOffset: true, InputTokens: 10, OutputTokens: 2})
	if a.Report().Media != nil {
		t.Fatal("a text row gave a media report")
	}
	a.Add(&trace.Row{HasOffset: true, Offset: time.Second, InputTokens: 10, OutputTokens: 2, Images: 2,
		Media: trace.MediaStats{Images: 2, ImageBytes: 100, ImagePixels: 64, ImageSizes: "4x4,8x6", Audios: 1, AudioBytes: 50, AudioDuration: 1500 * time.Millisecond}})
	a.Add(&trace.Row{HasOffset: true, Offset: 2 * time.Second, InputTokens: 10, OutputTokens: 2, Images: 4}) // Azure NumImages
	m := a.Report().Media
	if m == nil || m.RowsWithMedia != 2 || m.Images != 6 || m.ImageBytes != 100 || m.Audios != 1 || m.AudioSeconds != 1.5 || m.ImagesPerRow.Max != 4 {
		t.Fatalf("media report %+v", m)
	}
	a.Add(&trace.Row{HasOffset: true, Offset: 3 * time.Second, InputTokens: 10, OutputTokens: 2, Images: 1,
		Media: trace.MediaStats{Images: 1, ImageBytes: 300, ImagePixels: 48, ImageSizes: "8x6", Audios: 2, AudioDuration: 500 * time.Millisecond, Videos: 1, VideoBytes: 9}})
	m = a.Report().Media
	// Pixels per image 16, 48, 48; image bytes per row 100, 300; audio
	// seconds per row 1.5, 0.5; clips per row 1, 2.
	if p := m.ImagePixelsPerImage; p.Count != 3 || p.Min != 16 || p.Max != 48 || p.P50 != 48 {
		t.Errorf("pixels per image %+v", p)
	}
	if b := m.ImageBytesPerRow; b.Count != 2 || b.Mean != 200 {
		t.Errorf("image bytes per row %+v", b)
	}
	if s := m.AudioSecondsPerRow; s.Count != 2 || s.Mean != 1 || s.Max != 1.5 || m.AudiosPerRow.Mean != 1.5 {
		t.Errorf("audio seconds per row %+v, clips %+v", s, m.AudiosPerRow)
	}
	if v := m.VideosPerRow; v.Count != 1 || m.VideoBytes != 9 {
		t.Errorf("videos per row %+v", v)
	}
	if d := cmp.Diff([]ImageSize{{"8x6", 2}, {"4x4", 1}}, m.ImageSizes); d != "" {
		t.Errorf("image sizes (-want +got):\n%s", d)
	}
}
