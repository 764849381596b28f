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

func (m *mediaBuilders) append(r *record.Media) {
	if r.Images == 0 && r.Audios == 0 && r.Videos == 0 {
		for _, b := range []array.Builder{m.images, m.imageBytes, m.imagePixels, m.audios, m.audioBytes, m.audioNS, m.videos, m.videoBytes} {
			b.UnsafeAppendBoolToBitmap(false)
		}
		m.imageSizes.AppendNull()
		return
	}
	m.images.UnsafeAppend(r.Images)
	m.imageBytes.UnsafeAppend(r.ImageBytes)
	m.imagePixels.UnsafeAppend(r.ImagePixels)
	strNZ(m.imageSizes, r.ImageSizes)
	m.audios.UnsafeAppend(r.Audios)
	m.audioBytes.UnsafeAppend(r.AudioBytes)
	m.audioNS.UnsafeAppend(r.AudioNS)
	m.videos.UnsafeAppend(r.Videos)
	m.videoBytes.UnsafeAppend(r.VideoBytes)
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

func (m *mediaColumns) at(i int, r *record.Media) {
	if m.images == nil || m.images.IsNull(i) {
		return
	}
	*r = record.Media{Images: m.images.Value(i), ImageBytes: i64or(m.imageBytes, i, 0), ImagePixels: i64or(m.imagePixels, i, 0),
		Audios: i32or(m.audios, i, 0), AudioBytes: i64or(m.audioBytes, i, 0), AudioNS: i64or(m.audioNS, i, 0),
		Videos: i32or(m.videos, i, 0), VideoBytes: i64or(m.videoBytes, i, 0)}
	if m.imageSizes != nil && m.imageSizes.IsValid(i) {
		r.ImageSizes = m.imageSizes.Value(i)
	}
}
