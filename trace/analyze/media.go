package analyze

import (
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise/trace"
)

// Media describes the images, audio clips and videos a trace's rows carry
// (design 0022): AIPerf and ShareGPT media fields, a table's media
// columns, Azure 2025's NumImages. nil when no row carries any.
type Media struct {
	// RowsWithMedia counts the rows with at least one item.
	RowsWithMedia int64 `json:"rows_with_media"`
	Images        int64 `json:"images"`
	// ImagesPerRow are the images of the rows that have some.
	ImagesPerRow Stats `json:"images_per_row"`
	// ImageBytes and ImagePixels sum the images whose bytes the trace
	// holds (not URLs, not Azure counts).
	ImageBytes   int64   `json:"image_bytes"`
	ImagePixels  int64   `json:"image_pixels"`
	Audios       int64   `json:"audios"`
	AudioBytes   int64   `json:"audio_bytes"`
	AudioSeconds float64 `json:"audio_seconds"`
	Videos       int64   `json:"videos"`
	VideoBytes   int64   `json:"video_bytes"`
}

// mediaAcc accumulates Media.
type mediaAcc struct {
	m       Media
	perRow  *hist
	present bool
}

func (a *mediaAcc) add(r *trace.Row) {
	s := &r.Media
	images := max(r.Images, s.Images)
	if images == 0 && s.Audios == 0 && s.Videos == 0 {
		return
	}
	if a.perRow == nil {
		a.perRow = newHist(1, 1<<16)
	}
	a.present = true
	m := &a.m
	m.RowsWithMedia++
	m.Images += int64(images)
	if images > 0 {
		a.perRow.add(int64(images))
	}
	m.ImageBytes += int64(s.ImageBytes)
	m.ImagePixels += s.ImagePixels
	m.Audios += int64(s.Audios)
	m.AudioBytes += int64(s.AudioBytes)
	m.AudioSeconds += s.AudioDuration.Seconds()
	m.Videos += int64(s.Videos)
	m.VideoBytes += int64(s.VideoBytes)
}

func (a *mediaAcc) report() *Media {
	if !a.present {
		return nil
	}
	m := a.m
	m.ImagesPerRow = a.perRow.sorted().stats(1)
	return &m
}

// writeMedia prints the media section.
func writeMedia(b *strings.Builder, m *Media) {
	b.WriteString("MEDIA\n")
	writeKV(b, "  ", [][2]string{
		{"rows with media", fmt.Sprint(m.RowsWithMedia)},
		{"images", fmt.Sprintf("%d (%.2f per row with images, max %.0f; %d bytes, %d pixels)", m.Images, m.ImagesPerRow.Mean, m.ImagesPerRow.Max, m.ImageBytes, m.ImagePixels)},
		{"audio clips", fmt.Sprintf("%d (%.2f s, %d bytes)", m.Audios, m.AudioSeconds, m.AudioBytes)},
		{"videos", fmt.Sprintf("%d (%d bytes)", m.Videos, m.VideoBytes)},
	})
	b.WriteString("\n")
}
