package mediagen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/reprise-bench/reprise/trace/media"
)

// The speech endpoints' WAV: the synthetic transcription clip and the
// duration of speech output, through trace/media's writer and header
// reader (the mock server keeps a reader of its own, so that its truth
// does not share the client's bugs).

// WAV is a PCM WAV clip: its bytes and what its header says.
type WAV struct {
	Data       []byte // the whole file
	SampleRate int
	Channels   int
	Bits       int
	Duration   time.Duration
}

// SynthWAV returns a deterministic mono 16-bit PCM WAV clip of d at
// sampleRate: a tone with seeded noise, the same bytes for the same
// arguments.
func SynthWAV(d time.Duration, sampleRate int, seed uint64) (*WAV, error) {
	if sampleRate < 1000 || sampleRate > 192000 {
		return nil, fmt.Errorf("sample rate %d Hz: want 1000 to 192000", sampleRate)
	}
	if d <= 0 || d > time.Hour {
		return nil, fmt.Errorf("audio length %v: want more than 0 and at most 1h", d)
	}
	n := int64(d) * int64(sampleRate) / int64(time.Second)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	freq := 220 + float64(seed%440)
	b := media.AppendWAV(make([]byte, 0, 44+2*n), sampleRate, 16, 1, n, func(i int64, _ int) float64 {
		return 0.3*math.Sin(2*math.Pi*freq*float64(i)/float64(sampleRate)) + 0.05*(rng.Float64()*2-1)
	})
	return ParseWAV(b)
}

// ParseWAV reads a PCM WAV file's header. The data chunk may be shorter
// than its header says (a clip cut short); Duration is of the bytes
// present. It never panics (FuzzParseWAV).
func ParseWAV(b []byte) (*WAV, error) {
	h, off, _, err := media.ParseWAVHeader(b)
	if err != nil {
		return nil, fmt.Errorf("not a PCM WAV file: %w", err)
	}
	return &WAV{Data: b, SampleRate: h.SampleRate, Channels: h.Channels, Bits: h.Depth,
		Duration: pcmDuration(int64(len(b)-off), h.SampleRate, h.Channels, h.Depth)}, nil
}

// pcmDuration is the duration of n bytes of PCM.
func pcmDuration(n int64, rate, ch, bits int) time.Duration {
	frame := int64(ch * bits / 8)
	if n <= 0 || frame <= 0 || rate <= 0 {
		return 0
	}
	frames := n / frame
	return time.Duration(frames * int64(time.Second) / int64(rate))
}
