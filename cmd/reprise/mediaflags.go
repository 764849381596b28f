package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/trace/media"
)

// catMedia is the help category of the multimodal flags (design 0022).
const catMedia = "Images, audio and video (every request)"

// mediaFlags are the synthetic-media flags, in AIPerf's spellings; the
// profile command also takes AIPerf's --image-batch-size,
// --audio-batch-size and --video-batch-size (profileAliases).
func mediaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "batch-size-image", Category: catMedia, Sources: envVars("batch-size-image"), Value: 1,
			Usage: "images per request (`N`) when --image-width-mean and --image-height-mean are set"},
		&cli.FloatFlag{Name: "image-width-mean", Category: catMedia, Sources: envVars("image-width-mean"), Usage: "synthetic image width, mean `PIXELS` (0: no images)"},
		&cli.FloatFlag{Name: "image-width-stddev", Category: catMedia, Sources: envVars("image-width-stddev"), Usage: "synthetic image width, standard deviation `PIXELS`"},
		&cli.FloatFlag{Name: "image-height-mean", Category: catMedia, Sources: envVars("image-height-mean"), Usage: "synthetic image height, mean `PIXELS` (0: no images)"},
		&cli.FloatFlag{Name: "image-height-stddev", Category: catMedia, Sources: envVars("image-height-stddev"), Usage: "synthetic image height, standard deviation `PIXELS`"},
		&cli.StringFlag{Name: "image-format", Category: catMedia, Sources: envVars("image-format"), Value: "png", Usage: "synthetic image `FORMAT`: png, jpeg or random (each image picks)"},
		&cli.BoolFlag{Name: "image-reuse", Category: catMedia, Sources: envVars("image-reuse"),
			Usage: "send the same images in every request (a server's image cache can hit); without it each request's images differ"},
		&cli.StringFlag{Name: "image-source", Category: catMedia, Sources: envVars("image-source"),
			Usage: "a `DIR` of PNG, JPEG and GIF files: each synthetic image is one of them, resized to the drawn size (its own size without --image-width-mean)"},
		&cli.StringFlag{Name: "image-source-sampling", Category: catMedia, Sources: envVars("image-source-sampling"), Value: "random",
			Usage: "how --image-source files are picked (`MODE`): random (seeded by --seed)"},
		&cli.IntFlag{Name: "batch-size-audio", Category: catMedia, Sources: envVars("batch-size-audio"), Value: 1,
			Usage: "audio clips per request (`N`) when --audio-length-mean is set"},
		&cli.FloatFlag{Name: "audio-length-mean", Category: catMedia, Sources: envVars("audio-length-mean"), Usage: "synthetic audio length, mean `SECONDS` (0: no audio)"},
		&cli.FloatFlag{Name: "audio-length-stddev", Category: catMedia, Sources: envVars("audio-length-stddev"), Usage: "synthetic audio length, standard deviation `SECONDS`"},
		&cli.StringFlag{Name: "audio-format", Category: catMedia, Sources: envVars("audio-format"), Value: "wav", Usage: "synthetic audio `FORMAT`: wav, mp3 (needs ffmpeg) or random"},
		&cli.StringFlag{Name: "audio-sample-rates", Category: catMedia, Sources: envVars("audio-sample-rates"), Value: "16",
			Validator: func(s string) error { _, err := numberList(s); return err },
			Usage:     "sample rates in `KHZ,…` to pick from per clip (AIPerf's unit: 16 = 16000 Hz; commas or spaces)"},
		&cli.StringFlag{Name: "audio-depths", Category: catMedia, Sources: envVars("audio-depths"), Value: "16",
			Validator: func(s string) error { _, err := numberList(s); return err },
			Usage:     "bit depths (`BITS,…`: 8, 16, 24, 32) to pick from per clip"},
		&cli.IntFlag{Name: "audio-num-channels", Category: catMedia, Sources: envVars("audio-num-channels"), Value: 1, Usage: "audio channels (`N`, 1 to 8)"},
		&cli.IntFlag{Name: "batch-size-video", Category: catMedia, Sources: envVars("batch-size-video"), Value: 1,
			Usage: "videos per request (`N`) when --video-duration is set (videos are made with ffmpeg)"},
		&cli.FloatFlag{Name: "video-duration", Category: catMedia, Sources: envVars("video-duration"), Usage: "synthetic video length `SECONDS` (0: no video)"},
		&cli.IntFlag{Name: "video-fps", Category: catMedia, Sources: envVars("video-fps"), Value: 4, Usage: "synthetic video frames per second (`N`)"},
		&cli.IntFlag{Name: "video-width", Category: catMedia, Sources: envVars("video-width"), Value: 640, Usage: "synthetic video width `PIXELS`"},
		&cli.IntFlag{Name: "video-height", Category: catMedia, Sources: envVars("video-height"), Value: 480, Usage: "synthetic video height `PIXELS`"},
		&cli.StringFlag{Name: "video-synth-type", Category: catMedia, Sources: envVars("video-synth-type"), Value: "testsrc2",
			Usage: "ffmpeg lavfi `SOURCE`: testsrc, testsrc2, smptebars, mandelbrot, rgbtestsrc"},
		&cli.StringFlag{Name: "video-format", Category: catMedia, Sources: envVars("video-format"), Value: "mp4", Usage: "synthetic video `FORMAT`: mp4 or webm"},
		&cli.StringFlag{Name: "video-codec", Category: catMedia, Sources: envVars("video-codec"), Usage: "ffmpeg video `ENCODER` (default libx264 for mp4, libvpx-vp9 for webm)"},
		&cli.IntFlag{Name: "video-audio-num-channels", Aliases: []string{"video-audio-channels"}, Category: catMedia, Sources: envVars("video-audio-num-channels"),
			Usage: "mux an audio track of the video's length into each synthetic video: `N` channels (0: none, 1 or 2)"},
		&cli.FloatFlag{Name: "video-audio-sample-rate", Category: catMedia, Sources: envVars("video-audio-sample-rate"), Value: media.DefaultVideoAudioSampleRate,
			Usage: "the video audio track's sample rate, `HZ` (or kHz below 1000, as AIPerf: 44.1 = 44100; 8000 to 96000)"},
		&cli.IntFlag{Name: "video-audio-depth", Category: catMedia, Sources: envVars("video-audio-depth"), Value: media.DefaultVideoAudioDepth,
			Usage: "the video audio track's bit depth before encoding (`BITS`: 8, 16, 24, 32)"},
		&cli.StringFlag{Name: "video-audio-codec", Category: catMedia, Sources: envVars("video-audio-codec"),
			Usage: "the video audio track's ffmpeg `ENCODER`: aac or libopus in mp4, libvorbis or libopus in webm (default aac for mp4, libvorbis for webm)"},
		&cli.StringFlag{Name: "image-column", Category: catMedia, Sources: envVars("image-column"),
			Usage: "table dataset: the `COLUMN` of images (paths, URLs, data URLs, base64 or bytes; default image, images)"},
		&cli.StringFlag{Name: "audio-column", Category: catMedia, Sources: envVars("audio-column"),
			Usage: "table dataset: the `COLUMN` of audio clips (default audio, audios)"},
		&cli.Int64Flag{Name: "max-image-pixels", Category: catMedia, Sources: envVars("max-image-pixels"), Value: 8192 * 8192,
			Usage: "refuse a trace's image over `N` pixels (width × height, from its header before decoding)"},
		&cli.Int64Flag{Name: "max-media-bytes", Category: catMedia, Sources: envVars("max-media-bytes"), Value: 64 << 20,
			Usage: "refuse a trace's image, audio or video file over `BYTES`"},
	}
}

// mediaOptions maps the media flags onto Options.Media.
func mediaOptions(cmd *cli.Command) reprise.MediaOptions {
	return reprise.MediaOptions{
		Images: cmd.Int("batch-size-image"), ImageWidthMean: cmd.Float("image-width-mean"), ImageWidthStdDev: cmd.Float("image-width-stddev"),
		ImageHeightMean: cmd.Float("image-height-mean"), ImageHeightStdDev: cmd.Float("image-height-stddev"),
		ImageFormat: cmd.String("image-format"), ImageReuse: cmd.Bool("image-reuse"),
		Audios: cmd.Int("batch-size-audio"), AudioLengthMean: cmd.Float("audio-length-mean"), AudioLengthStdDev: cmd.Float("audio-length-stddev"),
		AudioFormat: cmd.String("audio-format"), AudioSampleRates: mustNumbers(cmd.String("audio-sample-rates")), AudioDepths: ints(mustNumbers(cmd.String("audio-depths"))),
		AudioChannels: cmd.Int("audio-num-channels"),
		Videos:        cmd.Int("batch-size-video"), VideoDuration: cmd.Float("video-duration"), VideoFPS: cmd.Int("video-fps"),
		VideoWidth: cmd.Int("video-width"), VideoHeight: cmd.Int("video-height"), VideoSynthType: cmd.String("video-synth-type"),
		VideoFormat: cmd.String("video-format"), VideoCodec: cmd.String("video-codec"),
		VideoAudioChannels: cmd.Int("video-audio-num-channels"), VideoAudioSampleRate: cmd.Float("video-audio-sample-rate"),
		VideoAudioDepth: cmd.Int("video-audio-depth"), VideoAudioCodec: cmd.String("video-audio-codec"),
		MaxImagePixels: cmd.Int64("max-image-pixels"), MaxMediaBytes: cmd.Int64("max-media-bytes"),
		ImageSource: cmd.String("image-source"), ImageSourceSampling: cmd.String("image-source-sampling"),
	}
}

// mediaOptionFlags spell the Options.Media fields as flags.
var mediaOptionFlags = map[string]string{
	"Media": "--image-width-mean", "Media.Images": "--batch-size-image",
	"Media.ImageWidthMean": "--image-width-mean", "Media.ImageWidthStdDev": "--image-width-stddev",
	"Media.ImageHeightMean": "--image-height-mean", "Media.ImageHeightStdDev": "--image-height-stddev",
	"Media.ImageFormat": "--image-format", "Media.ImageReuse": "--image-reuse",
	"Media.Audios": "--batch-size-audio", "Media.AudioLengthMean": "--audio-length-mean", "Media.AudioLengthStdDev": "--audio-length-stddev",
	"Media.AudioFormat": "--audio-format", "Media.AudioSampleRates": "--audio-sample-rates", "Media.AudioDepths": "--audio-depths",
	"Media.AudioChannels": "--audio-num-channels",
	"Media.Videos":        "--batch-size-video", "Media.VideoDuration": "--video-duration", "Media.VideoFPS": "--video-fps",
	"Media.VideoWidth": "--video-width", "Media.VideoHeight": "--video-height", "Media.VideoSynthType": "--video-synth-type",
	"Media.VideoFormat": "--video-format", "Media.VideoCodec": "--video-codec",
	"Media.VideoAudioChannels": "--video-audio-num-channels", "Media.VideoAudioSampleRate": "--video-audio-sample-rate",
	"Media.VideoAudioDepth": "--video-audio-depth", "Media.VideoAudioCodec": "--video-audio-codec",
	"Trace.Columns.Image": "--image-column", "Trace.Columns.Audio": "--audio-column",
	"Media.MaxImagePixels": "--max-image-pixels", "Media.MaxMediaBytes": "--max-media-bytes",
	"Media.ImageSource": "--image-source", "Media.ImageSourceSampling": "--image-source-sampling",
}

func init() {
	for k, v := range mediaOptionFlags {
		optionFlag[k] = v
	}
}

// numberList parses "16,44.1" or "16 44.1" (AIPerf takes a list).
func numberList(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number; give numbers separated by commas (16,44.1)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// mustNumbers is numberList for a value its flag's Validator accepted.
func mustNumbers(s string) []float64 {
	v, _ := numberList(s)
	return v
}

func ints(vs []float64) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
		if float64(out[i]) != v {
			out[i] = -1 // not whole: validation names it
		}
	}
	return out
}
