package media

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// AudioTrack is a video's audio track as its container describes it: the
// codec ("aac", "opus", "vorbis", or the container's own name for
// another), the sample rate and channels of its sample entry or track
// entry, and the total duration of its samples (less the MP4 edit
// list's skipped priming samples).
type AudioTrack struct {
	Codec      string
	SampleRate int
	Channels   int
	Duration   time.Duration
}

// videoAudioTrack reads the audio track of an MP4 (plain or fragmented)
// or WebM video: nil when it has none. Only the boxes or elements that
// describe tracks and sample timing are read (RATIONALE.md, "Why is the
// MP4 and WebM track reader hand-written?"); a box or element that runs
// past its parent is an ErrCorrupt.
func videoAudioTrack(format string, data []byte) (*AudioTrack, error) {
	if format == "webm" {
		return webmAudioTrack(data)
	}
	return mp4AudioTrack(data)
}

// mp4Track is what the moov box says of one track.
type mp4Track struct {
	id, timescale, defaultDur uint32
	handler                   string
	codec                     string
	rate, channels            int
	units                     uint64 // summed sample durations, timescale units
	skip                      uint64 // the edit list's media_time
}

type mp4Reader struct {
	tracks []*mp4Track
	cur    *mp4Track // the trak being read
	frag   *mp4Track // the traf's track
	fragD  uint32    // the traf's default sample duration
}

func mp4AudioTrack(data []byte) (*AudioTrack, error) {
	var r mp4Reader
	if err := r.boxes(data, 0); err != nil {
		return nil, err
	}
	for _, t := range r.tracks {
		if t.handler != "soun" {
			continue
		}
		if t.timescale == 0 {
			return nil, fmt.Errorf("%w: MP4 audio track %d has no timescale", ErrCorrupt, t.id)
		}
		if t.rate == 0 {
			t.rate = int(t.timescale)
		}
		units := t.units - min(t.units, t.skip)
		return &AudioTrack{Codec: t.codec, SampleRate: t.rate, Channels: t.channels,
			Duration: time.Duration(float64(units) / float64(t.timescale) * float64(time.Second))}, nil
	}
	return nil, nil
}

// boxes reads the boxes of b, descending into the containers that hold
// track descriptions and fragments.
func (r *mp4Reader) boxes(b []byte, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%w: MP4 boxes nested deeper than 8", ErrCorrupt)
	}
	for len(b) > 0 {
		if len(b) < 8 {
			return fmt.Errorf("%w: MP4 box header of %d bytes", ErrCorrupt, len(b))
		}
		size, typ, hdr := uint64(binary.BigEndian.Uint32(b)), string(b[4:8]), uint64(8)
		switch size {
		case 0:
			size = uint64(len(b))
		case 1:
			if len(b) < 16 {
				return fmt.Errorf("%w: MP4 %q box's 64-bit size is cut off", ErrCorrupt, typ)
			}
			size, hdr = binary.BigEndian.Uint64(b[8:]), 16
		}
		if size < hdr || size > uint64(len(b)) {
			return fmt.Errorf("%w: MP4 %q box of %d bytes where %d remain", ErrCorrupt, typ, size, len(b))
		}
		if err := r.box(typ, b[hdr:size], depth); err != nil {
			return err
		}
		b = b[size:]
	}
	return nil
}

func (r *mp4Reader) box(typ string, p []byte, depth int) error {
	switch typ {
	case "trak":
		r.cur = &mp4Track{}
		r.tracks = append(r.tracks, r.cur)
		return r.boxes(p, depth+1)
	case "moov", "mdia", "minf", "stbl", "mvex", "edts", "moof":
		return r.boxes(p, depth+1)
	case "traf":
		r.frag, r.fragD = nil, 0
		return r.boxes(p, depth+1)
	}
	f := fullBox{p: p}
	switch t := r.cur; typ {
	case "tkhd":
		if t != nil {
			f.skip(12 + 8*int(f.version())) // flags, creation and modification times
			t.id = f.u32()
		}
	case "mdhd":
		if t != nil {
			f.skip(4 + 8 + 8*int(f.version()))
			t.timescale = f.u32()
		}
	case "hdlr":
		if t != nil {
			f.skip(8)
			t.handler = f.str(4)
		}
	case "stsd":
		if t != nil && len(p) >= 8+8+28 {
			t.sampleEntry(p[8:])
		}
	case "stts":
		if t != nil {
			f.skip(4)
			for n := f.u32(); n > 0 && f.ok(); n-- {
				t.units += uint64(f.u32()) * uint64(f.u32())
			}
		}
	case "elst":
		if t != nil {
			v := f.version()
			f.skip(4)
			if f.u32() > 0 {
				if v == 1 {
					f.skip(8)
					t.skip = f.u64()
				} else {
					f.skip(4)
					t.skip = uint64(max(0, int32(f.u32())))
				}
			}
		}
	case "trex":
		f.skip(4)
		if t := r.track(f.u32()); t != nil {
			f.skip(4)
			t.defaultDur = f.u32()
		}
	case "tfhd":
		fl := f.flags()
		f.skip(4)
		r.frag = r.track(f.u32())
		if r.frag != nil {
			r.fragD = r.frag.defaultDur
		}
		if fl&0x01 != 0 {
			f.skip(8)
		}
		if fl&0x02 != 0 {
			f.skip(4)
		}
		if fl&0x08 != 0 {
			r.fragD = f.u32()
		}
	case "trun":
		if r.frag != nil {
			r.frag.units += f.trunUnits(r.fragD)
		}
	}
	if !f.ok() {
		return fmt.Errorf("%w: MP4 %q box of %d bytes is cut off", ErrCorrupt, typ, len(p))
	}
	return nil
}

// sampleEntry reads an audio sample entry (e starts at its box header):
// the codec, then the channels and rate, which for AAC (esds) and Opus
// (dOps) the entry's child box holds (the entry's own fields are
// templates: ffmpeg writes 2 channels for a mono AAC track).
func (t *mp4Track) sampleEntry(e []byte) {
	t.codec = codecName(string(e[4:8]))
	t.channels = int(binary.BigEndian.Uint16(e[24:]))
	t.rate = int(binary.BigEndian.Uint32(e[32:]) >> 16)
	size := int(binary.BigEndian.Uint32(e))
	if size < 36 || size > len(e) {
		return
	}
	for c := e[36:size]; len(c) >= 8; {
		n := int(binary.BigEndian.Uint32(c))
		if n < 8 || n > len(c) {
			return
		}
		switch b := c[8:n]; string(c[4:8]) {
		case "esds":
			if rate, ch := esdsAudio(b); ch > 0 {
				t.rate, t.channels = rate, ch
			}
		case "dOps":
			if len(b) >= 8 {
				t.channels, t.rate = int(b[1]), int(binary.BigEndian.Uint32(b[4:]))
			}
		}
		c = c[n:]
	}
}

// aacRates are AudioSpecificConfig's sampling frequency indexes.
var aacRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// esdsAudio reads the sample rate and channels of an esds box's
// AudioSpecificConfig (ISO 14496-1 descriptors, ISO 14496-3 § 1.6.2.1);
// 0, 0 when it holds none it can read.
func esdsAudio(b []byte) (rate, channels int) {
	if len(b) < 4 {
		return 0, 0
	}
	b = b[4:] // version and flags
	for len(b) >= 2 {
		tag := b[0]
		size, i := 0, 1
		for ; i < 5 && i < len(b); i++ {
			size = size<<7 | int(b[i]&0x7F)
			if b[i]&0x80 == 0 {
				break
			}
		}
		i++
		if i > len(b) || size > len(b)-i {
			return 0, 0
		}
		body := b[i : i+size]
		switch tag {
		case 0x03: // ES_Descriptor: ES_ID, flags, optional fields, children
			if len(body) < 3 {
				return 0, 0
			}
			fl, skip := body[2], 3
			if fl&0x80 != 0 {
				skip += 2
			}
			if fl&0x40 != 0 && len(body) > skip {
				skip += 1 + int(body[skip])
			}
			if fl&0x20 != 0 {
				skip += 2
			}
			b = body[min(skip, len(body)):]
			continue
		case 0x04: // DecoderConfigDescriptor: 13 bytes, then children
			b = body[min(13, len(body)):]
			continue
		case 0x05: // DecoderSpecificInfo: the AudioSpecificConfig
			return audioSpecificConfig(body)
		}
		b = b[i+size:]
	}
	return 0, 0
}

// audioSpecificConfig reads an AAC AudioSpecificConfig's rate and
// channels: 5 bits of object type (31: 6 more), 4 of frequency index
// (15: a 24-bit rate), 4 of channel configuration (7 is 8 channels).
func audioSpecificConfig(b []byte) (rate, channels int) {
	var acc uint64
	for i := range min(len(b), 8) {
		acc |= uint64(b[i]) << (56 - 8*i)
	}
	bits := func(n int) int {
		v := int(acc >> (64 - n))
		acc <<= n
		return v
	}
	if len(b) < 2 {
		return 0, 0
	}
	if bits(5) == 31 {
		bits(6)
	}
	if i := bits(4); i == 15 {
		rate = bits(24)
	} else if i < len(aacRates) {
		rate = aacRates[i]
	}
	channels = bits(4)
	if channels == 7 {
		channels = 8
	}
	return rate, channels
}

func (r *mp4Reader) track(id uint32) *mp4Track {
	for _, t := range r.tracks {
		if t.id == id {
			return t
		}
	}
	return nil
}

// codecName names an MP4 sample entry's or a Matroska CodecID's codec.
func codecName(s string) string {
	switch s {
	case "mp4a", "A_AAC":
		return "aac"
	case "Opus", "A_OPUS":
		return "opus"
	case "A_VORBIS":
		return "vorbis"
	}
	return s
}

// fullBox reads a box's payload; reads past its end set bad and return 0.
type fullBox struct {
	p   []byte
	i   int
	bad bool
}

func (f *fullBox) ok() bool { return !f.bad }

func (f *fullBox) take(n int) []byte {
	if f.bad || n < 0 || f.i+n > len(f.p) {
		f.bad = true
		return nil
	}
	b := f.p[f.i : f.i+n]
	f.i += n
	return b
}

func (f *fullBox) skip(n int) { f.take(n) }

func (f *fullBox) version() uint8 {
	if len(f.p) == 0 {
		f.bad = true
		return 0
	}
	return min(f.p[0], 1)
}

func (f *fullBox) flags() uint32 {
	if len(f.p) < 4 {
		f.bad = true
		return 0
	}
	return binary.BigEndian.Uint32(f.p) & 0xFFFFFF
}

func (f *fullBox) u32() uint32 {
	if b := f.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (f *fullBox) u64() uint64 {
	if b := f.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (f *fullBox) str(n int) string { return string(f.take(n)) }

// trunUnits sums a trun box's sample durations (def for samples without
// their own).
func (f *fullBox) trunUnits(def uint32) uint64 {
	fl := f.flags()
	f.skip(4)
	n := f.u32()
	if fl&0x01 != 0 {
		f.skip(4)
	}
	if fl&0x04 != 0 {
		f.skip(4)
	}
	per := 4 * bitsSet(fl&0xF00)
	if fl&0x100 == 0 {
		if uint64(n)*uint64(per) > uint64(len(f.p)) {
			f.bad = true
			return 0
		}
		return uint64(n) * uint64(def)
	}
	var units uint64
	for ; n > 0 && f.ok(); n-- {
		units += uint64(f.u32())
		f.skip(per - 4)
	}
	return units
}

func bitsSet(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// Matroska element IDs (with their marker bits) that the WebM reader
// reads or descends into.
const (
	ebmlSegment    = 0x18538067
	ebmlInfo       = 0x1549A966
	ebmlTimescale  = 0x2AD7B1
	ebmlTracks     = 0x1654AE6B
	ebmlTrackEntry = 0xAE
	ebmlTrackNum   = 0xD7
	ebmlTrackType  = 0x83
	ebmlCodecID    = 0x86
	ebmlAudio      = 0xE1
	ebmlSampling   = 0xB5
	ebmlChannels   = 0x9F
	ebmlCluster    = 0x1F43B675
	ebmlTimecode   = 0xE7
	ebmlSimple     = 0xA3
	ebmlGroup      = 0xA0
	ebmlBlock      = 0xA1
	ebmlBlockDur   = 0x9B
)

type webmReader struct {
	scale        uint64 // ns per timecode tick
	audio        *AudioTrack
	audioNum     uint64
	entry        webmEntry
	cluster      int64
	first, last  int64 // the audio blocks' first and last timecodes
	lastDur, gap int64 // the last block's duration (0: unknown) and the gap before it
	blocks       int
}

type webmEntry struct {
	num, typ uint64
	codec    string
	rate     float64
	channels uint64
}

func webmAudioTrack(data []byte) (*AudioTrack, error) {
	r := webmReader{scale: 1_000_000}
	if err := r.elements(data, 0); err != nil {
		return nil, err
	}
	if r.audio == nil {
		return nil, nil
	}
	if r.blocks > 0 {
		d := r.lastDur
		if d == 0 {
			d = r.gap
		}
		r.audio.Duration = time.Duration(uint64(r.last-r.first+d) * r.scale)
	}
	return r.audio, nil
}

// elements reads the EBML elements of b. An element of unknown size (a
// live stream's segment or cluster) runs to the end of its parent: its
// children are read as if they were its parent's.
func (r *webmReader) elements(b []byte, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%w: WebM elements nested deeper than 8", ErrCorrupt)
	}
	for len(b) > 0 {
		id, n := ebmlVint(b, true)
		if n == 0 {
			return fmt.Errorf("%w: WebM element ID", ErrCorrupt)
		}
		size, m := ebmlVint(b[n:], false)
		if m == 0 {
			return fmt.Errorf("%w: WebM element %X's size", ErrCorrupt, id)
		}
		body := b[n+m:]
		if size == math.MaxUint64 {
			// Unknown size: its children follow, read as the parent's.
			if id == ebmlCluster {
				r.cluster = 0
			}
			b = body
			continue
		}
		if size > uint64(len(body)) {
			return fmt.Errorf("%w: WebM element %X of %d bytes where %d remain", ErrCorrupt, id, size, len(body))
		}
		body = body[:size]
		if err := r.element(id, body, depth); err != nil {
			return err
		}
		b = b[n+m+len(body):]
	}
	return nil
}

func (r *webmReader) element(id uint64, p []byte, depth int) error {
	switch id {
	case ebmlSegment, ebmlInfo, ebmlTracks, ebmlAudio, ebmlGroup:
		return r.elements(p, depth+1)
	case ebmlCluster:
		r.cluster = 0
		return r.elements(p, depth+1)
	case ebmlTrackEntry:
		r.entry = webmEntry{}
		if err := r.elements(p, depth+1); err != nil {
			return err
		}
		if e := r.entry; e.typ == 2 && r.audio == nil {
			r.audio = &AudioTrack{Codec: codecName(e.codec), SampleRate: int(e.rate), Channels: int(e.channels)}
			r.audioNum = e.num
		}
	case ebmlTimescale:
		if v := ebmlUint(p); v > 0 {
			r.scale = v
		}
	case ebmlTrackNum:
		r.entry.num = ebmlUint(p)
	case ebmlTrackType:
		r.entry.typ = ebmlUint(p)
	case ebmlCodecID:
		r.entry.codec = string(p)
	case ebmlChannels:
		r.entry.channels = ebmlUint(p)
	case ebmlSampling:
		switch len(p) {
		case 4:
			r.entry.rate = float64(math.Float32frombits(binary.BigEndian.Uint32(p)))
		case 8:
			r.entry.rate = math.Float64frombits(binary.BigEndian.Uint64(p))
		}
	case ebmlTimecode:
		r.cluster = int64(ebmlUint(p))
	case ebmlSimple, ebmlBlock:
		return r.block(p)
	case ebmlBlockDur:
		if r.blocks > 0 {
			r.lastDur = int64(ebmlUint(p))
		}
	}
	return nil
}

// block notes an audio block's timecode.
func (r *webmReader) block(p []byte) error {
	num, n := ebmlVint(p, false)
	if n == 0 || len(p) < n+2 {
		return fmt.Errorf("%w: WebM block header", ErrCorrupt)
	}
	if r.audio == nil || num != r.audioNum {
		return nil
	}
	t := r.cluster + int64(int16(binary.BigEndian.Uint16(p[n:])))
	if r.blocks == 0 {
		r.first = t
	} else {
		r.gap = t - r.last
	}
	r.last, r.lastDur = t, 0
	r.blocks++
	return nil
}

// ebmlVint reads an EBML variable-length integer: an element ID keeps its
// marker bits; a size loses them, and a size of all ones (unknown) is
// math.MaxUint64. n is 0 when b does not hold one.
func ebmlVint(b []byte, id bool) (v uint64, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 || len(b) < n || id && n > 4 {
		return 0, 0
	}
	v = uint64(b[0])
	if !id {
		v &= 0xFF >> n
	}
	ones := v == 0xFF>>n
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
		ones = ones && c == 0xFF
	}
	if !id && ones {
		return math.MaxUint64, n
	}
	return v, n
}

func ebmlUint(p []byte) uint64 {
	var v uint64
	for _, c := range p[:min(len(p), 8)] {
		v = v<<8 | uint64(c)
	}
	return v
}
