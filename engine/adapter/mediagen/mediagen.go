package mediagen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"slices"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

// API selects the endpoint.
type API uint8

// The APIs.
const (
	Images        API = iota // POST /v1/images/generations
	Video                    // POST /v1/videos, GET /v1/videos/{id}, GET /v1/videos/{id}/content
	Transcription            // POST /v1/audio/transcriptions (multipart)
	Speech                   // POST /v1/audio/speech
	SpeechSSE                // POST /v1/audio/speech with stream_format "sse"
)

var infos = [...]adapter.Info{
	Images:        {Name: "image_generation", Version: "1", Path: "/v1/images/generations", Kind: adapter.KindImages, Framing: adapter.FramingSSE},
	Video:         {Name: "video_generation", Version: "1", Path: "/v1/videos", Kind: adapter.KindVideo},
	Transcription: {Name: "transcription", Version: "1", Path: "/v1/audio/transcriptions", Kind: adapter.KindTranscription, Framing: adapter.FramingSSE},
	Speech:        {Name: "speech", Version: "1", Path: "/v1/audio/speech", Kind: adapter.KindSpeech, Framing: adapter.FramingRaw},
	SpeechSSE:     {Name: "speech-sse", Version: "1", Path: "/v1/audio/speech", Kind: adapter.KindSpeech, Framing: adapter.FramingSSE},
}

// The options a run may set (adapter.Config.Options, --adapter-config on
// a native endpoint); every one is passed on as a string field unless
// said otherwise.
const (
	// OptContentType is the request body's type for video submits:
	// "application/json" (default) or "multipart/form-data".
	OptContentType = "content_type"
	// OptPartialImages is the number of partial images a streamed image
	// request asks for (partial_images, a number).
	OptPartialImages = "partial_images"
	// OptN is the number of images per request (n, a number).
	OptN = "n"
)

// numeric are the options sent as JSON numbers.
var numeric = map[string]bool{OptN: true, OptPartialImages: true, "speed": true}

// Adapter is the native generation adapter for one API. It is safe for
// concurrent use.
type Adapter struct {
	API API
	// Clip is the audio a transcription request uploads when its trace
	// row carries none (nil for the other APIs); a row's own clip (Raw's
	// "media", one input_audio or audio data URL part) is uploaded
	// instead. It is shared read-only.
	Clip *WAV
}

var _ adapter.Adapter = Adapter{}

// Info implements adapter.Adapter.
func (a Adapter) Info() adapter.Info {
	if int(a.API) < len(infos) {
		return infos[a.API]
	}
	return adapter.Info{Name: "unknown"}
}

// NewInstance implements adapter.Adapter.
func (a Adapter) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	if int(a.API) >= len(infos) {
		return nil, fmt.Errorf("generation API %d unknown", a.API)
	}
	if a.API == Transcription && a.Clip == nil {
		return nil, fmt.Errorf("%s: no audio clip to upload", infos[a.API].Name)
	}
	if len(cfg.ExtraBody) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cfg.ExtraBody, &m); err != nil {
			return nil, fmt.Errorf("extra body: want a JSON object: %w", err)
		}
	}
	for _, k := range []string{OptN, OptPartialImages} {
		if v, ok := cfg.Options[k]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return nil, fmt.Errorf("%s option %s=%q: want a whole number ≥ 0", infos[a.API].Name, k, v)
			}
		}
	}
	if ct := cfg.Options[OptContentType]; ct != "" && ct != "application/json" && ct != "multipart/form-data" {
		return nil, fmt.Errorf("%s option %s=%q: want application/json or multipart/form-data", infos[a.API].Name, OptContentType, ct)
	}
	return &Instance{a: a, cfg: *cfg, ctx: map[uint32]*state{}}, nil
}

// Instance builds and parses for one goroutine. It is not safe for
// concurrent use.
type Instance struct {
	a   Adapter
	cfg adapter.Config
	ctx map[uint32]*state
	// content says the next context opened is a video content download
	// (ContentRequest was the last request rendered).
	content bool
	mw      bytes.Buffer
	rawBuf  []byte // CutMedia's scratch
}

type state struct {
	fin     adapter.Final
	stream  bool
	content bool
	head    []byte // the first bytes of a speech stream, for its WAV header
	bytes   int64  // speech: audio bytes so far
	text    int
}

var (
	_ adapter.Instance = (*Instance)(nil)
	_ adapter.Job      = (*Instance)(nil)
)

// Build implements adapter.Instance.
func (in *Instance) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	out.Reset()
	out.Method = adapter.MethodPOST
	out.Path = infos[in.a.API].Path
	in.content = false
	stream := b.Flags&adapter.BuildStream != 0
	opts := in.cfg.Options
	switch in.a.API {
	case Transcription:
		clip, name, err := in.clip(b.Raw)
		if err != nil {
			return err
		}
		return in.multipart(out, func(w *multipart.Writer) error {
			fw, err := w.CreateFormFile("file", name)
			if err != nil {
				return err
			}
			if _, err := fw.Write(clip); err != nil {
				return err
			}
			fields := [][2]string{{"model", in.cfg.Model}, {"response_format", "json"}}
			if stream {
				fields = append(fields, [2]string{"stream", "true"})
			}
			return writeFields(w, fields, opts)
		})
	case Video:
		if opts[OptContentType] == "multipart/form-data" {
			return in.multipart(out, func(w *multipart.Writer) error {
				return writeFields(w, [][2]string{{"model", in.cfg.Model}, {"prompt", b.PromptText}}, opts)
			})
		}
	}
	out.Header = append(out.Header, adapter.Header{Name: "Content-Type", Value: "application/json"})
	body := append(out.Body, `{"model":`...)
	body = jsonx.AppendString(body, in.cfg.Model)
	key := "prompt"
	if in.a.API == Speech || in.a.API == SpeechSSE {
		key = "input"
	}
	body = append(body, `,"`...)
	body = append(body, key...)
	body = append(body, `":`...)
	body = jsonx.AppendString(body, b.PromptText)
	if stream && in.a.API == Images {
		body = append(body, `,"stream":true`...)
	}
	if (in.a.API == Speech || in.a.API == SpeechSSE) && opts["voice"] == "" {
		body = append(body, `,"voice":"alloy"`...)
	}
	if in.a.API == SpeechSSE {
		body = append(body, `,"stream_format":"sse"`...)
		if opts["response_format"] == "" {
			body = append(body, `,"response_format":"pcm"`...)
		}
	}
	if in.a.API == Speech && opts["response_format"] == "" {
		body = append(body, `,"response_format":"wav"`...)
	}
	for _, k := range sortedKeys(opts) {
		if k == OptContentType || (k == OptPartialImages && !stream) {
			continue
		}
		body = append(body, ',')
		body = jsonx.AppendString(body, k)
		body = append(body, ':')
		if numeric[k] {
			body = append(body, opts[k]...)
		} else {
			body = jsonx.AppendString(body, opts[k])
		}
	}
	body = jsonx.AppendMembers(body, in.cfg.ExtraBody)
	out.Body = append(body, '}')
	return nil
}

// rowPart is a chat content part of a trace row's "media" array.
type rowPart struct {
	Type       string `json:"type"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	AudioURL *struct {
		URL string `json:"url"`
	} `json:"audio_url"`
}

// clip returns the audio a transcription request uploads and its file
// name: the trace row's own clip when raw's "media" carries one (the
// trace reader checked it), else the run's Clip. A row with more than
// one clip, or with images or videos, is an error: the endpoint takes
// one audio file.
func (in *Instance) clip(raw []byte) ([]byte, string, error) {
	rest, m, ok := media.CutMedia(raw, in.rawBuf)
	in.rawBuf = rest[:0]
	if !ok {
		return in.a.Clip.Data, "clip.wav", nil
	}
	var ps []rowPart
	if err := json.Unmarshal(m, &ps); err != nil {
		return nil, "", fmt.Errorf("the row's media: %w", err)
	}
	if len(ps) != 1 {
		return nil, "", fmt.Errorf("the row carries %d media items; a transcription request uploads one audio clip (give each row one audio)", len(ps))
	}
	p := ps[0]
	switch {
	case p.Type == "input_audio" && p.InputAudio != nil:
		b, err := base64.StdEncoding.DecodeString(p.InputAudio.Data)
		if err != nil {
			return nil, "", fmt.Errorf("the row's input_audio data is not base64: %w", err)
		}
		return b, "clip." + p.InputAudio.Format, nil
	case p.Type == "audio_url" && p.AudioURL != nil:
		b, err := media.DecodeDataURL(p.AudioURL.URL)
		if err != nil {
			return nil, "", fmt.Errorf("the row's audio %.60q: a transcription request uploads the clip's bytes, so give a local file or a data URL, not a URL (%w)", p.AudioURL.URL, err)
		}
		it, err := media.Probe(media.Audio, b, media.Limits{})
		if err != nil {
			return nil, "", fmt.Errorf("the row's audio: %w", err)
		}
		return b, "clip." + it.Format, nil
	}
	return nil, "", fmt.Errorf("the row carries a %s part; a transcription request uploads one audio clip, not images or videos", p.Type)
}

// multipart renders a multipart/form-data body with a fixed boundary (the
// same request gives the same bytes).
func (in *Instance) multipart(out *adapter.HTTPRequest, fill func(*multipart.Writer) error) error {
	in.mw.Reset()
	w := multipart.NewWriter(&in.mw)
	if err := w.SetBoundary("reprise-form-boundary-7f3a9c"); err != nil {
		return err
	}
	if err := fill(w); err != nil {
		return err
	}
	if len(in.cfg.ExtraBody) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in.cfg.ExtraBody, &m); err != nil {
			return fmt.Errorf("extra body: %w", err)
		}
		for _, k := range sortedKeys(m) {
			v := m[k]
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v) // numbers, booleans: their JSON text
			}
			if err := w.WriteField(k, s); err != nil {
				return err
			}
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	out.Header = append(out.Header, adapter.Header{Name: "Content-Type", Value: w.FormDataContentType()})
	out.Body = append(out.Body, in.mw.Bytes()...)
	return nil
}

func writeFields(w *multipart.Writer, fields [][2]string, opts map[string]string) error {
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(opts) {
		if k == OptContentType {
			continue
		}
		if err := w.WriteField(k, opts[k]); err != nil {
			return err
		}
	}
	return nil
}

// PollRequest implements adapter.Job: GET /v1/videos/{id}.
func (in *Instance) PollRequest(id []byte, out *adapter.HTTPRequest) error {
	if err := checkID(id); err != nil {
		return err
	}
	out.Reset()
	out.Method = adapter.MethodGET
	out.Path = infos[Video].Path + "/" + string(id)
	in.content = false
	return nil
}

// ContentRequest implements adapter.Job: GET /v1/videos/{id}/content.
func (in *Instance) ContentRequest(id []byte, out *adapter.HTTPRequest) error {
	if err := checkID(id); err != nil {
		return err
	}
	out.Reset()
	out.Method = adapter.MethodGET
	out.Path = infos[Video].Path + "/" + string(id) + "/content"
	in.content = true
	return nil
}

// checkID refuses a job id that cannot be a path segment as it is.
func checkID(id []byte) error {
	if len(id) == 0 || len(id) > 256 {
		return fmt.Errorf("job id of %d bytes: want 1 to 256", len(id))
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("job id %.40q: want letters, digits, '_', '-' or '.'", id)
		}
	}
	return nil
}

// Open implements adapter.Instance.
func (in *Instance) Open(ctx uint32, flags adapter.OpenFlags) error {
	if _, ok := in.ctx[ctx]; ok {
		return fmt.Errorf("context %d already open", ctx)
	}
	in.ctx[ctx] = &state{stream: flags&adapter.OpenStream != 0, content: in.content}
	in.content = false
	return nil
}

// Close implements adapter.Instance.
func (in *Instance) Close(ctx uint32, fin *adapter.Final) error {
	st := in.ctx[ctx]
	if st == nil {
		return fmt.Errorf("context %d not open", ctx)
	}
	delete(in.ctx, ctx)
	if in.a.API == Speech && st.bytes > 0 {
		st.fin.Media.Items = 1
		st.fin.Media.Bytes, st.fin.Media.AudioNS = speechAudio(st.head, st.bytes)
	}
	if in.a.API == Transcription {
		st.fin.Media.AudioNS = int64(in.a.Clip.Duration) // the clip sent
	}
	if in.a.API == SpeechSSE && st.bytes > 0 {
		// The deltas' audio is raw PCM as OpenAI streams it: 24 kHz,
		// 16-bit, mono.
		st.fin.Media.Items, st.fin.Media.Bytes = 1, st.bytes
		st.fin.Media.AudioNS = int64(pcmDuration(st.bytes, 24000, 1, 16))
	}
	*fin = st.fin
	return nil
}

// Release implements adapter.Instance.
func (in *Instance) Release() error { return nil }

// Parse implements adapter.Instance.
func (in *Instance) Parse(ctx uint32, batch *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	st := in.ctx[ctx]
	if st == nil {
		return dst, fmt.Errorf("context %d not open", ctx)
	}
	for i := range batch.Events {
		ev := &batch.Events[i]
		idx := batch.First + uint32(i)
		var err error
		switch {
		case ev.Flags&adapter.EventComment != 0:
			dst = append(dst, adapter.Record{Kind: record.EventMeta, Event: idx})
		case in.a.API == Speech:
			dst = st.speech(ev, idx, dst)
		case st.content:
			// A video's content: its bytes are the media.
			st.fin.Media.Items, st.fin.Media.Bytes = 1, int64(len(ev.Data))
			st.fin.Media.FirstEvent = idx + 1
			dst = append(dst, adapter.Record{Kind: record.EventContent, Event: idx, Tokens: adapter.TokensUnknown})
		case ev.Flags&adapter.EventWholeBody != 0:
			dst, err = st.whole(in.a.API, ev.Data, idx, dst)
		default:
			dst, err = st.event(in.a.API, ev, idx, dst)
		}
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// speech counts one read of a speech stream (FramingRaw) or its whole body.
func (st *state) speech(ev *adapter.Event, idx uint32, dst []adapter.Record) []adapter.Record {
	if len(ev.Data) == 0 {
		return dst
	}
	if len(st.head) < wavHeadKeep {
		st.head = append(st.head, ev.Data[:min(len(ev.Data), wavHeadKeep-len(st.head))]...)
	}
	st.bytes += int64(len(ev.Data))
	if st.fin.Media.FirstEvent == 0 {
		st.fin.Media.FirstEvent = idx + 1
	}
	return append(dst, adapter.Record{Kind: record.EventContent, Event: idx, Tokens: adapter.TokensUnknown})
}

// wavHeadKeep is how much of a speech stream is kept for its header.
const wavHeadKeep = 4096

// speechAudio returns the audio bytes and duration of a speech response
// of n bytes beginning with head: a WAV's data chunk at its header's
// rate, else raw PCM as OpenAI sends it (24 kHz, 16-bit, mono).
func speechAudio(head []byte, n int64) (int64, int64) {
	if h, off, _, err := media.ParseWAVHeader(head); err == nil {
		data := n - int64(off)
		return data, int64(pcmDuration(data, h.SampleRate, h.Channels, h.Depth))
	}
	return n, int64(pcmDuration(n, 24000, 1, 16))
}

// body is the JSON of every response these APIs send as one object: an
// images response, a transcription, a video job, a streamed event, an
// error.
type body struct {
	Type string `json:"type"`
	Data []struct {
		B64 *string `json:"b64_json"`
		URL *string `json:"url"`
	} `json:"data"`
	B64      *string         `json:"b64_json"`
	Audio    *string         `json:"audio"`
	Text     *string         `json:"text"`
	Delta    *string         `json:"delta"`
	ID       string          `json:"id"`
	Object   string          `json:"object"`
	Status   string          `json:"status"`
	Progress *json.Number    `json:"progress"`
	Usage    json.RawMessage `json:"usage"`
	Error    json.RawMessage `json:"error"`
	Detail   json.RawMessage `json:"detail"`
}

// decode reads one JSON object of b; a body of another shape is
// malformed.
func decode(b []byte) (*body, error) {
	var v body
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", adapter.ErrMalformed, err)
	}
	return &v, nil
}

// errorOf sets fin's error from v's error member, if it has one.
func (st *state) errorOf(v *body) bool {
	e := bytes.TrimSpace(v.Error)
	if len(e) == 0 || string(e) == "null" {
		if v.Type != "error" {
			return false
		}
	}
	msg := string(e)
	var o struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(e, &o) == nil && o.Message != "" {
		msg = o.Message
		if o.Code != nil {
			msg = fmt.Sprintf("%v: %s", o.Code, o.Message)
		}
	}
	if msg == "" {
		msg = "error event"
	}
	st.fin.Valid |= adapter.ValidError
	st.fin.ErrorMessage = []byte(msg)
	return true
}

// whole parses a non-streamed response body.
func (st *state) whole(api API, b []byte, idx uint32, dst []adapter.Record) ([]adapter.Record, error) {
	v, err := decode(b)
	if err != nil {
		return dst, err
	}
	if api == Video && v.ID != "" && adapter.ParseJobStatus([]byte(v.Status)) == adapter.JobFailed {
		// A failed job is the job's answer, not an error of this
		// response: the engine fails the request with its message.
		if st.errorOf(v) {
			st.fin.Valid &^= adapter.ValidError
		}
		st.fin.Job = adapter.JobState{ID: []byte(v.ID), Status: adapter.JobFailed, Progress: -1}
		return append(dst, adapter.Record{Kind: record.EventContent, Event: idx, Tokens: adapter.TokensUnknown}), nil
	}
	if st.errorOf(v) {
		return append(dst, adapter.Record{Kind: record.EventError, Event: idx}), nil
	}
	switch api {
	case Images:
		if v.Data == nil {
			return dst, fmt.Errorf(`%w: an images response without "data"`, adapter.ErrMalformed)
		}
		for _, d := range v.Data {
			if d.B64 == nil && d.URL == nil {
				return dst, fmt.Errorf(`%w: an image with neither "b64_json" nor "url"`, adapter.ErrMalformed)
			}
			st.fin.Media.Items++
			if d.B64 != nil {
				st.fin.Media.Bytes += b64Len(*d.B64)
			}
		}
		if st.fin.Media.Items > 0 {
			st.fin.Media.FirstEvent = idx + 1
			dst = append(dst, adapter.Record{Kind: record.EventContent, Event: idx, Tokens: adapter.TokensUnknown})
		}
	case Transcription:
		if v.Text == nil {
			return dst, fmt.Errorf(`%w: a transcription without "text"`, adapter.ErrMalformed)
		}
		st.text += len(*v.Text)
		st.usage(v.Usage)
		dst = append(dst, adapter.Record{Kind: record.EventContent, Event: idx, TextBytes: uint32(len(*v.Text)), Tokens: adapter.TokensUnknown})
	case Video:
		if v.ID == "" {
			return dst, fmt.Errorf(`%w: a video job without "id"`, adapter.ErrMalformed)
		}
		st.fin.Job.ID = []byte(v.ID)
		st.fin.Job.Status = adapter.ParseJobStatus([]byte(v.Status))
		st.fin.Job.Progress = -1
		if v.Progress != nil {
			if p, err := v.Progress.Float64(); err == nil {
				st.fin.Job.Progress = int32(p)
			}
		}
		if st.fin.Job.Status == adapter.JobUnknown {
			return dst, fmt.Errorf("%w: video job status %q unknown", adapter.ErrMalformed, v.Status)
		}
		// A job's state is its content: every answer counts as one.
		dst = append(dst, adapter.Record{Kind: record.EventContent, Event: idx, Tokens: adapter.TokensUnknown})
	}
	return dst, nil
}

// event parses one SSE event of a streamed images or transcription
// response.
func (st *state) event(api API, ev *adapter.Event, idx uint32, dst []adapter.Record) ([]adapter.Record, error) {
	data := bytes.TrimSpace(ev.Data)
	if ev.Flags&adapter.EventDone != 0 || string(data) == "[DONE]" || len(data) == 0 {
		return append(dst, adapter.Record{Kind: record.EventMeta, Event: idx}), nil
	}
	v, err := decode(data)
	if err != nil {
		return dst, err
	}
	typ := v.Type
	if typ == "" {
		typ = string(ev.Name)
	}
	if st.errorOf(v) || typ == "error" {
		if st.fin.Valid&adapter.ValidError == 0 {
			st.fin.Valid |= adapter.ValidError
			st.fin.ErrorMessage = []byte("error event")
		}
		return append(dst, adapter.Record{Kind: record.EventError, Event: idx}), nil
	}
	content := adapter.Record{Kind: record.EventContent, Event: idx, Tokens: adapter.TokensUnknown}
	switch typ {
	case "image_generation.partial_image", "image_edit.partial_image":
		st.fin.Media.Partials++
	case "image_generation.completed", "image_edit.completed":
		st.fin.Media.Items++
		if v.B64 != nil {
			st.fin.Media.Bytes += b64Len(*v.B64)
		}
	case "speech.audio.delta":
		if v.Audio != nil {
			st.bytes += b64Len(*v.Audio)
		}
		if st.fin.Media.FirstEvent == 0 {
			st.fin.Media.FirstEvent = idx + 1
		}
	case "speech.audio.done":
		st.usage(v.Usage)
		st.fin.FinishReason = adapter.FinishStop
		st.fin.Valid |= adapter.ValidFinishReason
		return append(dst, adapter.Record{Kind: record.EventFinish, Event: idx, Aux0: uint32(adapter.FinishStop)}), nil
	case "transcript.text.delta":
		if v.Delta != nil {
			st.text += len(*v.Delta)
			content.TextBytes = uint32(len(*v.Delta))
		}
	case "transcript.text.done":
		st.usage(v.Usage)
		st.fin.FinishReason = adapter.FinishStop
		st.fin.Valid |= adapter.ValidFinishReason
		if st.text > 0 || v.Text == nil || *v.Text == "" {
			return append(dst, adapter.Record{Kind: record.EventFinish, Event: idx, Aux0: uint32(adapter.FinishStop)}), nil
		}
		content.TextBytes = uint32(len(*v.Text)) // no deltas came: the text is here
	default:
		return append(dst, adapter.Record{Kind: record.EventMeta, Event: idx}), nil
	}
	if api == Images && st.fin.Media.FirstEvent == 0 {
		st.fin.Media.FirstEvent = idx + 1
	}
	return append(dst, content), nil
}

// usage takes a transcription's usage: tokens (prompt = audio input
// tokens) or, for duration-billed models, nothing countable.
func (st *state) usage(u json.RawMessage) {
	if len(u) == 0 {
		return
	}
	var v struct {
		InputTokens  *int32 `json:"input_tokens"`
		OutputTokens *int32 `json:"output_tokens"`
	}
	if json.Unmarshal(u, &v) != nil {
		return
	}
	if v.InputTokens != nil {
		st.fin.PromptTokens, st.fin.Valid = uint32(max(*v.InputTokens, 0)), st.fin.Valid|adapter.ValidPromptTokens
	}
	if v.OutputTokens != nil {
		st.fin.CompletionTokens, st.fin.Valid = uint32(max(*v.OutputTokens, 0)), st.fin.Valid|adapter.ValidCompletionTokens
	}
}

// b64Len is the decoded length of standard base64 text s (padding and
// whitespace-free, as the APIs send it), without decoding it.
func b64Len(s string) int64 {
	n := len(s)
	pad := 0
	for pad < 2 && n-pad > 0 && s[n-pad-1] == '=' {
		pad++
	}
	return int64((n - pad) * 3 / 4)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
