package media

import (
	"encoding/binary"
	"fmt"
	"time"
)

// WAV is the format of a PCM WAV clip.
type WAV struct {
	SampleRate int // Hz
	Depth      int // bits per sample: 8, 16, 24 or 32
	Channels   int
	Float      bool // IEEE float samples (format 3), else integer PCM
	// Frames is the number of sample frames in the data chunk; Duration
	// is Frames / SampleRate.
	Frames   int64
	Duration time.Duration
}

// ParseWAV reads a RIFF/WAVE header: the fmt chunk and the data chunk's
// length, which the file must hold. It never panics (FuzzProbe).
func ParseWAV(d []byte) (WAV, error) {
	w, off, n, err := ParseWAVHeader(d)
	if err != nil {
		return WAV{}, err
	}
	if n > int64(len(d)-off) {
		return WAV{}, fmt.Errorf("%w wav: data chunk says %d bytes, the file has %d (truncated?)", ErrCorrupt, n, len(d)-off)
	}
	w.Frames = n / int64(w.Channels*w.Depth/8)
	w.Duration = time.Duration(w.Frames * int64(time.Second) / int64(w.SampleRate))
	return w, nil
}

// ParseWAVHeader reads a RIFF/WAVE header up to the data chunk's own
// header: the format, where the samples begin (dataOff) and how many
// bytes the data chunk says it holds (dataLen), which need not be there
// yet (the start of a stream). Frames and Duration are left 0. It never
// panics.
func ParseWAVHeader(d []byte) (w WAV, dataOff int, dataLen int64, err error) {
	if len(d) < 12 || string(d[:4]) != "RIFF" || string(d[8:12]) != "WAVE" {
		return WAV{}, 0, 0, fmt.Errorf("%w wav: no RIFF/WAVE header", ErrCorrupt)
	}
	haveFmt := false
	for p := 12; p+8 <= len(d); {
		id, n := string(d[p:p+4]), int64(binary.LittleEndian.Uint32(d[p+4:p+8]))
		p += 8
		body := d[p:]
		if n < int64(len(body)) {
			body = body[:n]
		}
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return WAV{}, 0, 0, fmt.Errorf("%w wav: fmt chunk of %d bytes (want ≥ 16)", ErrCorrupt, len(body))
			}
			tag := binary.LittleEndian.Uint16(body[0:2])
			if tag == 0xfffe && len(body) >= 26 { // WAVE_FORMAT_EXTENSIBLE: the subformat's tag
				tag = binary.LittleEndian.Uint16(body[24:26])
			}
			if tag != 1 && tag != 3 {
				return WAV{}, 0, 0, fmt.Errorf("%w: wav format tag %d (want PCM 1 or IEEE float 3)", ErrFormat, tag)
			}
			w.Float = tag == 3
			w.Channels = int(binary.LittleEndian.Uint16(body[2:4]))
			w.SampleRate = int(binary.LittleEndian.Uint32(body[4:8]))
			w.Depth = int(binary.LittleEndian.Uint16(body[14:16]))
			if w.Channels < 1 || w.SampleRate < 1 || w.Depth%8 != 0 || w.Depth < 8 || w.Depth > 64 {
				return WAV{}, 0, 0, fmt.Errorf("%w wav: %d channels, %d Hz, %d bits", ErrCorrupt, w.Channels, w.SampleRate, w.Depth)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return WAV{}, 0, 0, fmt.Errorf("%w wav: data chunk before the fmt chunk", ErrCorrupt)
			}
			return w, p, n, nil
		}
		p += int(min(n, int64(len(d)))) + int(n&1)
		if p < 0 || p > len(d) {
			break
		}
	}
	return WAV{}, 0, 0, fmt.Errorf("%w wav: no data chunk", ErrCorrupt)
}

// AppendWAV appends a WAV file of integer PCM samples to dst: frames
// samples per channel of the given depth (8, 16, 24 or 32 bits), each
// sample taken from sample(frame, channel) in [-1, 1].
func AppendWAV(dst []byte, rate, depth, channels int, frames int64, sample func(i int64, c int) float64) []byte {
	bps := depth / 8
	n := frames * int64(channels*bps)
	dst = append(dst, "RIFF"...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(36+n))
	dst = append(dst, "WAVEfmt "...)
	dst = binary.LittleEndian.AppendUint32(dst, 16)
	dst = binary.LittleEndian.AppendUint16(dst, 1)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(channels))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(rate))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(rate*channels*bps))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(channels*bps))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(depth))
	dst = append(dst, "data"...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	full := float64(int64(1)<<(depth-1) - 1)
	for i := range frames {
		for c := range channels {
			v := max(-1, min(1, sample(i, c)))
			s := int64(v * full)
			switch depth {
			case 8:
				dst = append(dst, byte(s+128)) // 8-bit WAV is unsigned
			case 16:
				dst = binary.LittleEndian.AppendUint16(dst, uint16(s))
			case 24:
				dst = append(dst, byte(s), byte(s>>8), byte(s>>16))
			default:
				dst = binary.LittleEndian.AppendUint32(dst, uint32(s))
			}
		}
	}
	return dst
}

// mp3Duration walks MPEG audio frame headers (after an ID3v2 tag) and
// returns the clip's length, sample rate and channels. It stops at the
// first byte that is not a frame header after at least one frame.
func mp3Duration(d []byte) (time.Duration, int, int, error) {
	p := 0
	if len(d) >= 10 && string(d[:3]) == "ID3" {
		size := int(d[6]&0x7f)<<21 | int(d[7]&0x7f)<<14 | int(d[8]&0x7f)<<7 | int(d[9]&0x7f)
		p = 10 + size
	}
	var (
		samples    int64
		rate, ch   int
		frames     int
		sampleRate = [4][3]int{{11025, 12000, 8000}, {}, {22050, 24000, 16000}, {44100, 48000, 32000}} // by version bits
		bitrateV1  = [16]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}
		bitrateV2  = [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}
	)
	for p+4 <= len(d) {
		h := d[p:]
		if h[0] != 0xff || h[1]&0xe0 != 0xe0 {
			break
		}
		ver := int(h[1] >> 3 & 3)
		layer := h[1] >> 1 & 3
		bi, si := int(h[2]>>4), int(h[2]>>2&3)
		if ver == 1 || layer != 1 || bi == 0 || bi == 15 || si == 3 { // Layer III only
			break
		}
		r := sampleRate[ver][si]
		pad := int(h[2] >> 1 & 1)
		var size, spf int
		if ver == 3 {
			spf = 1152
			size = 144*bitrateV1[bi]*1000/r + pad
		} else {
			spf = 576
			size = 72*bitrateV2[bi]*1000/r + pad
		}
		rate = r
		ch = 2
		if h[3]>>6 == 3 {
			ch = 1
		}
		samples += int64(spf)
		frames++
		p += size
	}
	if frames == 0 {
		return 0, 0, 0, fmt.Errorf("%w mp3: no MPEG Layer III frame", ErrCorrupt)
	}
	return time.Duration(samples * int64(time.Second) / int64(rate)), rate, ch, nil
}
