package reprise

import (
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/media"
)

// mediaConfig is o's synthetic media as trace/media takes them.
func mediaConfig(o *MediaOptions) media.SyntheticConfig {
	return media.SyntheticConfig{
		Images: o.Images, ImageWidthMean: o.ImageWidthMean, ImageWidthStdDev: o.ImageWidthStdDev,
		ImageHeightMean: o.ImageHeightMean, ImageHeightStdDev: o.ImageHeightStdDev, ImageFormat: o.ImageFormat, ImageReuse: o.ImageReuse,
		Audios: o.Audios, AudioLengthMean: o.AudioLengthMean, AudioLengthStdDev: o.AudioLengthStdDev, AudioFormat: o.AudioFormat,
		AudioSampleRates: o.AudioSampleRates, AudioDepths: o.AudioDepths, AudioChannels: o.AudioChannels,
		Videos: o.Videos, VideoDuration: o.VideoDuration, VideoFPS: o.VideoFPS, VideoWidth: o.VideoWidth, VideoHeight: o.VideoHeight,
		VideoSynth: o.VideoSynthType, VideoFormat: o.VideoFormat, VideoCodec: o.VideoCodec,
		VideoAudioChannels: o.VideoAudioChannels, VideoAudioSampleRate: o.VideoAudioSampleRate,
		VideoAudioDepth: o.VideoAudioDepth, VideoAudioCodec: o.VideoAudioCodec,
		ImageSource: o.ImageSource, ImageSourceSampling: o.ImageSourceSampling,
	}
}

// mediaLimits are the caps on a trace's own media.
func mediaLimits(o *MediaOptions) trace.MediaLimits {
	return trace.MediaLimits{MaxPixels: o.MaxImagePixels, MaxBytes: o.MaxMediaBytes}
}

// mediaProblems checks o, naming the Options fields.
func mediaProblems(o *MediaOptions, bad func(path, format string, args ...any)) {
	c := mediaConfig(o)
	n := 0
	c.Problems(func(field, format string, args ...any) {
		n++
		if field == "VideoSynth" {
			field = "VideoSynthType"
		}
		bad("Media."+field, "{Media."+field+"}: "+format, args...)
	})
	if o.MaxImagePixels < 0 || o.MaxMediaBytes < 0 {
		bad("Media.MaxImagePixels", "{Media.MaxImagePixels} %d and {Media.MaxMediaBytes} %d must not be negative (0 = the defaults)", o.MaxImagePixels, o.MaxMediaBytes)
	}
	if c.Enabled() && n == 0 {
		// Made once at validation so that a bad combination (MP3 or video
		// without ffmpeg) fails before anything is sent.
		if _, err := media.NewGenerator(c, 1).Request(nil, 0); err != nil {
			bad("Media.Images", "the synthetic media: %v", err)
		}
	}
}

// mediaParts appends request i's synthetic media to in.
func (rn *runner) mediaParts(dst []adapter.MediaPart, i uint64) ([]adapter.MediaPart, *trace.MediaStats, error) {
	ps, err := rn.media.Request(nil, i)
	if err != nil {
		return dst, nil, err
	}
	var st trace.MediaStats
	for _, p := range ps {
		dst = append(dst, adapter.MediaPart{Chat: p.Chat, Responses: p.Responses})
		st.Add(&p.Item)
	}
	return dst, &st, nil
}

// recordMedia is s as the records count it.
func recordMedia(s *trace.MediaStats) record.Media {
	return record.Media{Images: int32(s.Images), ImageBytes: int64(s.ImageBytes), ImagePixels: s.ImagePixels, ImageSizes: s.ImageSizes,
		Audios: int32(s.Audios), AudioBytes: int64(s.AudioBytes), AudioNS: int64(s.AudioDuration), Videos: int32(s.Videos), VideoBytes: int64(s.VideoBytes)}
}
