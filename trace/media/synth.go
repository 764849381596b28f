package media

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// ImageSpec is one synthetic image: its size, format and seed.
type ImageSpec struct {
	Width, Height int
	Format        string // "png" or "jpeg"
	Seed          uint64
}

// JPEGQuality is the quality synthetic JPEGs are encoded at.
const JPEGQuality = 90

// SynthImage draws and encodes the image spec describes. The same spec
// gives the same bytes. The picture is a seeded smooth field of colours
// with a few seeded rectangles and fine grain, so that images differ in
// content (an encoder cache keyed by pixels cannot short-cut them) yet
// compress like a picture, not like noise.
func SynthImage(s ImageSpec) (Item, error) {
	if s.Width < 1 || s.Height < 1 || int64(s.Width)*int64(s.Height) > DefaultMaxPixels {
		return Item{}, fmt.Errorf("synthetic image %d×%d: want 1 to %d pixels", s.Width, s.Height, DefaultMaxPixels)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x696d616765)) // "image"
	img := image.NewNRGBA(image.Rect(0, 0, s.Width, s.Height))
	var fx, fy, ph [3]float64
	for c := range 3 {
		fx[c] = (0.5 + 4*rng.Float64()) * 2 * math.Pi / float64(s.Width)
		fy[c] = (0.5 + 4*rng.Float64()) * 2 * math.Pi / float64(s.Height)
		ph[c] = 2 * math.Pi * rng.Float64()
	}
	// A row of sines per channel, so the field costs one add per pixel.
	sx := make([][3]float64, s.Width)
	for x := range sx {
		for c := range 3 {
			sx[x][c] = math.Sin(fx[c]*float64(x) + ph[c])
		}
	}
	grain := rng.Uint64() | 1
	for y := range s.Height {
		var sy [3]float64
		for c := range 3 {
			sy[c] = math.Cos(fy[c] * float64(y))
		}
		row := img.Pix[y*img.Stride:]
		for x := range s.Width {
			grain ^= grain << 13
			grain ^= grain >> 7
			grain ^= grain << 17
			for c := range 3 {
				v := 127.5 + 60*(sx[x][c]+sy[c]) + float64(grain>>(8*c)&7)
				row[4*x+c] = uint8(max(0, min(255, v)))
			}
			row[4*x+3] = 255
		}
	}
	for range 3 + rng.IntN(4) {
		r := image.Rect(rng.IntN(s.Width), rng.IntN(s.Height), rng.IntN(s.Width+1), rng.IntN(s.Height+1)).Canon()
		col := color.NRGBA{uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetNRGBA(x, y, col)
			}
		}
	}
	return encodeImage(img, s.Format)
}

// encodeImage encodes img as an Item of format png or jpeg (jpg): PNG at
// its fastest compression, JPEG at JPEGQuality.
func encodeImage(img *image.NRGBA, format string) (Item, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	case "jpeg", "jpg":
		format = "jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: JPEGQuality})
	default:
		return Item{}, fmt.Errorf("%w: image format %q (want png or jpeg)", ErrFormat, format)
	}
	if err != nil {
		return Item{}, err
	}
	b := img.Bounds()
	return Item{Kind: Image, Format: format, Data: buf.Bytes(), Width: b.Dx(), Height: b.Dy()}, nil
}

// AudioSpec is one synthetic clip.
type AudioSpec struct {
	Duration   time.Duration
	Format     string // "wav" or "mp3"
	SampleRate int    // Hz
	Depth      int    // bits: 8, 16, 24, 32 (WAV)
	Channels   int
	Seed       uint64
}

// MaxAudio bounds a synthetic clip's length.
const MaxAudio = 10 * time.Minute

// SynthAudio makes the clip spec describes: a few seeded tones with a
// little seeded noise. WAV is written in Go; MP3 is the same WAV encoded
// by ffmpeg (ErrNoFFmpeg without it). The same spec gives the same bytes
// (for MP3, with the same ffmpeg).
func SynthAudio(s AudioSpec) (Item, error) {
	if s.Duration <= 0 || s.Duration > MaxAudio {
		return Item{}, fmt.Errorf("synthetic audio of %v: want more than 0 and at most %v", s.Duration, MaxAudio)
	}
	if s.SampleRate < 1000 || s.SampleRate > 384000 {
		return Item{}, fmt.Errorf("audio sample rate %d Hz: want 1000 to 384000", s.SampleRate)
	}
	switch s.Depth {
	case 8, 16, 24, 32:
	default:
		return Item{}, fmt.Errorf("audio depth %d bits: want 8, 16, 24 or 32", s.Depth)
	}
	if s.Channels < 1 || s.Channels > 8 {
		return Item{}, fmt.Errorf("audio channels %d: want 1 to 8", s.Channels)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x617564696f)) // "audio"
	var freq, amp [3]float64
	for i := range freq {
		freq[i] = 2 * math.Pi * (110 + 880*rng.Float64()) / float64(s.SampleRate)
		amp[i] = 0.1 + 0.2*rng.Float64()
	}
	noise := rng.Uint64() | 1
	frames := int64(s.Duration) * int64(s.SampleRate) / int64(time.Second)
	wav := AppendWAV(nil, s.SampleRate, s.Depth, s.Channels, frames, func(i int64, c int) float64 {
		noise ^= noise << 13
		noise ^= noise >> 7
		noise ^= noise << 17
		v := float64(int64(noise>>40)-1<<23) / (1 << 23) * 0.02
		for k := range freq {
			v += amp[k] * math.Sin(freq[k]*float64(i)+float64(c))
		}
		return v
	})
	it := Item{Kind: Audio, Format: "wav", Data: wav, SampleRate: s.SampleRate, Depth: s.Depth, Channels: s.Channels,
		Duration: time.Duration(frames * int64(time.Second) / int64(s.SampleRate))}
	switch s.Format {
	case "wav":
		return it, nil
	case "mp3":
		mp3, err := ffmpeg(wav, "-f", "wav", "-i", "pipe:0", "-map_metadata", "-1", "-fflags", "+bitexact", "-f", "mp3", "pipe:1")
		if err != nil {
			return Item{}, err
		}
		d, _, _, err := mp3Duration(mp3)
		if err != nil {
			return Item{}, fmt.Errorf("ffmpeg's MP3: %w", err)
		}
		return Item{Kind: Audio, Format: "mp3", Data: mp3, SampleRate: s.SampleRate, Channels: s.Channels, Duration: d}, nil
	}
	return Item{}, fmt.Errorf("%w: audio format %q (want wav or mp3)", ErrFormat, s.Format)
}

// VideoSpec is one synthetic video, made by ffmpeg.
type VideoSpec struct {
	Width, Height int
	FPS           int
	Duration      time.Duration
	// Synth is ffmpeg's lavfi source: "testsrc", "testsrc2", "smptebars",
	// "mandelbrot", "rgbtestsrc" (default "testsrc2").
	Synth  string
	Format string // "mp4" or "webm"
	Codec  string // ffmpeg encoder; default libx264 (mp4), libvpx-vp9 (webm)
	Seed   uint64
	// Audio, when its Channels is 1 or 2, is muxed in as an audio track
	// of the video's length (AIPerf's --video-audio-*).
	Audio VideoAudio
}

// VideoAudio is a synthetic video's audio track: the seeded tones and
// noise of [SynthAudio] at SampleRate Hz, Depth bits and Channels (0: no
// track), encoded by ffmpeg's Codec: "aac" (mp4's default), "libvorbis"
// (webm's default) or "libopus" (either; 8, 12, 16, 24 or 48 kHz).
type VideoAudio struct {
	SampleRate, Depth, Channels int
	Codec                       string
}

// codec checks a against the container format and returns its encoder.
func (a VideoAudio) codec(format string) (string, error) {
	c := a.Codec
	if format == "" {
		format = "mp4"
	}
	if c == "" {
		c = map[string]string{"mp4": "aac", "webm": "libvorbis"}[format]
	}
	switch {
	case a.Channels < 1 || a.Channels > 2:
		return "", fmt.Errorf("video audio channels %d: want 1 or 2 (0: no audio track)", a.Channels)
	case a.SampleRate < 8000 || a.SampleRate > 96000:
		return "", fmt.Errorf("video audio sample rate %d Hz: want 8000 to 96000", a.SampleRate)
	case c == "libopus":
		switch a.SampleRate {
		case 8000, 12000, 16000, 24000, 48000:
		default:
			return "", fmt.Errorf("%w: libopus encodes at 8, 12, 16, 24 or 48 kHz, not %d Hz", ErrFormat, a.SampleRate)
		}
	case c == "aac" && format == "mp4", c == "libvorbis" && format == "webm":
	default:
		return "", fmt.Errorf("%w: video audio codec %q in %s (want aac or libopus in mp4, libvorbis or libopus in webm)", ErrFormat, c, format)
	}
	return c, nil
}

// SynthVideo makes the video spec describes with ffmpeg (ErrNoFFmpeg
// without it). The seed shifts the source's start frame, so videos of
// different seeds differ.
func SynthVideo(s VideoSpec) (Item, error) {
	if s.Width < 16 || s.Height < 16 || s.Width > 4096 || s.Height > 4096 || s.FPS < 1 || s.FPS > 240 || s.Duration <= 0 || s.Duration > MaxAudio {
		return Item{}, fmt.Errorf("synthetic video %d×%d at %d fps for %v: want 16 to 4096 pixels a side, 1 to 240 fps, at most %v", s.Width, s.Height, s.FPS, s.Duration, MaxAudio)
	}
	synth := s.Synth
	if synth == "" {
		synth = "testsrc2"
	}
	switch synth {
	case "testsrc", "testsrc2", "smptebars", "mandelbrot", "rgbtestsrc":
	default:
		return Item{}, fmt.Errorf("%w: video synthesis %q (want testsrc, testsrc2, smptebars, mandelbrot or rgbtestsrc)", ErrFormat, synth)
	}
	codec, muxer := s.Codec, s.Format
	switch s.Format {
	case "mp4", "":
		muxer = "mp4"
		if codec == "" {
			codec = "libx264"
		}
	case "webm":
		if codec == "" {
			codec = "libvpx-vp9"
		}
	default:
		return Item{}, fmt.Errorf("%w: video format %q (want mp4 or webm)", ErrFormat, s.Format)
	}
	// The select filter drops the first frames, so the source runs longer.
	src := fmt.Sprintf("%s=size=%dx%d:rate=%d:duration=%s", synth, s.Width, s.Height, s.FPS,
		strconv.FormatFloat(s.Duration.Seconds()+float64(s.Seed%1000)/float64(s.FPS)+1, 'f', -1, 64))
	skip := strconv.FormatUint(s.Seed%1000, 10)
	args := []string{"-f", "lavfi", "-i", src}
	var wav []byte
	if s.Audio.Channels != 0 {
		acodec, err := s.Audio.codec(muxer)
		if err != nil {
			return Item{}, err
		}
		a, err := SynthAudio(AudioSpec{Duration: s.Duration, Format: "wav", SampleRate: s.Audio.SampleRate, Depth: s.Audio.Depth, Channels: s.Audio.Channels, Seed: s.Seed})
		if err != nil {
			return Item{}, fmt.Errorf("video audio track: %w", err)
		}
		wav = a.Data
		args = append(args, "-f", "wav", "-i", "pipe:0", "-map", "0:v", "-map", "1:a", "-c:a", acodec,
			"-ar", strconv.Itoa(s.Audio.SampleRate), "-ac", strconv.Itoa(s.Audio.Channels))
	}
	args = append(args, "-vf", "select=gte(n\\,"+skip+"),setpts=N/FRAME_RATE/TB",
		"-t", strconv.FormatFloat(s.Duration.Seconds(), 'f', -1, 64), "-c:v", codec, "-pix_fmt", "yuv420p",
		"-map_metadata", "-1", "-fflags", "+bitexact", "-threads", "1")
	out, err := ffmpegVideo(wav, muxer, args)
	if err != nil {
		return Item{}, err
	}
	it, err := videoItem(muxer, out)
	if err != nil {
		return Item{}, fmt.Errorf("ffmpeg's %s: %w", muxer, err)
	}
	it.Width, it.Height = s.Width, s.Height
	return it, nil
}

// ffmpegVideo runs ffmpeg's video args with stdin (the audio track's WAV
// or nil) and returns the muxed video. A silent MP4 is fragmented so that
// it streams to a pipe; an MP4 with audio is written to a temporary file
// instead, since only a whole MP4's edit list says how many of the first
// AAC samples are encoder priming (a fragmented one gives the first
// sample a made-up duration) and so its audio length.
func ffmpegVideo(stdin []byte, muxer string, args []string) ([]byte, error) {
	if muxer != "mp4" {
		return ffmpeg(stdin, append(args, "-f", muxer, "pipe:1")...)
	}
	if stdin == nil {
		return ffmpeg(nil, append(args, "-movflags", "frag_keyframe+empty_moov", "-f", muxer, "pipe:1")...)
	}
	dir, err := os.MkdirTemp("", "reprise-video-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "v.mp4")
	if _, err := ffmpeg(stdin, append(args, "-movflags", "+faststart", "-f", muxer, name)...); err != nil {
		return nil, err
	}
	return os.ReadFile(name)
}

// ffmpeg runs ffmpeg with args, stdin as its input, and returns stdout.
func ffmpeg(stdin []byte, args ...string) ([]byte, error) {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, ErrNoFFmpeg
	}
	pre := []string{"-hide_banner", "-loglevel", "error"}
	if stdin == nil {
		pre = append(pre, "-nostdin")
	}
	cmd := exec.Command(bin, append(pre, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ffmpeg %v: %v: %s", args, err, bytes.TrimSpace(errb.Bytes()))
	}
	return out.Bytes(), nil
}
