package analyze

import (
	"cmp"
	"slices"
	"strconv"
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
	ImageBytes  int64 `json:"image_bytes"`
	ImagePixels int64 `json:"image_pixels"`
	// ImageBytesPerRow is over the rows whose images' bytes the trace
	// holds; ImagePixelsPerImage over the images of known size.
	ImageBytesPerRow    Stats `json:"image_bytes_per_row"`
	ImagePixelsPerImage Stats `json:"image_pixels_per_image"`
	// ImageSizes are the most common image sizes, most images first
	// (ties by size), at most MaxImageSizes.
	ImageSizes   []ImageSize `json:"image_sizes,omitempty"`
	Audios       int64       `json:"audios"`
	AudioBytes   int64       `json:"audio_bytes"`
	AudioSeconds float64     `json:"audio_seconds"`
	// AudiosPerRow is over the rows with audio; AudioSecondsPerRow over
	// the rows whose audio has a known length.
	AudiosPerRow       Stats `json:"audios_per_row"`
	AudioSecondsPerRow Stats `json:"audio_seconds_per_row"`
	Videos             int64 `json:"videos"`
	VideoBytes         int64 `json:"video_bytes"`
	// VideosPerRow is over the rows with videos.
	VideosPerRow Stats `json:"videos_per_row"`
	// VideoSeconds and VideoFrames sum the videos' lengths and frames as
	// their containers say (MP4 track boxes, WebM blocks);
	// VideoSecondsPerRow and VideoFramesPerRow are over the rows whose
	// videos have a known length.
	VideoSeconds       float64 `json:"video_seconds"`
	VideoFrames        int64   `json:"video_frames"`
	VideoSecondsPerRow Stats   `json:"video_seconds_per_row"`
	VideoFramesPerRow  Stats   `json:"video_frames_per_row"`
}

// ImageSize counts the images of one width × height.
type ImageSize struct {
	Size   string `json:"size"` // "WxH"
	Images int64  `json:"images"`
}

// MaxImageSizes bounds Media.ImageSizes; maxDistinctSizes bounds the
// sizes counted (later new sizes are not listed).
const (
	MaxImageSizes    = 10
	maxDistinctSizes = 4096
)

// mediaAcc accumulates Media.
type mediaAcc struct {
	m                                  Media
	perRow, audiosPerRow, videosPerRow *hist
	imageBytes, pixels, audioNS        *hist
	videoNS, frames                    *hist
	sizes                              map[string]int64
	present                            bool
}

func (a *mediaAcc) add(r *trace.Row) {
	s := &r.Media
	images := max(r.Images, s.Images)
	if images == 0 && s.Audios == 0 && s.Videos == 0 {
		return
	}
	if !a.present {
		a.present = true
		a.perRow, a.audiosPerRow, a.videosPerRow = newHist(1, 1<<16), newHist(1, 1<<16), newHist(1, 1<<16)
		a.imageBytes, a.pixels, a.audioNS = newHist(1, 1<<16), newHist(1, 1<<20), newHist(msScale, 1<<20)
		a.videoNS, a.frames = newHist(msScale, 1<<20), newHist(1, 1<<20)
		a.sizes = map[string]int64{}
	}
	m := &a.m
	m.RowsWithMedia++
	m.Images += int64(images)
	if images > 0 {
		a.perRow.add(int64(images))
	}
	if s.ImageBytes > 0 {
		a.imageBytes.add(int64(s.ImageBytes))
	}
	for sz := range strings.SplitSeq(s.ImageSizes, ",") {
		w, h, ok := strings.Cut(sz, "x")
		wi, werr := strconv.ParseInt(w, 10, 64)
		hi, herr := strconv.ParseInt(h, 10, 64)
		if !ok || werr != nil || herr != nil {
			continue // "?" (a URL) or none
		}
		a.pixels.add(wi * hi)
		if _, seen := a.sizes[sz]; seen || len(a.sizes) < maxDistinctSizes {
			a.sizes[sz]++
		}
	}
	m.ImageBytes += int64(s.ImageBytes)
	m.ImagePixels += s.ImagePixels
	m.Audios += int64(s.Audios)
	m.AudioBytes += int64(s.AudioBytes)
	m.AudioSeconds += s.AudioDuration.Seconds()
	if s.Audios > 0 {
		a.audiosPerRow.add(int64(s.Audios))
		if s.AudioDuration > 0 {
			a.audioNS.add(int64(s.AudioDuration))
		}
	}
	m.Videos += int64(s.Videos)
	m.VideoBytes += int64(s.VideoBytes)
	m.VideoSeconds += s.VideoDuration.Seconds()
	m.VideoFrames += s.VideoFrames
	if s.Videos > 0 {
		a.videosPerRow.add(int64(s.Videos))
		if s.VideoDuration > 0 {
			a.videoNS.add(int64(s.VideoDuration))
			a.frames.add(s.VideoFrames)
		}
	}
}

func (a *mediaAcc) report() *Media {
	if !a.present {
		return nil
	}
	m := a.m
	m.ImagesPerRow = a.perRow.sorted().stats(1)
	m.ImageBytesPerRow = a.imageBytes.sorted().stats(1)
	m.ImagePixelsPerImage = a.pixels.sorted().stats(1)
	m.AudiosPerRow = a.audiosPerRow.sorted().stats(1)
	m.AudioSecondsPerRow = a.audioNS.sorted().stats(1e9)
	m.VideosPerRow = a.videosPerRow.sorted().stats(1)
	m.VideoSecondsPerRow = a.videoNS.sorted().stats(1e9)
	m.VideoFramesPerRow = a.frames.sorted().stats(1)
	for sz, n := range a.sizes {
		m.ImageSizes = append(m.ImageSizes, ImageSize{sz, n})
	}
	slices.SortFunc(m.ImageSizes, func(x, y ImageSize) int {
		return cmp.Or(cmp.Compare(y.Images, x.Images), cmp.Compare(x.Size, y.Size))
	})
	if len(m.ImageSizes) > MaxImageSizes {
		m.ImageSizes = m.ImageSizes[:MaxImageSizes]
	}
	return &m
}
