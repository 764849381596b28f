package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/trace/media"
)

// appendMedia resolves one media field of a row (a string, or an array of
// strings and {"name", "contents": [strings]} objects, AIPerf's shapes)
// into OpenAI chat content parts appended, comma-separated, to parts, and
// counts them in st. Each string is an http(s) URL (passed through), a
// base64 data URL, bare base64 bytes, or a file path (relative paths are
// taken from the trace file's directory, else the working directory). Any
// problem is an error naming the field.
func (r *Reader) appendMedia(parts []byte, k media.Kind, val []byte, line int64, field string, st *MediaStats) ([]byte, error) {
	val = bytes.TrimSpace(val)
	if len(val) == 0 || string(val) == "null" {
		return parts, nil
	}
	var refs []mediaRef
	switch val[0] {
	case '"':
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return parts, r.fileErr(line, field, fmt.Errorf("not a valid JSON string: %v", err))
		}
		refs = []mediaRef{{s: s}}
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(val, &items); err != nil {
			return parts, r.fileErr(line, field, fmt.Errorf("want a string or an array of strings: %v", err))
		}
		for i, it := range items {
			var s string
			if json.Unmarshal(it, &s) == nil {
				refs = append(refs, mediaRef{s: s})
				continue
			}
			var named struct {
				Contents []string `json:"contents"`
				Bytes    *string  `json:"bytes"`
				Path     *string  `json:"path"`
			}
			if err := json.Unmarshal(it, &named); err != nil {
				return parts, r.fileErr(line, field, fmt.Errorf("[%d]: want a string or {\"name\": …, \"contents\": [strings]}: %v", i, err))
			}
			for _, c := range named.Contents {
				refs = append(refs, mediaRef{s: c})
			}
			if named.Bytes != nil {
				refs = append(refs, mediaRef{s: *named.Bytes, bytes: true})
			} else if named.Path != nil {
				refs = append(refs, mediaRef{s: *named.Path})
			}
		}
	case '{':
		// A Hugging Face image or audio cell exported to JSON:
		// {"bytes": "<base64>", "path": "…"}.
		var cell struct {
			Bytes *string `json:"bytes"`
			Path  *string `json:"path"`
		}
		if err := json.Unmarshal(val, &cell); err != nil || cell.Bytes == nil && cell.Path == nil {
			return parts, r.fileErr(line, field, errors.New(`want a string, an array of strings, or {"bytes": "<base64>", "path": "…"}`))
		}
		switch {
		case cell.Bytes != nil && *cell.Bytes != "":
			refs = []mediaRef{{s: *cell.Bytes, bytes: true}}
		case cell.Path != nil:
			refs = []mediaRef{{s: *cell.Path}}
		default: // {"bytes": ""}: nothing to send
			return parts, r.fileErr(line, field, errors.New(`{"bytes": ""} holds no media: give the base64 bytes or a "path"`))
		}
	default:
		return parts, r.fileErr(line, field, fmt.Errorf("%.40s: want a string (a path, URL or data URL) or an array of them", val))
	}
	for i, ref := range refs {
		c, err := r.resolveMedia(k, ref)
		if err != nil {
			f := field
			if len(refs) > 1 {
				f = field + "[" + strconv.Itoa(i) + "]"
			}
			return parts, r.fileErr(line, f, err)
		}
		if len(parts) > 0 {
			parts = append(parts, ',')
		}
		parts = append(parts, c.part...)
		st.Merge(&c.st)
	}
	return parts, nil
}

// mediaRef is one media reference of a row: a path, URL, data URL or bare
// base64 (s), or, with bytes, the base64 of a {"bytes": …} cell, which is
// decoded as it is (never taken for a path).
type mediaRef struct {
	s     string
	bytes bool
}

// resolveMedia reads and checks one media reference, through the cache.
func (r *Reader) resolveMedia(k media.Kind, mr mediaRef) (*cachedMedia, error) {
	ref := strings.TrimSpace(mr.s)
	key := k.String() + "\x00" + ref
	if mr.bytes {
		key = k.String() + "\x01" + ref
	}
	if c := r.media.cache[key]; c != nil {
		return c, nil
	}
	var (
		it  media.Item
		err error
	)
	switch {
	case ref == "":
		return nil, fmt.Errorf("an empty %s reference; give a path, an http(s) URL or a data URL", k)
	case mr.bytes:
		var b []byte
		if b, err = decodeBase64(ref); err == nil {
			it, err = media.Probe(k, b, r.opts.MediaLimits)
		}
	case strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://"):
		it = media.Item{Kind: k, URL: ref}
	case strings.HasPrefix(ref, "data:"):
		var b []byte
		if b, err = media.DecodeDataURL(ref); err == nil {
			it, err = media.Probe(k, b, r.opts.MediaLimits)
		}
	default:
		var b []byte
		if b, err = r.readMediaFile(k, ref); err == nil {
			it, err = media.Probe(k, b, r.opts.MediaLimits)
			if err != nil {
				err = fmt.Errorf("%s: %w", clipRef(ref), err)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	// The part holds the bytes (as base64); the counts need only sizes.
	c := &cachedMedia{part: media.AppendChatPart(nil, &it)}
	c.st.Add(&it)
	if r.media.cache == nil {
		r.media.cache = map[string]*cachedMedia{}
	}
	if len(r.media.order) >= mediaCacheSize {
		delete(r.media.cache, r.media.order[0])
		r.media.order = r.media.order[1:]
	}
	r.media.cache[key] = c
	r.media.order = append(r.media.order, key)
	return c, nil
}

// readMediaFile reads a media file named by a row; a reference that is no
// file but bare base64 (a table's bytes cell) is decoded instead.
func (r *Reader) readMediaFile(k media.Kind, ref string) ([]byte, error) {
	p := ref
	if !filepath.IsAbs(p) && r.name != "" && r.name != "-" {
		if q := filepath.Join(filepath.Dir(r.name), p); fileExists(q) {
			p = q
		}
	}
	lim := r.opts.MediaLimits
	fi, err := os.Stat(p)
	if err != nil {
		if len(ref) >= 64 {
			if b, berr := base64.StdEncoding.DecodeString(ref); berr == nil && mediaMagic(b) {
				return b, nil
			}
		}
		if len(ref) > 80 {
			ref = ref[:80] + "…"
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s file %s does not exist (relative paths are taken from the trace's directory, then the working directory); fix the path or give an http(s) URL", k, ref)
		}
		return nil, fmt.Errorf("%s file: %v", k, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s file %s is a directory", k, ref)
	}
	max := lim.MaxBytes
	if max <= 0 {
		max = media.DefaultMaxBytes
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s file %s: %d bytes, more than the %d a request may carry", k, ref, fi.Size(), max)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%s file: %v", k, err)
	}
	return b, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// appendMediaCell resolves one table cell of media: JSON (a list, a
// {"bytes", "path"} object, a quoted string), raw media bytes (a Parquet
// binary cell), or one reference string.
func (r *Reader) appendMediaCell(parts []byte, k media.Kind, v []byte, line int64, field string, st *MediaStats) ([]byte, error) {
	t := bytes.TrimSpace(v)
	if len(t) > 0 && (t[0] == '[' || t[0] == '{' || t[0] == '"') {
		return r.appendMedia(parts, k, t, line, field, st)
	}
	var it media.Item
	var err error
	if mediaMagic(v) {
		if it, err = media.Probe(k, bytes.Clone(v), r.opts.MediaLimits); err != nil {
			return parts, r.fileErr(line, field, err)
		}
		c := cachedMedia{part: media.AppendChatPart(nil, &it)}
		c.st.Add(&it)
		if len(parts) > 0 {
			parts = append(parts, ',')
		}
		st.Merge(&c.st)
		return append(parts, c.part...), nil
	}
	c, err := r.resolveMedia(k, mediaRef{s: string(v)})
	if err != nil {
		return parts, r.fileErr(line, field, err)
	}
	if len(parts) > 0 {
		parts = append(parts, ',')
	}
	st.Merge(&c.st)
	return append(parts, c.part...), nil
}

// decodeBase64 decodes the base64 of a {"bytes": …} cell (padded or not).
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf(`"bytes" is not base64 (%.40s…); give the media's bytes in standard base64`, s)
		}
	}
	return b, nil
}

// countMediaParts counts into st the chat content parts of a "media"
// array (image_url, input_audio, video_url, audio_url parts, as
// media.AppendChatPart writes them), checking each data URL's or base64's
// bytes with media.Probe; a URL counts as an item of unknown size.
func countMediaParts(st *MediaStats, parts []byte, lim media.Limits) error {
	var ps []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
		VideoURL *struct {
			URL string `json:"url"`
		} `json:"video_url"`
		AudioURL *struct {
			URL string `json:"url"`
		} `json:"audio_url"`
		InputAudio *struct {
			Data string `json:"data"`
		} `json:"input_audio"`
	}
	if err := json.Unmarshal(parts, &ps); err != nil {
		return fmt.Errorf("want an array of chat content parts: %v", err)
	}
	for i, p := range ps {
		var k media.Kind
		var ref mediaRef
		switch {
		case p.Type == "image_url" && p.ImageURL != nil:
			k, ref = media.Image, mediaRef{s: p.ImageURL.URL}
		case p.Type == "video_url" && p.VideoURL != nil:
			k, ref = media.Video, mediaRef{s: p.VideoURL.URL}
		case p.Type == "audio_url" && p.AudioURL != nil:
			k, ref = media.Audio, mediaRef{s: p.AudioURL.URL}
		case p.Type == "input_audio" && p.InputAudio != nil:
			k, ref = media.Audio, mediaRef{s: p.InputAudio.Data, bytes: true}
		default:
			return fmt.Errorf("[%d]: type %q: want image_url, input_audio, video_url or audio_url with its object", i, p.Type)
		}
		var it media.Item
		var err error
		switch {
		case strings.HasPrefix(ref.s, "http://") || strings.HasPrefix(ref.s, "https://"):
			it = media.Item{Kind: k, URL: ref.s}
		case ref.bytes:
			var b []byte
			if b, err = decodeBase64(ref.s); err == nil {
				it, err = media.Probe(k, b, lim)
			}
		default:
			var b []byte
			if b, err = media.DecodeDataURL(ref.s); err == nil {
				it, err = media.Probe(k, b, lim)
			}
		}
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		st.Add(&it)
	}
	return nil
}

// mediaMagic reports whether b starts like image, audio or video bytes.
func mediaMagic(b []byte) bool {
	for _, m := range []string{"\x89PNG", "\xff\xd8\xff", "GIF8", "RIFF", "ID3", "\x1a\x45\xdf\xa3"} {
		if bytes.HasPrefix(b, []byte(m)) {
			return true
		}
	}
	return len(b) >= 8 && string(b[4:8]) == "ftyp"
}

// appendRawMedia adds `"media":[parts]` to the JSON object raw (or makes
// one); raw is modified in place when it has room.
func appendRawMedia(raw, parts []byte) []byte {
	if len(raw) < 2 {
		raw = append(raw[:0], '{')
	} else {
		raw = append(raw[:len(raw)-1], ',')
	}
	raw = append(raw, `"media":[`...)
	raw = append(raw, parts...)
	return append(raw, "]}"...)
}

// clipRef shortens a reference for a message.
func clipRef(ref string) string {
	if len(ref) > 80 {
		return ref[:80] + "…"
	}
	return ref
}
