package mediagen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// This file holds the minimal WAV support the speech endpoints need: a
// writer for the synthetic transcription clip and a header reader for the
// duration of speech output. internal/media (issue 34, the inputs half)
// has the general one; the two are to be unified.

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
	n := int(int64(d) * int64(sampleRate) / int64(time.Second))
	b := make([]byte, 44, 44+2*n)
	putHeader(b, sampleRate, 1, 16, 2*n)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	freq := 220 + float64(seed%440)
	for i := range n {
		v := 0.3*math.Sin(2*math.Pi*freq*float64(i)/float64(sampleRate)) + 0.05*(rng.Float64()*2-1)
		b = binary.LittleEndian.AppendUint16(b, uint16(int16(v*math.MaxInt16)))
	}
	return ParseWAV(b)
}

func putHeader(b []byte, rate, ch, bits, dataLen int) {
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+dataLen))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], uint16(ch))
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*ch*bits/8))
	binary.LittleEndian.PutUint16(b[32:], uint16(ch*bits/8))
	binary.LittleEndian.PutUint16(b[34:], uint16(bits))
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(dataLen))
}

// errNotWAV is what ParseWAV says of bytes that are no PCM WAV file.
var errNotWAV = errors.New("not a PCM WAV file (want RIFF/WAVE with a fmt and a data chunk)")

// ParseWAV reads a PCM WAV file's header. The data chunk may be shorter
// than its header says (a clip cut short); Duration is of the bytes
// present. It never panics (FuzzParseWAV).
func ParseWAV(b []byte) (*WAV, error) {
	hdr, err := parseWAVHeader(b)
	if err != nil {
		return nil, err
	}
	w := *hdr
	w.Data = b
	w.Duration = pcmDuration(int64(len(b)-hdr.dataOff), w.SampleRate, w.Channels, w.Bits)
	return &w.WAV, nil
}

type wavHeader struct {
	WAV
	dataOff int // offset of the data chunk's first byte
}

// parseWAVHeader reads the header of b up to the data chunk.
func parseWAVHeader(b []byte) (*wavHeader, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, errNotWAV
	}
	var h wavHeader
	fmtSeen := false
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int64(binary.LittleEndian.Uint32(b[off+4:]))
		body := off + 8
		switch id {
		case "fmt ":
			if size < 16 || int64(body)+16 > int64(len(b)) {
				return nil, fmt.Errorf("%w: fmt chunk of %d bytes", errNotWAV, size)
			}
			if f := binary.LittleEndian.Uint16(b[body:]); f != 1 && f != 0xFFFE {
				return nil, fmt.Errorf("WAV format code %d: want PCM (1)", f)
			}
			h.Channels = int(binary.LittleEndian.Uint16(b[body+2:]))
			h.SampleRate = int(binary.LittleEndian.Uint32(b[body+4:]))
			h.Bits = int(binary.LittleEndian.Uint16(b[body+14:]))
			if h.Channels < 1 || h.SampleRate < 1 || h.Bits < 8 || h.Bits%8 != 0 {
				return nil, fmt.Errorf("WAV header: %d channels, %d Hz, %d bits: not a playable PCM clip", h.Channels, h.SampleRate, h.Bits)
			}
			fmtSeen = true
		case "data":
			if !fmtSeen {
				return nil, fmt.Errorf("%w: data chunk before fmt", errNotWAV)
			}
			h.dataOff = body
			return &h, nil
		}
		next := int64(body) + size + size&1
		if next > int64(len(b)) {
			break
		}
		off = int(next)
	}
	return nil, fmt.Errorf("%w: no data chunk", errNotWAV)
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
