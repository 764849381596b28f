package reprise

import (
	"os"
	"time"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/mediagen"
)

// Defaults of [GenerationOptions].
const (
	// DefaultTranscribeSeconds is the length of the synthetic clip a
	// transcription run uploads when no audio file is given.
	DefaultTranscribeSeconds = 5.0
	// DefaultTranscribeSampleRate is that clip's sample rate
	// (Whisper's).
	DefaultTranscribeSampleRate = 16000
	// DefaultJobPollInterval is the wait between two status polls of a
	// video job.
	DefaultJobPollInterval = engine.DefaultJobPollInterval
	// DefaultJobTimeout bounds a video job from submit to done.
	DefaultJobTimeout = engine.DefaultJobTimeout
)

// GenerationOptions configure the generation endpoints of design 0023:
// image_generation, video_generation, transcription and speech. Their
// request options (size, n, partial_images, quality, seconds, voice,
// response_format, …) are the native endpoint's string options
// (AdapterOptions.Config), passed on as the API's fields.
type GenerationOptions struct {
	// RequestContentType is the body type of a video submit:
	// "application/json" (the default, "") or "multipart/form-data"
	// (AIPerf's --request-content-type).
	RequestContentType string
	// DownloadVideo downloads each done video's content; its time is in
	// the request's latency and recorded apart (job_download_ns).
	DownloadVideo bool
	// JobPollInterval is the wait between two status polls of a video
	// job; JobTimeout bounds a job from its submit to done (0 = none):
	// a job not done by then fails as a timeout.
	JobPollInterval time.Duration
	JobTimeout      time.Duration
	// AudioFile is a PCM WAV file every transcription request uploads;
	// "" uploads a synthetic clip of TranscribeSeconds (seeded by the run
	// seed, made once).
	AudioFile         string
	TranscribeSeconds float64
}

// generationSetup checks o's generation options against the endpoint a
// and returns the adapter to use (a transcription adapter gets its clip)
// and the engine settings. Problems go to bad, each naming the option
// (and the file) at fault; nothing is sent before they are fixed.
func generationSetup(o *Options, a adapter.Adapter, ec *engine.Config, ac *adapter.Config, bad func(field, format string, args ...any)) adapter.Adapter {
	g := &o.Generation
	kind := adapter.KindGenerate
	if a != nil {
		kind = a.Info().Kind
	}
	switch g.RequestContentType {
	case "", "application/json":
	case "multipart/form-data":
		if kind != adapter.KindVideo && kind != adapter.KindTranscription && a != nil {
			bad("Generation.RequestContentType", "{Generation.RequestContentType} multipart/form-data: only video_generation sends forms (transcription always does); {Endpoint} %q sends JSON", o.Endpoint)
		}
	default:
		bad("Generation.RequestContentType", "{Generation.RequestContentType} %q: want application/json or multipart/form-data", g.RequestContentType)
	}
	if g.JobPollInterval <= 0 {
		bad("Generation.JobPollInterval", "{Generation.JobPollInterval} %v: want a positive wait between polls, e.g. 1s", g.JobPollInterval)
	}
	if g.JobTimeout < 0 {
		bad("Generation.JobTimeout", "{Generation.JobTimeout} %v: must not be negative (0 = no bound)", g.JobTimeout)
	}
	if g.DownloadVideo && kind != adapter.KindVideo && a != nil {
		bad("Generation.DownloadVideo", "{Generation.DownloadVideo}: only video_generation has content to download; {Endpoint} is %q", o.Endpoint)
	}
	ec.JobPollInterval, ec.JobTimeout, ec.JobDownload = g.JobPollInterval, g.JobTimeout, g.DownloadVideo
	if kind == adapter.KindVideo && g.RequestContentType != "" {
		if ac.Options == nil {
			ac.Options = map[string]string{}
		}
		ac.Options[mediagen.OptContentType] = g.RequestContentType
	}
	if kind != adapter.KindTranscription {
		if g.AudioFile != "" {
			bad("Generation.AudioFile", "{Generation.AudioFile} %s: only the transcription endpoint uploads audio; {Endpoint} is %q", g.AudioFile, o.Endpoint)
		}
		return a
	}
	ma, ok := a.(mediagen.Adapter)
	if !ok {
		return a
	}
	if g.AudioFile != "" {
		b, err := os.ReadFile(g.AudioFile)
		if err != nil {
			bad("Generation.AudioFile", "{Generation.AudioFile}: %v", err)
			return a
		}
		w, err := mediagen.ParseWAV(b)
		if err != nil {
			bad("Generation.AudioFile", "{Generation.AudioFile} %s: byte 0: %v; give a PCM WAV file (ffmpeg -i in.mp3 -ar 16000 -ac 1 out.wav)", g.AudioFile, err)
			return a
		}
		if w.Duration <= 0 {
			bad("Generation.AudioFile", "{Generation.AudioFile} %s: the data chunk holds no samples", g.AudioFile)
			return a
		}
		ma.Clip = w
		return ma
	}
	if !(g.TranscribeSeconds > 0 && g.TranscribeSeconds <= 3600) {
		bad("Generation.TranscribeSeconds", "{Generation.TranscribeSeconds} %v: want more than 0 and at most 3600 seconds", g.TranscribeSeconds)
		return a
	}
	w, err := mediagen.SynthWAV(time.Duration(g.TranscribeSeconds*float64(time.Second)), DefaultTranscribeSampleRate, o.Replay.Seed)
	if err != nil {
		bad("Generation.TranscribeSeconds", "{Generation.TranscribeSeconds}: %v", err)
		return a
	}
	ma.Clip = w
	return ma
}
