package media

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// videoTrack is a video's (first) video track: its length and frames;
// zero when the container has none or does not say.
type videoTrack struct {
	Duration time.Duration
	Frames   int
}

// videoAudioTrack reads the audio track of an MP4 (plain or fragmented)
// or WebM video: nil when it has none.
func videoAudioTrack(format string, data []byte) (*AudioTrack, error) {
	_, a, err := videoTracks(format, data)
	return a, err
}

// videoTracks reads the video track and the audio track (nil when none)
// of an MP4 or WebM video. Only the boxes or elements that describe
// tracks and sample timing are read (RATIONALE.md, "Why is the MP4 and
// WebM track reader hand-written?"); a box or element that runs past its
// parent is an ErrCorrupt.
func videoTracks(format string, data []byte) (videoTrack, *AudioTrack, error) {
	if format == "webm" {
		return webmTracks(data)
	}
	return mp4Tracks(data)
}

// mp4Track is what the moov box says of one track.
type mp4Track struct {
	id, timescale, defaultDur uint32
	handler                   string
	codec                     string
	rate, channels            int
	units                     uint64 // summed sample durations, timescale units
	samples                   uint64
	edits                     uint64 // the edit list's presented length, movie timescale units
	hasEdits                  bool
}

// duration is the track's presented length: its edit list's (which
// leaves out an AAC encoder's priming samples and shifts a video's
// composition delay) in the movie's timescale, else its samples'.
func (t *mp4Track) duration(movieScale uint32) time.Duration {
	if t.hasEdits && movieScale > 0 {
		return time.Duration(float64(t.edits) / float64(movieScale) * float64(time.Second))
	}
	if t.timescale == 0 {
		return 0
	}
	return time.Duration(float64(t.units) / float64(t.timescale) * float64(time.Second))
}

type mp4Reader struct {
	scale  uint32 // the movie's timescale (mvhd)
	tracks []*mp4Track
	cur    *mp4Track // the trak being read
	frag   *mp4Track // the traf's track
	fragD  uint32    // the traf's default sample duration
}

func mp4Tracks(data []byte) (videoTrack, *AudioTrack, error) {
	var r mp4Reader
	var v videoTrack
	var a *AudioTrack
	if err := r.boxes(data, 0); err != nil {
		return v, nil, err
	}
	for _, t := range r.tracks {
		switch {
		case t.handler == "vide" && v.Frames == 0:
			v = videoTrack{Duration: t.duration(r.scale), Frames: int(min(t.samples, 1<<31-1))}
		case t.handler == "soun" && a == nil:
			if t.timescale == 0 {
				return v, nil, fmt.Errorf("%w: MP4 audio track %d has no timescale", ErrCorrupt, t.id)
			}
			if t.rate == 0 {
				t.rate = int(t.timescale)
			}
			a = &AudioTrack{Codec: t.codec, SampleRate: t.rate, Channels: t.channels, Duration: t.duration(r.scale)}
		}
	}
	return v, a, nil
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
				count := uint64(f.u32())
				t.samples += count
				t.units += count * uint64(f.u32())
			}
		}
	case "mvhd":
		f.skip(12 + 8*int(f.version()))
		r.scale = f.u32()
	case "elst":
		if t != nil {
			v := f.version()
			f.skip(4)
			for n := f.u32(); n > 0 && f.ok(); n-- {
				var dur uint64
				var empty bool
				if v == 1 {
					dur, empty = f.u64(), int64(f.u64()) == -1
				} else {
					dur, empty = uint64(f.u32()), int32(f.u32()) == -1
				}
				f.skip(4) // media rate
				if !empty {
					t.edits += dur
					t.hasEdits = true
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
			units, n := f.trunUnits(r.fragD)
			r.frag.units += units
			r.frag.samples += uint64(n)
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
// their own) and counts its samples.
func (f *fullBox) trunUnits(def uint32) (units uint64, samples uint32) {
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
	if uint64(n)*uint64(per) > uint64(len(f.p)) {
		f.bad = true
		return 0, 0
	}
	if fl&0x100 == 0 {
		return uint64(n) * uint64(def), n
	}
	for k := n; k > 0 && f.ok(); k-- {
		units += uint64(f.u32())
		f.skip(per - 4)
	}
	return units, n
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
	ebmlDuration   = 0x4489
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
	scale        uint64  // ns per timecode tick
	segment      float64 // the segment's Duration, ticks (0: not given)
	audio        *AudioTrack
	hasVideo     bool
	aud, vid     webmTimeline
	entry        webmEntry
	cluster      int64
	lastTimeline *webmTimeline // the last block's, for its BlockDuration
}

// webmTimeline follows one track's blocks.
type webmTimeline struct {
	num          uint64
	first, last  int64 // the blocks' first and last timecodes
	lastDur, gap int64 // the last block's duration (0: unknown) and the gap before it
	blocks       int
}

// duration is from the first block to the end of the last (its
// BlockDuration, else the gap before it), in ns.
func (t *webmTimeline) duration(scale uint64) time.Duration {
	if t.blocks == 0 {
		return 0
	}
	d := t.lastDur
	if d == 0 {
		d = t.gap
	}
	return time.Duration(uint64(max(0, t.last-t.first+d)) * scale)
}

func (t *webmTimeline) block(tc int64) {
	if t.blocks == 0 {
		t.first = tc
	} else {
		t.gap = tc - t.last
	}
	t.last, t.lastDur = tc, 0
	t.blocks++
}

type webmEntry struct {
	num, typ uint64
	codec    string
	rate     float64
	channels uint64
}

func webmTracks(data []byte) (videoTrack, *AudioTrack, error) {
	r := webmReader{scale: 1_000_000}
	if err := r.elements(data, 0); err != nil {
		return videoTrack{}, nil, err
	}
	// The segment's Duration, when given, is the video's length: a block
	// has no duration of its own, so the blocks say it only to within
	// one frame.
	v := videoTrack{Duration: r.vid.duration(r.scale), Frames: r.vid.blocks}
	if d := r.segment * float64(r.scale); d > 0 && d < float64(math.MaxInt64) && r.hasVideo {
		v.Duration = time.Duration(d)
	}
	if r.audio != nil {
		r.audio.Duration = r.aud.duration(r.scale)
	}
	return v, r.audio, nil
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
		switch e := r.entry; {
		case e.typ == 1 && !r.hasVideo:
			r.hasVideo, r.vid.num = true, e.num
		case e.typ == 2 && r.audio == nil:
			r.audio = &AudioTrack{Codec: codecName(e.codec), SampleRate: int(e.rate), Channels: int(e.channels)}
			r.aud.num = e.num
		}
	case ebmlTimescale:
		if v := ebmlUint(p); v > 0 {
			r.scale = v
		}
	case ebmlDuration:
		r.segment = ebmlFloat(p)
	case ebmlTrackNum:
		r.entry.num = ebmlUint(p)
	case ebmlTrackType:
		r.entry.typ = ebmlUint(p)
	case ebmlCodecID:
		r.entry.codec = string(p)
	case ebmlChannels:
		r.entry.channels = ebmlUint(p)
	case ebmlSampling:
		r.entry.rate = ebmlFloat(p)
	case ebmlTimecode:
		r.cluster = int64(ebmlUint(p))
	case ebmlSimple, ebmlBlock:
		return r.block(p)
	case ebmlBlockDur:
		if r.lastTimeline != nil {
			r.lastTimeline.lastDur = int64(ebmlUint(p))
		}
	}
	return nil
}

// block notes a video or audio block's timecode.
func (r *webmReader) block(p []byte) error {
	num, n := ebmlVint(p, false)
	if n == 0 || len(p) < n+2 {
		return fmt.Errorf("%w: WebM block header", ErrCorrupt)
	}
	tc := r.cluster + int64(int16(binary.BigEndian.Uint16(p[n:])))
	r.lastTimeline = nil
	switch {
	case r.hasVideo && num == r.vid.num:
		r.lastTimeline = &r.vid
	case r.audio != nil && num == r.aud.num:
		r.lastTimeline = &r.aud
	default:
		return nil
	}
	r.lastTimeline.block(tc)
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

// ebmlFloat reads a 4- or 8-byte EBML float; 0 for another size, a NaN
// or a negative.
func ebmlFloat(p []byte) float64 {
	var v float64
	switch len(p) {
	case 4:
		v = float64(math.Float32frombits(binary.BigEndian.Uint32(p)))
	case 8:
		v = math.Float64frombits(binary.BigEndian.Uint64(p))
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func ebmlUint(p []byte) uint64 {
	var v uint64
	for _, c := range p[:min(len(p), 8)] {
		v = v<<8 | uint64(c)
	}
	return v
}
