package mockserver

// The generation endpoints (design 0023): image generation, video jobs,
// transcription and speech, each with a latency model (per image, per
// audio second, per video frame) and its truth in RequestLog.Media.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

func (s *Server) mediaRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/images/generations", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, func(st *reqState, _ int64) { s.images(st, w, r) })
	})
	mux.HandleFunc("POST /v1/videos", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, func(st *reqState, recv int64) { s.videoSubmit(st, w, r, recv) })
	})
	mux.HandleFunc("GET /v1/videos/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, func(st *reqState, recv int64) { s.videoGet(st, w, r, recv, false) })
	})
	mux.HandleFunc("GET /v1/videos/{id}/content", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, func(st *reqState, recv int64) { s.videoGet(st, w, r, recv, true) })
	})
	mux.HandleFunc("POST /v1/audio/transcriptions", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, func(st *reqState, _ int64) { s.transcribe(st, w, r) })
	})
	mux.HandleFunc("POST /v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, func(st *reqState, _ int64) { s.speech(st, w, r) })
	})
}

// mediaRequest is a decoded generation request, JSON or multipart form.
type mediaRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	Input          string `json:"input"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	Seconds        string `json:"seconds"`
	Stream         bool   `json:"stream"`
	PartialImages  int    `json:"partial_images"`
	ResponseFormat string `json:"response_format"`
	StreamFormat   string `json:"stream_format"`
	Voice          string `json:"voice"`
	file           []byte
}

// decodeMediaRequest decodes body as JSON or as the multipart form
// contentType says. It never panics (FuzzMediaRequest).
func decodeMediaRequest(body []byte, contentType string) (*mediaRequest, error) {
	var m mediaRequest
	mt, params, _ := mime.ParseMediaType(contentType)
	if mt != "multipart/form-data" {
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("request body: %v", err)
		}
		return &m, nil
	}
	if params["boundary"] == "" {
		return nil, errors.New("multipart body without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("multipart body: %v", err)
		}
		var v bytes.Buffer
		if _, err := v.ReadFrom(p); err != nil {
			return nil, fmt.Errorf("multipart part %q: %v", p.FormName(), err)
		}
		switch p.FormName() {
		case "file":
			m.file = v.Bytes()
		case "model":
			m.Model = v.String()
		case "prompt":
			m.Prompt = v.String()
		case "seconds":
			m.Seconds = v.String()
		case "size":
			m.Size = v.String()
		case "stream":
			m.Stream = v.String() == "true"
		case "response_format":
			m.ResponseFormat = v.String()
		}
	}
	return &m, nil
}

// parseSize reads "WxH" (default def).
func parseSize(s, def string) (int, int, error) {
	if s == "" || s == "auto" {
		s = def
	}
	ws, hs, ok := strings.Cut(s, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 1 || h < 1 || w > maxImageSide || h > maxImageSide {
		return 0, 0, fmt.Errorf("size %q: want WIDTHxHEIGHT, each 1 to %d", s, maxImageSide)
	}
	return w, h, nil
}

// pngCache holds one PNG per size: generating is not what is measured.
var pngCache sync.Map // [2]int → []byte

func pngOf(w, h int) []byte {
	k := [2]int{w, h}
	if b, ok := pngCache.Load(k); ok {
		return b.([]byte)
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{uint8((x ^ y) & 0xff)})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // an in-memory encode of a valid image does not fail
	pngCache.Store(k, buf.Bytes())
	return buf.Bytes()
}

// mediaFault answers the faults that strike a whole-body media response
// in place of its body; true when it answered.
func (s *Server) mediaFault(st *reqState, w http.ResponseWriter) bool {
	switch {
	case st.faults.resetMid:
		st.log.Error = "injected reset"
		st.hs.reset()
		s.event(st, EventReset, 0, nil)
		return true
	case st.faults.errorEvent:
		s.writeError(st, w, 500, "Internal error while generating (injected by reprise mock-server).", "")
		return true
	}
	return false
}

// images serves POST /v1/images/generations: image i is done ImageTime
// after image i−1 (from admission); streamed, its partial k of P comes at
// (k+1)/(P+1) of its time.
func (s *Server) images(st *reqState, w http.ResponseWriter, r *http.Request) {
	lg := &st.log
	req, err := decodeMediaRequest(st.body, r.Header.Get("Content-Type"))
	if err != nil {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	if n < 1 || n > 10 || req.PartialImages < 0 || req.PartialImages > 3 {
		s.writeError(st, w, 400, "n must be 1 to 10 and partial_images 0 to 3", "")
		return
	}
	wd, ht, err := parseSize(req.Size, "256x256")
	if err != nil {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	lg.Stream = req.Stream
	ml := &MediaLog{Width: wd, Height: ht}
	lg.Media = ml
	admitted, ok := s.admit(r.Context(), st)
	if !ok {
		return
	}
	defer s.release()
	img := pngOf(wd, ht)
	b64 := base64.StdEncoding.EncodeToString(img)
	per := s.cfg.ImageTime + st.faults.stall
	if !req.Stream {
		st.due = admitted + int64(n)*int64(per)
		if !s.sleepUntil(r.Context(), st, st.due) || s.mediaFault(st, w) {
			return
		}
		b := append(st.buf[:0], `{"created":`...)
		b = strconv.AppendInt(b, s.wall(s.mono())/1e9, 10)
		b = append(b, `,"data":[`...)
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			if req.ResponseFormat == "url" {
				b = append(b, `{"url":"https://mock.invalid/images/`...)
				b = strconv.AppendUint(b, lg.Seq, 10)
				b = append(b, `.png"}`...)
			} else {
				b = append(b, `{"b64_json":"`...)
				b = append(b, b64...)
				b = append(b, `"}`...)
				ml.Bytes += int64(len(img))
			}
		}
		b = append(b, `],"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`...)
		st.buf = b
		ml.Items = n
		s.writeBody(st, w, b, EventMedia)
		return
	}
	h := w.Header()
	s.setHeaders(h, true)
	lg.Status = http.StatusOK
	w.WriteHeader(http.StatusOK)
	for i := range n {
		start := admitted + int64(i)*int64(per)
		for k := range req.PartialImages {
			st.due = start + int64(per)*int64(k+1)/int64(req.PartialImages+1)
			if !s.sleepUntil(r.Context(), st, st.due) {
				return
			}
			b := append(st.buf[:0], "event: image_generation.partial_image\ndata: {\"type\":\"image_generation.partial_image\",\"partial_image_index\":"...)
			b = strconv.AppendInt(b, int64(k), 10)
			b = append(b, `,"b64_json":"`...)
			b = append(b, b64[:len(b64)/4/4*4]...) // a coarser image: a quarter
			b = append(b, "\"}\n\n"...)
			st.buf = b
			st.writeStart = s.mono()
			if !s.event(st, EventPartial, i, st.hs.write(b)) {
				return
			}
			ml.Partials++
		}
		st.due = start + int64(per)
		if !s.sleepUntil(r.Context(), st, st.due) {
			return
		}
		if i == n-1 && st.faults.midStream() && !s.mediaStreamFault(st, w) {
			return
		}
		b := append(st.buf[:0], "event: image_generation.completed\ndata: {\"type\":\"image_generation.completed\",\"b64_json\":\""...)
		b = append(b, b64...)
		b = append(b, "\",\"usage\":{\"input_tokens\":0,\"output_tokens\":0,\"total_tokens\":0}}\n\n"...)
		st.buf = b
		st.writeStart = s.mono()
		if !s.event(st, EventMedia, i, st.hs.write(b)) {
			return
		}
		ml.Items++
		ml.Bytes += int64(len(img))
	}
	lg.FinishReason = "stop"
}

// mediaStreamFault strikes a mid-stream fault in an SSE response: false
// when the response ends with it.
func (s *Server) mediaStreamFault(st *reqState, _ http.ResponseWriter) bool {
	switch {
	case st.faults.resetMid:
		st.log.Error = "injected reset"
		st.hs.reset()
		s.event(st, EventReset, 0, nil)
		return false
	case st.faults.errorEvent:
		b := append(st.buf[:0], "event: error\ndata: {\"type\":\"error\",\"error\":{\"code\":\"server_error\",\"message\":\"injected error event\"}}\n\n"...)
		st.writeStart = s.mono()
		s.event(st, EventError, 0, st.hs.write(b))
		st.log.Error = "injected error event"
		return false
	case st.faults.malformed:
		st.writeStart = s.mono()
		s.event(st, EventMalformed, 0, st.hs.write([]byte("data: {not json\n\n")))
		return false
	}
	return true
}

// writeBody writes a whole 200 JSON body b as one event of kind.
func (s *Server) writeBody(st *reqState, w http.ResponseWriter, b []byte, kind EventKind) {
	if st.faults.malformed {
		b = b[:len(b)/2]
		kind = EventMalformed
	}
	h := w.Header()
	s.setHeaders(h, false)
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	st.log.Status = http.StatusOK
	st.writeStart = s.mono()
	_, err := w.Write(b)
	if err == nil {
		err = st.hs.flush()
	}
	if s.event(st, kind, 0, err) {
		st.log.FinishReason = "stop"
	}
}

// videoSubmit serves POST /v1/videos: the job waits VideoQueue, then
// takes VideoFrameTime per frame (seconds × VideoFPS frames). Jobs run
// apart from the request slots (MaxNumSeqs), as a video server's queue
// does.
func (s *Server) videoSubmit(st *reqState, w http.ResponseWriter, r *http.Request, recv int64) {
	req, err := decodeMediaRequest(st.body, r.Header.Get("Content-Type"))
	if err != nil {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	if req.Prompt == "" {
		s.writeError(st, w, 400, "prompt: required", "")
		return
	}
	secs := 4
	if req.Seconds != "" {
		if secs, err = strconv.Atoi(req.Seconds); err != nil || secs < 1 || secs > 60 {
			s.writeError(st, w, 400, fmt.Sprintf("seconds %q: want 1 to 60", req.Seconds), "")
			return
		}
	}
	wd, ht, err := parseSize(req.Size, "320x180")
	if err != nil {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	jb := &job{id: "video_" + strconv.FormatUint(st.log.Seq, 10), model: req.Model, seconds: secs, width: wd, height: ht,
		frames: secs * s.cfg.VideoFPS, queued: recv, failed: st.faults.jobFailed}
	jb.started = recv + int64(s.cfg.VideoQueue+st.faults.stall)
	jb.done = jb.started + int64(jb.frames)*int64(s.cfg.VideoFrameTime)
	s.jobs.put(jb)
	s.writeJob(st, w, jb, recv)
}

// writeJob answers with jb's state at mono time t.
func (s *Server) writeJob(st *reqState, w http.ResponseWriter, jb *job, t int64) {
	status := jb.status(t)
	st.log.Media = &MediaLog{JobID: jb.id, Status: status, Width: jb.width, Height: jb.height, Frames: jb.frames,
		QueuedNS: s.wall(jb.queued), StartedNS: s.wall(jb.started), DoneNS: s.wall(jb.done)}
	progress := 0
	switch status {
	case "in_progress":
		progress = int(100 * (t - jb.started) / max(jb.done-jb.started, 1))
	case "completed", "failed":
		progress = 100
	}
	b := append(st.buf[:0], `{"id":"`...)
	b = append(b, jb.id...)
	b = append(b, `","object":"video","model":`...)
	b = jsonx.AppendString(b, jb.model)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","progress":`...)
	b = strconv.AppendInt(b, int64(progress), 10)
	b = append(b, `,"created_at":`...)
	b = strconv.AppendInt(b, s.wall(jb.queued)/1e9, 10)
	b = append(b, `,"seconds":"`...)
	b = strconv.AppendInt(b, int64(jb.seconds), 10)
	b = append(b, `","size":"`...)
	b = strconv.AppendInt(b, int64(jb.width), 10)
	b = append(b, 'x')
	b = strconv.AppendInt(b, int64(jb.height), 10)
	b = append(b, '"')
	if status == "failed" {
		b = append(b, `,"error":{"code":"video_generation_failed","message":"injected job failure"}`...)
	}
	st.buf = append(b, '}')
	s.writeBody(st, w, st.buf, EventBody)
}

// videoGet serves a job's status or, when done, its content.
func (s *Server) videoGet(st *reqState, w http.ResponseWriter, r *http.Request, recv int64, content bool) {
	jb := s.jobs.get(r.PathValue("id"))
	if jb == nil {
		s.writeError(st, w, 404, "no video job "+strconv.Quote(r.PathValue("id")), "")
		return
	}
	if !content {
		s.writeJob(st, w, jb, recv)
		return
	}
	if status := jb.status(recv); status != "completed" {
		s.writeError(st, w, 409, "video job "+jb.id+" is "+status+", not completed", "")
		return
	}
	if s.mediaFault(st, w) {
		return
	}
	n := jb.frames * videoFrameBytes
	b := append(st.buf[:0], 0, 0, 0, 24)
	b = append(b, "ftypmp42"...)
	for len(b) < n {
		b = append(b, byte(len(b)))
	}
	st.buf = b
	st.log.Media = &MediaLog{JobID: jb.id, Status: "completed", Items: 1, Bytes: int64(n), Frames: jb.frames,
		Width: jb.width, Height: jb.height, QueuedNS: s.wall(jb.queued), StartedNS: s.wall(jb.started), DoneNS: s.wall(jb.done)}
	h := w.Header()
	h["Server"] = hdrServer
	h["Content-Type"] = []string{"video/mp4"}
	h["Content-Length"] = []string{strconv.Itoa(n)}
	st.log.Status = http.StatusOK
	st.writeStart = s.mono()
	_, err := w.Write(b)
	if err == nil {
		err = st.hs.flush()
	}
	s.event(st, EventMedia, 0, err)
}

// wavDuration reads a PCM WAV's duration (the mock's own reader, apart
// from the client's).
// clipDuration is an uploaded clip's length: a WAV's from its chunks,
// another format's (MP3) as trace/media probes it.
func clipDuration(b []byte) (time.Duration, error) {
	if len(b) >= 4 && string(b[:4]) == "RIFF" {
		return wavDuration(b)
	}
	it, err := media.Probe(media.Audio, b, media.Limits{})
	if err != nil {
		return 0, fmt.Errorf("file: %v (want a WAV or MP3 clip)", err)
	}
	return it.Duration, nil
}

func wavDuration(b []byte) (time.Duration, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, errors.New("file: not a WAV file (RIFF/WAVE)")
	}
	var rate, align int
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int(binary.LittleEndian.Uint32(b[off+4:]))
		body := off + 8
		if id == "fmt " && body+16 <= len(b) {
			rate, align = int(binary.LittleEndian.Uint32(b[body+4:])), int(binary.LittleEndian.Uint16(b[body+12:]))
		}
		if id == "data" {
			if rate < 1 || align < 1 {
				return 0, errors.New("file: WAV data before a valid fmt chunk")
			}
			n := min(size, len(b)-body)
			return time.Duration(int64(n/align) * int64(time.Second) / int64(rate)), nil
		}
		if size < 0 || body+size > len(b) {
			break
		}
		off = body + size + size&1
	}
	return 0, errors.New("file: WAV without a data chunk")
}

// transcribe serves POST /v1/audio/transcriptions: AudioPerSecond per
// second of the uploaded clip; streamed, one word every 0.4 s of audio
// as transcript.text.delta events, then transcript.text.done.
func (s *Server) transcribe(st *reqState, w http.ResponseWriter, r *http.Request) {
	lg := &st.log
	req, err := decodeMediaRequest(st.body, r.Header.Get("Content-Type"))
	if err == nil && req.file == nil {
		err = errors.New("file: required (a multipart/form-data upload)")
	}
	var d time.Duration
	if err == nil {
		d, err = clipDuration(req.file)
	}
	if err != nil {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	lg.Stream = req.Stream
	lg.Media = &MediaLog{AudioNS: int64(d), Bytes: int64(len(req.file))}
	admitted, ok := s.admit(r.Context(), st)
	if !ok {
		return
	}
	defer s.release()
	work := time.Duration(float64(s.cfg.AudioPerSecond) * d.Seconds())
	words := max(int(math.Ceil(d.Seconds()/0.4)), 1)
	lg.PromptTokens = int(d / (20 * time.Millisecond)) // 50 audio tokens a second
	lg.OutputTokens = words
	usage := func(b []byte) []byte {
		b = append(b, `"usage":{"type":"tokens","input_tokens":`...)
		b = strconv.AppendInt(b, int64(lg.PromptTokens), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(words), 10)
		b = append(b, `,"total_tokens":`...)
		return append(strconv.AppendInt(b, int64(lg.PromptTokens+words), 10), '}')
	}
	text := strings.TrimSpace(strings.Repeat("word ", words))
	if !req.Stream {
		st.due = admitted + int64(work+st.faults.stall)
		if !s.sleepUntil(r.Context(), st, st.due) || s.mediaFault(st, w) {
			return
		}
		b := append(st.buf[:0], `{"text":"`...)
		b = append(b, text...)
		b = append(b, `",`...)
		st.buf = append(usage(b), '}')
		s.writeBody(st, w, st.buf, EventBody)
		return
	}
	s.setHeaders(w.Header(), true)
	lg.Status = http.StatusOK
	w.WriteHeader(http.StatusOK)
	for i := range words {
		st.due = admitted + int64(work)*int64(i+1)/int64(words+1)
		if !s.sleepUntil(r.Context(), st, st.due) {
			return
		}
		if i == words/2 && st.faults.midStream() && !s.mediaStreamFault(st, w) {
			return
		}
		b := append(st.buf[:0], `data: {"type":"transcript.text.delta","delta":"`...)
		if i > 0 {
			b = append(b, ' ')
		}
		st.buf = append(b, "word\"}\n\n"...)
		st.writeStart = s.mono()
		if !s.event(st, EventContent, 0, st.hs.write(st.buf)) {
			return
		}
	}
	st.due = admitted + int64(work)
	if !s.sleepUntil(r.Context(), st, st.due) {
		return
	}
	b := append(st.buf[:0], `data: {"type":"transcript.text.done","text":"`...)
	b = append(b, text...)
	b = append(b, `",`...)
	st.buf = append(usage(b), "}\n\n"...)
	st.writeStart = s.mono()
	if s.event(st, EventFinish, 0, st.hs.write(st.buf)) {
		lg.FinishReason = "stop"
	}
}

// speech serves POST /v1/audio/speech: len(input)/15 seconds of 24 kHz
// 16-bit mono audio, made at AudioPerSecond per second and sent in
// 0.1-second chunks as each is made (a WAV header first with
// response_format wav, the default; raw samples with pcm).
func (s *Server) speech(st *reqState, w http.ResponseWriter, r *http.Request) {
	lg := &st.log
	req, err := decodeMediaRequest(st.body, r.Header.Get("Content-Type"))
	if err == nil && req.Input == "" {
		err = errors.New("input: required")
	}
	if err == nil && req.ResponseFormat != "" && req.ResponseFormat != "wav" && req.ResponseFormat != "pcm" {
		err = fmt.Errorf("response_format %q: the mock server makes wav or pcm", req.ResponseFormat)
	}
	if err != nil {
		s.writeError(st, w, 400, err.Error(), "")
		return
	}
	chunk := speechRate / 10 // samples per chunk
	samples := max(len(req.Input)*speechRate/speechCharsPerSecond, chunk)
	ml := &MediaLog{Items: 1, AudioNS: int64(samples) * int64(time.Second) / speechRate, Bytes: int64(2 * samples)}
	lg.Media = ml
	lg.Stream = true
	admitted, ok := s.admit(r.Context(), st)
	if !ok {
		return
	}
	defer s.release()
	h := w.Header()
	h["Server"] = hdrServer
	sse := req.StreamFormat == "sse"
	if sse {
		h["Content-Type"] = []string{"text/event-stream"}
		req.ResponseFormat = "pcm" // the deltas carry raw samples
	} else if req.ResponseFormat == "pcm" {
		h["Content-Type"] = []string{"audio/pcm"}
	} else {
		h["Content-Type"] = []string{"audio/wav"}
	}
	lg.Status = http.StatusOK
	w.WriteHeader(http.StatusOK)
	chunks := (samples + chunk - 1) / chunk
	var ev []byte // an SSE event (sse)
	for i := range chunks {
		n := min(chunk, samples-i*chunk)
		// Chunk i is made when its audio's end is: AudioPerSecond per second.
		st.due = admitted + int64(float64(s.cfg.AudioPerSecond)*float64((i*chunk+n))/speechRate)
		if i == 0 {
			st.due += int64(st.faults.stall)
		}
		if !s.sleepUntil(r.Context(), st, st.due) {
			return
		}
		if i == chunks/2 && (st.faults.resetMid || st.faults.errorEvent || st.faults.malformed) {
			st.log.Error = "injected reset"
			st.hs.reset()
			s.event(st, EventReset, 0, nil)
			return
		}
		b := st.buf[:0]
		if i == 0 && req.ResponseFormat != "pcm" {
			b = appendWAVHeader(b, speechRate, 2*samples)
		}
		for k := range n {
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(8000*math.Sin(float64(i*chunk+k)/8))))
		}
		st.buf = b
		if sse {
			ev = appendSpeechDelta(ev[:0], b)
			b = ev
		}
		st.writeStart = s.mono()
		if !s.event(st, EventMedia, 0, st.hs.write(b)) {
			return
		}
	}
	if sse {
		b := append(ev[:0], `data: {"type":"speech.audio.done","usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(len(req.Input)/4+1), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(samples/240), 10)
		b = append(b, "}}\n\n"...)
		st.writeStart = s.mono()
		s.event(st, EventFinish, 0, st.hs.write(b))
	}
	lg.FinishReason = "stop"
}

// appendWAVHeader appends the 44-byte header of 16-bit mono PCM.
func appendWAVHeader(b []byte, rate, dataLen int) []byte {
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+dataLen))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*2))
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 16)
	b = append(b, "data"...)
	return le.AppendUint32(b, uint32(dataLen))
}

// appendSpeechDelta appends one speech.audio.delta SSE event carrying pcm.
func appendSpeechDelta(b, pcm []byte) []byte {
	b = append(b, `data: {"type":"speech.audio.delta","audio":"`...)
	b = base64.StdEncoding.AppendEncode(b, pcm)
	return append(b, "\"}\n\n"...)
}
