package analyze

import (
	"testing"
	"time"

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
		Media: trace.MediaStats{Images: 2, ImageBytes: 100, ImagePixels: 64, Audios: 1, AudioBytes: 50, AudioDuration: 1500 * time.Millisecond}})
	a.Add(&trace.Row{HasOffset: true, Offset: 2 * time.Second, InputTokens: 10, OutputTokens: 2, Images: 4}) // Azure NumImages
	m := a.Report().Media
	if m == nil || m.RowsWithMedia != 2 || m.Images != 6 || m.ImageBytes != 100 || m.Audios != 1 || m.AudioSeconds != 1.5 || m.ImagesPerRow.Max != 4 {
		t.Fatalf("media report %+v", m)
	}
}
