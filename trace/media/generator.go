package media

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// SyntheticConfig describes the synthetic media of every request, in
// AIPerf's terms (its --image-*, --audio-* and --video-* flags). A
// modality with a batch size of 0, or a zero mean size or length, is not
// sent. The zero value sends nothing.
type SyntheticConfig struct {
	// Images per request, each WidthMean ± WidthStdDev by HeightMean ±
	// HeightStdDev pixels (normal draws, at least 1), in ImageFormat:
	// "png", "jpeg" or "random" (each image picks one; default "png").
	// ImageReuse sends the same image (the first of each batch slot) in
	// every request, for the server's encoder-cache-hit case.
	Images                             int
	ImageWidthMean, ImageWidthStdDev   float64
	ImageHeightMean, ImageHeightStdDev float64
	ImageFormat                        string
	ImageReuse                         bool
	// ImageSource is a directory of PNG, JPEG and GIF files (AIPerf's
	// --image-source): each image is a source file picked at random
	// (seeded; ImageSourceSampling "random", the only mode), resized to
	// the drawn size (the source's own size when the means are 0).
	ImageSource, ImageSourceSampling string
	// Audios per request, each AudioLengthMean ± AudioLengthStdDev
	// seconds long, in AudioFormat ("wav", "mp3" or "random"; default
	// "wav"), at a sample rate picked from AudioSampleRates (kHz, default
	// 16), a depth from AudioDepths (bits, default 16), with
	// AudioChannels channels (default 1).
	Audios                             int
	AudioLengthMean, AudioLengthStdDev float64
	AudioFormat                        string
	AudioSampleRates                   []float64
	AudioDepths                        []int
	AudioChannels                      int
	// Videos per request, made with ffmpeg: VideoDuration seconds at
	// VideoFPS frames per second, VideoWidth × VideoHeight, from the
	// VideoSynth source, in VideoFormat with VideoCodec.
	Videos                              int
	VideoDuration                       float64
	VideoFPS, VideoWidth, VideoHeight   int
	VideoSynth, VideoFormat, VideoCodec string
	// VideoAudioChannels (0: none, 1 or 2) give each video an audio
	// track of its length at VideoAudioSampleRate (Hz, or kHz below 1000
	// as AIPerf takes both; default 44100), VideoAudioDepth bits
	// (default 16), encoded with VideoAudioCodec (default aac in mp4,
	// libvorbis in webm).
	VideoAudioChannels   int
	VideoAudioSampleRate float64
	VideoAudioDepth      int
	VideoAudioCodec      string
}

// Defaults of a synthetic video's audio track (AIPerf's).
const (
	DefaultVideoAudioSampleRate = 44100
	DefaultVideoAudioDepth      = 16
)

// videoAudio is c's audio track as [VideoSpec] takes it.
func (c *SyntheticConfig) videoAudio() VideoAudio {
	rate := c.VideoAudioSampleRate
	if rate == 0 {
		rate = DefaultVideoAudioSampleRate
	} else if rate < 1000 {
		rate *= 1000 // kHz, as AIPerf's 44.1
	}
	depth := c.VideoAudioDepth
	if depth == 0 {
		depth = DefaultVideoAudioDepth
	}
	return VideoAudio{SampleRate: int(math.Round(rate)), Depth: depth, Channels: c.VideoAudioChannels, Codec: c.VideoAudioCodec}
}

// Enabled reports whether any request carries synthetic media.
func (c *SyntheticConfig) Enabled() bool {
	return c.imagesOn() ||
		c.Audios > 0 && c.AudioLengthMean > 0 ||
		c.Videos > 0 && c.VideoDuration > 0
}

func (c *SyntheticConfig) imagesOn() bool {
	return c.Images > 0 && (c.ImageWidthMean > 0 && c.ImageHeightMean > 0 || c.ImageSource != "")
}

// Problems calls bad for every invalid field of c, with the flag it came
// from.
func (c *SyntheticConfig) Problems(bad func(field, format string, args ...any)) {
	if c.Images < 0 || c.Audios < 0 || c.Videos < 0 {
		bad("Images", "the image, audio and video batch sizes %d, %d, %d must not be negative", c.Images, c.Audios, c.Videos)
	}
	for _, v := range []float64{c.ImageWidthMean, c.ImageWidthStdDev, c.ImageHeightMean, c.ImageHeightStdDev, c.AudioLengthMean, c.AudioLengthStdDev, c.VideoDuration} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			bad("ImageWidthMean", "image sizes, audio lengths and video durations must be finite and ≥ 0 (got %v)", v)
			break
		}
	}
	if c.ImageWidthMean*c.ImageHeightMean > DefaultMaxPixels {
		bad("ImageWidthMean", "a %v×%v image is more than %d pixels", c.ImageWidthMean, c.ImageHeightMean, DefaultMaxPixels)
	}
	switch c.ImageFormat {
	case "", "png", "jpeg", "jpg", "random":
	default:
		bad("ImageFormat", "image format %q: want png, jpeg or random", c.ImageFormat)
	}
	if c.ImageSourceSampling != "" && c.ImageSourceSampling != "random" {
		bad("ImageSourceSampling", "image source sampling %q: want random (each image picks a source file, seeded)", c.ImageSourceSampling)
	}
	switch c.AudioFormat {
	case "", "wav", "mp3", "random":
	default:
		bad("AudioFormat", "audio format %q: want wav, mp3 or random", c.AudioFormat)
	}
	if c.AudioLengthMean > MaxAudio.Seconds() {
		bad("AudioLengthMean", "audio of %v s: at most %v", c.AudioLengthMean, MaxAudio.Seconds())
	}
	for _, r := range c.AudioSampleRates {
		if !(r >= 1 && r <= 384) {
			bad("AudioSampleRates", "audio sample rate %v kHz: want 1 to 384 (kHz, as AIPerf: 16 is 16000 Hz)", r)
		}
	}
	for _, d := range c.AudioDepths {
		if d != 8 && d != 16 && d != 24 && d != 32 {
			bad("AudioDepths", "audio depth %d bits: want 8, 16, 24 or 32", d)
		}
	}
	if c.AudioChannels < 0 || c.AudioChannels > 8 {
		bad("AudioChannels", "audio channels %d: want 1 to 8", c.AudioChannels)
	}
	switch c.VideoFormat {
	case "", "mp4", "webm":
	default:
		bad("VideoFormat", "video format %q: want mp4 or webm", c.VideoFormat)
	}
	c.videoAudioProblems(bad)
}

// videoAudioProblems checks the video audio track's fields.
func (c *SyntheticConfig) videoAudioProblems(bad func(field, format string, args ...any)) {
	if c.VideoAudioChannels < 0 || c.VideoAudioChannels > 2 {
		bad("VideoAudioChannels", "video audio channels %d: want 0 (no audio track), 1 or 2", c.VideoAudioChannels)
		return
	}
	a := c.videoAudio()
	if r := c.VideoAudioSampleRate; r != 0 && !(a.SampleRate >= 8000 && a.SampleRate <= 96000) {
		bad("VideoAudioSampleRate", "video audio sample rate %v: want 8000 to 96000 Hz (or 8 to 96 kHz)", r)
	}
	switch a.Depth {
	case 8, 16, 24, 32:
	default:
		bad("VideoAudioDepth", "video audio depth %d bits: want 8, 16, 24 or 32", a.Depth)
	}
	if a.Channels == 0 {
		if c.VideoAudioCodec != "" {
			bad("VideoAudioCodec", "video audio codec %q without an audio track: set the video audio channels to 1 or 2", c.VideoAudioCodec)
		}
		return
	}
	format := c.VideoFormat
	if format == "" {
		format = "mp4"
	}
	if _, err := a.codec(format); err != nil && a.SampleRate >= 8000 && a.SampleRate <= 96000 {
		bad("VideoAudioCodec", "%v", err)
	}
}

// Generator makes the synthetic media of each request from a run seed.
// It is safe for concurrent use. Each distinct item is encoded once and
// kept (with its rendered content parts) while it is among the last
// cacheSize made, so building a request never encodes an item twice and
// --image-reuse encodes one image per batch slot for the whole run.
type Generator struct {
	cfg  SyntheticConfig
	seed uint64

	mu    sync.Mutex
	cache map[itemKey]*Part
	order []itemKey
	// encodes counts the items made (TestGeneratorEncodesOnce).
	encodes atomic.Int64
	// srcs are ImageSource's images, decoded once.
	srcOnce sync.Once
	srcs    []image.Image
	srcErr  error
}

// cacheSize bounds the items a Generator keeps.
const cacheSize = 256

type itemKey struct {
	kind Kind
	seed uint64
}

// Part is one item with its content parts rendered once: Chat is the
// OpenAI chat content part, Responses the Responses API input part. A
// Part is immutable and shared: callers must not modify it.
type Part struct {
	Item      Item
	Chat      []byte
	Responses []byte
}

// NewPart renders it's content parts.
func NewPart(it Item) *Part {
	return &Part{Item: it, Chat: AppendChatPart(nil, &it), Responses: AppendResponsesPart(nil, &it)}
}

// NewGenerator returns a generator for cfg with the run's seed.
func NewGenerator(cfg SyntheticConfig, seed uint64) *Generator {
	if cfg.ImageFormat == "" {
		cfg.ImageFormat = "png"
	}
	if cfg.AudioFormat == "" {
		cfg.AudioFormat = "wav"
	}
	if len(cfg.AudioSampleRates) == 0 {
		cfg.AudioSampleRates = []float64{16}
	}
	if len(cfg.AudioDepths) == 0 {
		cfg.AudioDepths = []int{16}
	}
	if cfg.AudioChannels == 0 {
		cfg.AudioChannels = 1
	}
	if cfg.VideoFPS == 0 {
		cfg.VideoFPS = 4
	}
	if cfg.VideoWidth == 0 {
		cfg.VideoWidth = 640
	}
	if cfg.VideoHeight == 0 {
		cfg.VideoHeight = 480
	}
	return &Generator{cfg: cfg, seed: seed, cache: map[itemKey]*Part{}}
}

// Request appends the media of request i (images, then audio, then
// videos) to dst. The same seed and i give the same parts.
func (g *Generator) Request(dst []*Part, i uint64) ([]*Part, error) {
	c := &g.cfg
	if c.imagesOn() {
		for k := range c.Images {
			p, err := g.item(Image, g.itemSeed(Image, i, k, c.ImageReuse))
			if err != nil {
				return dst, err
			}
			dst = append(dst, p)
		}
	}
	if c.Audios > 0 && c.AudioLengthMean > 0 {
		for k := range c.Audios {
			p, err := g.item(Audio, g.itemSeed(Audio, i, k, false))
			if err != nil {
				return dst, err
			}
			dst = append(dst, p)
		}
	}
	if c.Videos > 0 && c.VideoDuration > 0 {
		for k := range c.Videos {
			p, err := g.item(Video, g.itemSeed(Video, i, k, false))
			if err != nil {
				return dst, err
			}
			dst = append(dst, p)
		}
	}
	return dst, nil
}

// Encodes reports how many items g has made (drawn and encoded) so far:
// one per distinct item while it stays among the last cacheSize made, so
// building a request that repeats an item encodes nothing.
func (g *Generator) Encodes() int64 { return g.encodes.Load() }

// itemSeed is the seed of request i's k-th item of kind kind; with reuse,
// every request's k-th item is the same.
func (g *Generator) itemSeed(kind Kind, i uint64, k int, reuse bool) uint64 {
	if reuse {
		i = 0
	}
	x := g.seed ^ (uint64(kind)+1)*0x9E3779B97F4A7C15 ^ i*0xBF58476D1CE4E5B9 ^ uint64(k)*0x94D049BB133111EB
	x ^= x >> 31
	x *= 0xD6E8FEB86659FD93
	return x ^ x>>32
}

func (g *Generator) item(kind Kind, seed uint64) (*Part, error) {
	key := itemKey{kind, seed}
	g.mu.Lock()
	p := g.cache[key]
	g.mu.Unlock()
	if p != nil {
		return p, nil
	}
	it, err := g.make(kind, seed)
	if err != nil {
		return nil, err
	}
	g.encodes.Add(1)
	p = NewPart(it)
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.cache[key]; q != nil {
		return q, nil // made twice at once; keep the first
	}
	if len(g.order) >= cacheSize {
		delete(g.cache, g.order[0])
		g.order = g.order[1:]
	}
	g.cache[key] = p
	g.order = append(g.order, key)
	return p, nil
}

// make draws and encodes one item from its seed.
func (g *Generator) make(kind Kind, seed uint64) (Item, error) {
	c := &g.cfg
	rng := rand.New(rand.NewPCG(seed, 0x64726177)) // "draw"
	draw := func(mean, std float64) float64 {
		if std > 0 {
			return mean + std*rng.NormFloat64()
		}
		return mean
	}
	switch kind {
	case Image:
		w := max(1, int(math.Round(draw(c.ImageWidthMean, c.ImageWidthStdDev))))
		h := max(1, int(math.Round(draw(c.ImageHeightMean, c.ImageHeightStdDev))))
		for int64(w)*int64(h) > DefaultMaxPixels { // a far tail draw
			w, h = max(1, w/2), max(1, h/2)
		}
		f := c.ImageFormat
		if f == "random" {
			f = [...]string{"png", "jpeg"}[rng.IntN(2)]
		}
		if c.ImageSource != "" {
			g.srcOnce.Do(func() { g.srcs, g.srcErr = loadSources(c.ImageSource) })
			if g.srcErr != nil {
				return Item{}, g.srcErr
			}
			if c.ImageWidthMean == 0 || c.ImageHeightMean == 0 {
				w, h = 0, 0
			}
			return sourceImage(g.srcs[rng.IntN(len(g.srcs))], w, h, f)
		}
		return SynthImage(ImageSpec{Width: w, Height: h, Format: f, Seed: seed})
	case Audio:
		sec := draw(c.AudioLengthMean, c.AudioLengthStdDev)
		d := max(time.Millisecond, min(MaxAudio, time.Duration(sec*float64(time.Second))))
		f := c.AudioFormat
		if f == "random" {
			f = [...]string{"wav", "mp3"}[rng.IntN(2)]
		}
		rate := int(math.Round(c.AudioSampleRates[rng.IntN(len(c.AudioSampleRates))] * 1000))
		depth := c.AudioDepths[rng.IntN(len(c.AudioDepths))]
		return SynthAudio(AudioSpec{Duration: d, Format: f, SampleRate: rate, Depth: depth, Channels: c.AudioChannels, Seed: seed})
	case Video:
		return SynthVideo(VideoSpec{Width: c.VideoWidth, Height: c.VideoHeight, FPS: c.VideoFPS,
			Duration: time.Duration(c.VideoDuration * float64(time.Second)), Synth: c.VideoSynth, Format: c.VideoFormat, Codec: c.VideoCodec, Seed: seed,
			Audio: c.videoAudio()})
	}
	return Item{}, fmt.Errorf("media kind %d", kind)
}
