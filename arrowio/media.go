package arrowio

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/engine/record"
)

// mediaBuilders build the media columns of records/v2.1 (design 0022):
// null for a request without media.
type mediaBuilders struct {
	images, audios, videos                                   *array.Int32Builder
	imageBytes, imagePixels, audioBytes, audioNS, videoBytes *array.Int64Builder
	imageSizes                                               *array.StringBuilder
}

func (m *mediaBuilders) init(mem memory.Allocator) {
	m.images, m.audios, m.videos = array.NewInt32Builder(mem), array.NewInt32Builder(mem), array.NewInt32Builder(mem)
	m.imageBytes, m.imagePixels = array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	m.audioBytes, m.audioNS, m.videoBytes = array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	m.imageSizes = array.NewStringBuilder(mem)
}

func (m *mediaBuilders) append(r *record.Request) {
	i32NZ(m.images, r.InputImages)
	i64NZ(m.imageBytes, r.InputImageBytes)
	i64NZ(m.imagePixels, r.InputImagePixels)
	strNZ(m.imageSizes, r.InputImageSizes)
	i32NZ(m.audios, r.InputAudios)
	i64NZ(m.audioBytes, r.InputAudioBytes)
	i64NZ(m.audioNS, r.InputAudioNS)
	i32NZ(m.videos, r.InputVideos)
	i64NZ(m.videoBytes, r.InputVideoBytes)
}

// arrays appends the columns in schema order to cols.
func (m *mediaBuilders) arrays(cols []arrow.Array) []arrow.Array {
	return append(cols, m.images.NewArray(), m.imageBytes.NewArray(), m.imagePixels.NewArray(), m.imageSizes.NewArray(),
		m.audios.NewArray(), m.audioBytes.NewArray(), m.audioNS.NewArray(), m.videos.NewArray(), m.videoBytes.NewArray())
}

// mediaColumns are the media columns of a records file (nil when it
// predates them).
type mediaColumns struct {
	images, audios, videos                                   *array.Int32
	imageBytes, imagePixels, audioBytes, audioNS, videoBytes *array.Int64
	imageSizes                                               *array.String
}

func readMediaColumns(c *columns) mediaColumns {
	return mediaColumns{
		images: optCol[*array.Int32](c, "input_images"), imageBytes: optCol[*array.Int64](c, "input_image_bytes"),
		imagePixels: optCol[*array.Int64](c, "input_image_pixels"), imageSizes: optCol[*array.String](c, "input_image_sizes"),
		audios: optCol[*array.Int32](c, "input_audios"), audioBytes: optCol[*array.Int64](c, "input_audio_bytes"),
		audioNS: optCol[*array.Int64](c, "input_audio_ns"), videos: optCol[*array.Int32](c, "input_videos"),
		videoBytes: optCol[*array.Int64](c, "input_video_bytes"),
	}
}

func (m *mediaColumns) at(i int, r *record.Request) {
	if m.images == nil {
		return // records/v2 and earlier
	}
	r.InputImages, r.InputImageBytes, r.InputImagePixels = i32or(m.images, i, 0), i64or(m.imageBytes, i, 0), i64or(m.imagePixels, i, 0)
	r.InputAudios, r.InputAudioBytes, r.InputAudioNS = i32or(m.audios, i, 0), i64or(m.audioBytes, i, 0), i64or(m.audioNS, i, 0)
	r.InputVideos, r.InputVideoBytes = i32or(m.videos, i, 0), i64or(m.videoBytes, i, 0)
	if m.imageSizes != nil && m.imageSizes.IsValid(i) {
		r.InputImageSizes = m.imageSizes.Value(i)
	}
}
