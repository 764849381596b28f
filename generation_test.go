package reprise

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter/mediagen"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// fastMedia is a mock server with a quick generation latency model.
func fastMedia(c *mockserver.Config) {
	c.TTFT, c.ITL = time.Millisecond, 0
	c.ImageTime, c.AudioPerSecond = 20*time.Millisecond, 10*time.Millisecond
	c.VideoQueue, c.VideoFrameTime, c.VideoFPS = 30*time.Millisecond, time.Millisecond, 10
}

// logsByID groups the oracle log by X-Request-Id.
func logsByID(t *testing.T, srv *mockserver.Server) map[string][]mockserver.RequestLog {
	m := map[string][]mockserver.RequestLog{}
	for _, l := range serverLog(t, srv) {
		m[l.ClientRequestID] = append(m[l.ClientRequestID], l)
	}
	return m
}

// TestRunImageGeneration: image_generation, whole and streamed with two
// partial images: every record's image count, partials and decoded bytes
// are the mock's, its time to first media is the first partial (or the
// whole body) and its latency spans the last image's write; the summary's
// images/s is the images over the benchmark duration.
func TestRunImageGeneration(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := startMock(t, fastMedia)
		res, reqs := runNative(t, srv, func(o *Options) {
			o.Endpoint, o.Streaming = "image_generation", stream
			o.Adapter.Config = `{"n":"2","size":"64x48","partial_images":"2"}`
		}, 16, 1, 6)
		logs := logsByID(t, srv)
		var images int64
		for _, r := range reqs {
			if !r.OK() {
				t.Fatalf("stream %v: request %d: %s %s", stream, r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			ls := logs[strconv.FormatUint(r.RequestID, 10)]
			if len(ls) != 1 || ls[0].Media == nil {
				t.Fatalf("stream %v: request %d: oracle %+v", stream, r.RequestID, ls)
			}
			m := ls[0].Media
			if m.Width != 64 || m.Height != 48 || m.Items != 2 {
				t.Fatalf("stream %v: request %d: server made %d images of %dx%d, want 2 of 64x48", stream, r.RequestID, m.Items, m.Width, m.Height)
			}
			wantPartials := 0
			if stream {
				wantPartials = 4
			}
			if int(r.MediaItems) != m.Items || int(r.MediaPartials) != m.Partials || m.Partials != wantPartials || r.MediaBytes != m.Bytes {
				t.Errorf("stream %v: request %d: client %d images, %d partials, %d bytes; server %d, %d, %d (want %d partials)",
					stream, r.RequestID, r.MediaItems, r.MediaPartials, r.MediaBytes, m.Items, m.Partials, m.Bytes, wantPartials)
			}
			// Causality: the first media's read comes after its write began,
			// and the last image's read after the server's last write began.
			first := ls[0].Events[0]
			last := ls[0].Events[len(ls[0].Events)-1]
			if r.SentNS+r.FirstMediaNS < first.StartNS || r.SentNS+r.E2ENS < last.StartNS || r.FirstMediaNS <= 0 {
				t.Errorf("stream %v: request %d: first media at %d, last at %d; server wrote them from %d and %d",
					stream, r.RequestID, r.SentNS+r.FirstMediaNS, r.SentNS+r.E2ENS, first.StartNS, last.StartNS)
			}
			if stream && r.TTFTNS != r.FirstMediaNS {
				t.Errorf("request %d: TTFT %d ns, first partial %d ns: a streamed image's first event is its TTFT", r.RequestID, r.TTFTNS, r.FirstMediaNS)
			}
			if stream && r.FirstMediaNS >= r.E2ENS {
				t.Errorf("request %d: first partial at %d ns, not before the final image at %d ns", r.RequestID, r.FirstMediaNS, r.E2ENS)
			}
			images += int64(r.MediaItems)
		}
		s := res.Summary
		if s.TotalMediaItems != images || images != 12 {
			t.Fatalf("stream %v: summary %d images, records %d; want 12", stream, s.TotalMediaItems, images)
		}
		if want := float64(images) / s.BenchmarkDuration.Seconds(); s.MediaThroughput != want {
			t.Errorf("stream %v: images/s %v, want %v", stream, s.MediaThroughput, want)
		}
		if s.Metrics["time_to_first_media"] == nil || s.Run.EndpointKind != "images" {
			t.Errorf("stream %v: summary metrics %v, kind %q", stream, s.Metrics, s.Run.EndpointKind)
		}
	}
}

// TestMockImageIsRealPNG: the mock's images decode to the asked size.
func TestMockImageIsRealPNG(t *testing.T) {
	srv := startMock(t, fastMedia)
	res, err := httpPost(srv.URL()+"/v1/images/generations", `{"model":"m","prompt":"p","size":"33x17"}`)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(res, `"b64_json":"`)
	if i < 0 {
		t.Fatalf("body %.200s", res)
	}
	b64 := res[i+len(`"b64_json":"`):]
	b64 = b64[:strings.IndexByte(b64, '"')]
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width != 33 || cfg.Height != 17 {
		t.Fatalf("png %+v, %v; want 33x17", cfg, err)
	}
}

// TestRunVideoGeneration: video_generation as JSON and as a multipart
// form, with content download: every job is polled until done, the
// record's queue and generation times bracket the mock's (a poll only
// finds a change after it happened, within one poll interval plus the
// poll's own time), its polls are the mock's status answers and its
// download is the mock's content; over HTTP/1.1 and HTTP/2.
func TestRunVideoGeneration(t *testing.T) {
	for _, tc := range []struct {
		ct    string
		http2 bool
	}{{"application/json", false}, {"multipart/form-data", false}, {"application/json", true}} {
		ct := tc.ct
		srv := startMock(t, fastMedia)
		_, reqs := runNative(t, srv, func(o *Options) {
			o.HTTP2 = tc.http2
			o.Endpoint = "video_generation"
			o.Adapter.Config = `{"seconds":"2","size":"32x16"}`
			o.Generation.RequestContentType = ct
			o.Generation.DownloadVideo = true
			o.Generation.JobPollInterval = 10 * time.Millisecond
		}, 16, 1, 4)
		logs := logsByID(t, srv)
		sawGeneration := 0
		for _, r := range reqs {
			if !r.OK() {
				t.Fatalf("%s: request %d: %s %s", ct, r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			ls := logs[strconv.FormatUint(r.RequestID, 10)]
			var polls int
			var content *mockserver.MediaLog
			for _, l := range ls[1:] {
				if strings.HasSuffix(l.Endpoint, "/content") {
					content = l.Media
				} else {
					polls++
				}
			}
			sub := ls[0].Media
			if ls[0].Endpoint != "/v1/videos" || sub == nil || sub.Frames != 20 || sub.Width != 32 || content == nil {
				t.Fatalf("%s: request %d: oracle %+v", ct, r.RequestID, ls)
			}
			if int(r.JobPolls) != polls || r.MediaItems != 1 || r.MediaBytes != content.Bytes || r.JobDownloadNS <= 0 {
				t.Errorf("%s: request %d: %d polls, %d items of %d bytes, download %d ns; server %d polls, %d bytes",
					ct, r.RequestID, r.JobPolls, r.MediaItems, r.MediaBytes, r.JobDownloadNS, polls, content.Bytes)
			}
			// The client saw "started" no earlier than the job started, and
			// "done" no earlier than it was done.
			seenStart := r.SentNS + (r.E2ENS - r.JobDownloadNS - r.JobGenerationNS)
			seenDone := seenStart + r.JobGenerationNS
			if seenStart < sub.StartedNS || seenDone < sub.DoneNS {
				t.Errorf("%s: request %d: saw start %d, done %d; the job started %d, was done %d",
					ct, r.RequestID, seenStart, seenDone, sub.StartedNS, sub.DoneNS)
			}
			// The split is as fine as the polls: a poll delayed past the
			// job's end (a loaded machine) sees it completed without having
			// seen it in progress, and measures no generation time.
			if r.JobQueueNS <= 0 || r.JobGenerationNS < 0 {
				t.Errorf("%s: request %d: queue %d ns, generation %d ns", ct, r.RequestID, r.JobQueueNS, r.JobGenerationNS)
			}
			if r.JobGenerationNS > 0 {
				sawGeneration++
			}
		}
		if sawGeneration == 0 {
			t.Errorf("%s: no request of %d measured a generation time", ct, len(reqs))
		}
	}
}

// TestRunVideoJobFailures: a job the server fails, and one not done
// within --job-timeout, are failed requests with their kind and message;
// the run goes on.
func TestRunVideoJobFailures(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { fastMedia(c); c.VideoQueue = 50 * time.Millisecond })
	_, reqs := runNative(t, srv, func(o *Options) {
		o.Endpoint = "video_generation"
		o.Headers = []string{mockserver.FaultHeader + ": job-failed"}
		o.Generation.JobPollInterval = 5 * time.Millisecond
	}, 8, 1, 2)
	for _, r := range reqs {
		if r.ErrorKind != record.ErrJobFailed || !strings.Contains(r.ErrorMessage, "injected job failure") || r.JobPolls < 1 {
			t.Errorf("request %d: %s %q after %d polls; want job_failed with the server's message", r.RequestID, r.ErrorKind, r.ErrorMessage, r.JobPolls)
		}
	}
	srv = startMock(t, func(c *mockserver.Config) { fastMedia(c); c.VideoQueue = time.Hour })
	_, reqs = runNative(t, srv, func(o *Options) {
		o.Endpoint = "video_generation"
		o.Generation.JobPollInterval = 5 * time.Millisecond
		o.Generation.JobTimeout = 40 * time.Millisecond
	}, 8, 1, 2)
	for _, r := range reqs {
		if r.ErrorKind != record.ErrTimeout || !strings.Contains(r.ErrorMessage, "last status queued") {
			t.Errorf("request %d: %s %q; want a timeout saying the job was still queued", r.RequestID, r.ErrorKind, r.ErrorMessage)
		}
	}
}

// TestRunTranscription: a synthetic clip and a WAV file, whole and
// streamed: the audio seconds of every record are the clip the mock
// heard, the RTF is latency over that, streamed text deltas are content
// events, and the summary's audio throughput is the audio over the
// benchmark duration.
func TestRunTranscription(t *testing.T) {
	clip, err := mediagen.SynthWAV(1500*time.Millisecond, 8000, 7)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "clip.wav")
	if err := os.WriteFile(file, clip.Data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stream bool
		file   string
		want   time.Duration
	}{{false, "", 2 * time.Second}, {true, "", 2 * time.Second}, {true, file, 1500 * time.Millisecond}} {
		srv := startMock(t, fastMedia)
		res, reqs := runNative(t, srv, func(o *Options) {
			o.Endpoint, o.Streaming = "transcription", tc.stream
			o.Generation.TranscribeSeconds, o.Generation.AudioFile = 2, tc.file
		}, 8, 1, 4)
		logs := logsByID(t, srv)
		var audio int64
		for _, r := range reqs {
			if !r.OK() {
				t.Fatalf("%+v: request %d: %s %s", tc, r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			l := logs[strconv.FormatUint(r.RequestID, 10)][0]
			if l.Media == nil || l.Media.AudioNS != int64(tc.want) || r.AudioNS != l.Media.AudioNS {
				t.Fatalf("%+v: request %d: client audio %d ns, server heard %+v; want %v", tc, r.RequestID, r.AudioNS, l.Media, tc.want)
			}
			if tc.stream && int(r.ContentEvents) != l.OutputTokens {
				t.Errorf("%+v: request %d: %d content events, server sent %d words", tc, r.RequestID, r.ContentEvents, l.OutputTokens)
			}
			if int(r.ServerPromptTokens) != l.PromptTokens {
				t.Errorf("%+v: request %d: server prompt tokens %d, log %d", tc, r.RequestID, r.ServerPromptTokens, l.PromptTokens)
			}
			audio += r.AudioNS
		}
		s := res.Summary
		if s.TotalAudio != time.Duration(audio) || s.AudioThroughput != time.Duration(audio).Seconds()/s.BenchmarkDuration.Seconds() {
			t.Errorf("%+v: summary audio %v at %v audio s/s", tc, s.TotalAudio, s.AudioThroughput)
		}
		rtf := s.Metrics["real_time_factor"]
		if rtf == nil || rtf.Count != len(reqs) {
			t.Errorf("%+v: RTF %+v", tc, rtf)
		}
	}
}

// TestRunSpeech: speech streamed as WAV and as raw PCM: the audio
// seconds and bytes are the mock's, the time to first audio byte is the
// first chunk's read (after its write began, before the last chunk's);
// over HTTP/1.1 and HTTP/2.
func TestRunSpeech(t *testing.T) {
	for _, tc := range []struct {
		format string
		http2  bool
	}{{"wav", false}, {"pcm", false}, {"wav", true}} {
		format := tc.format
		srv := startMock(t, fastMedia)
		res, reqs := runNative(t, srv, func(o *Options) {
			o.HTTP2 = tc.http2
			o.Endpoint = "speech"
			o.Adapter.Config = `{"response_format":"` + format + `"}`
		}, 40, 1, 4)
		logs := logsByID(t, srv)
		for _, r := range reqs {
			if !r.OK() {
				t.Fatalf("%s: request %d: %s %s", format, r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			l := logs[strconv.FormatUint(r.RequestID, 10)][0]
			m := l.Media
			if m == nil || r.AudioNS != m.AudioNS || r.MediaBytes != m.Bytes || r.MediaItems != 1 {
				t.Fatalf("%s: request %d: client %d ns / %d bytes; server %+v", format, r.RequestID, r.AudioNS, r.MediaBytes, m)
			}
			first, last := l.Events[0], l.Events[len(l.Events)-1]
			if r.SentNS+r.FirstMediaNS < first.StartNS || r.SentNS+r.E2ENS < last.StartNS || (len(l.Events) > 1 && r.FirstMediaNS >= r.E2ENS) {
				t.Errorf("%s: request %d: first audio byte at %d, end %d; server chunks from %d to %d",
					format, r.RequestID, r.SentNS+r.FirstMediaNS, r.SentNS+r.E2ENS, first.StartNS, last.StartNS)
			}
		}
		if res.Summary.TotalAudio <= 0 || res.Summary.Metrics["time_to_first_media"] == nil {
			t.Errorf("%s: summary audio %v, metrics %v", format, res.Summary.TotalAudio, res.Summary.Metrics)
		}
	}
}

// TestGenerationBadInput: bad generation options are refused before
// anything is sent, each naming its option (and file).
func TestGenerationBadInput(t *testing.T) {
	dir := t.TempDir()
	notWAV := filepath.Join(dir, "notes.wav")
	if err := os.WriteFile(notWAV, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mut  func(*Options)
		want string
	}{
		{"missing file", func(o *Options) { o.Endpoint, o.Generation.AudioFile = "transcription", filepath.Join(dir, "nope.wav") }, "nope.wav"},
		{"not a wav", func(o *Options) { o.Endpoint, o.Generation.AudioFile = "transcription", notWAV }, "notes.wav: byte 0: not a PCM WAV"},
		{"content type", func(o *Options) { o.Endpoint, o.Generation.RequestContentType = "video_generation", "text/plain" }, "RequestContentType"},
		{"download without video", func(o *Options) { o.Endpoint, o.Generation.DownloadVideo = "image_generation", true }, "only video_generation"},
		{"poll interval", func(o *Options) { o.Endpoint, o.Generation.JobPollInterval = "video_generation", 0 }, "JobPollInterval"},
		{"bad n", func(o *Options) { o.Endpoint, o.Adapter.Config = "image_generation", `{"n":"two"}` }, "n=\"two\""},
	} {
		srv := startMock(t, fastMedia)
		o := NewOptions()
		o.URL, o.Model = srv.URL(), mockserver.DefaultModel
		o.Synthetic = SyntheticLoad{ISL: 8, OSL: 1}
		o.Replay.RequestCount, o.Replay.Concurrency = 1, 1
		o.Output.Dir = filepath.Join(t.TempDir(), "run")
		o.Telemetry.EndpointMetrics = false
		tc.mut(&o)
		_, err := Run(t.Context(), o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one saying %q", tc.name, err, tc.want)
		}
		for _, l := range serverLog(t, srv) {
			if l.Endpoint != "/v1/models" {
				t.Errorf("%s: %s was sent", tc.name, l.Endpoint)
			}
		}
	}
}

// httpPost posts a JSON body and returns the response body.
func httpPost(url, body string) (string, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestGenerationFaults: the mock's faults on the generation endpoints
// are failed records of the kind each fault means, never a crash, and the
// oracle logs each fault.
func TestGenerationFaults(t *testing.T) {
	for _, tc := range []struct {
		endpoint, fault string
		stream          bool
		want            record.ErrorKind
	}{
		{"image_generation", "error-event", true, record.ErrStreamError},
		{"image_generation", "malformed-sse", false, record.ErrMalformed},
		{"image_generation", "429", false, record.ErrHTTPStatus},
		{"transcription", "error-event", true, record.ErrStreamError},
		{"transcription", "reset-mid-stream", false, record.ErrReset},
		{"speech", "reset-mid-stream", true, record.ErrReset},
		{"video_generation", "500", false, record.ErrHTTPStatus},
	} {
		srv := startMock(t, fastMedia)
		_, reqs := runNative(t, srv, func(o *Options) {
			o.Endpoint, o.Streaming = tc.endpoint, tc.stream
			o.Headers = []string{mockserver.FaultHeader + ": " + tc.fault}
			o.Generation.TranscribeSeconds = 1
			o.Replay.RequestCount = 2
		}, 40, 1, 2)
		logs := logsByID(t, srv)
		for _, r := range reqs {
			if r.ErrorKind != tc.want {
				t.Errorf("%s with %s: request %d: %s %q; want %s", tc.endpoint, tc.fault, r.RequestID, r.ErrorKind, r.ErrorMessage, tc.want)
			}
			if ls := logs[strconv.FormatUint(r.RequestID, 10)]; len(ls) == 0 || ls[0].Fault != tc.fault {
				t.Errorf("%s with %s: request %d: oracle %+v", tc.endpoint, tc.fault, r.RequestID, ls)
			}
		}
	}
}

// TestRunSpeechSSE: speech streamed as speech.audio.delta events
// (stream_format "sse"): the audio seconds and bytes the client counted
// from the deltas' base64 equal what the mock made, and the first audio
// came after the mock began writing its first delta.
func TestRunSpeechSSE(t *testing.T) {
	srv := startMock(t, fastMedia)
	res, reqs := runNative(t, srv, func(o *Options) { o.Endpoint = "speech-sse" }, 40, 1, 4)
	logs := logsByID(t, srv)
	for _, r := range reqs {
		if !r.OK() {
			t.Fatalf("request %d: %s %s", r.RequestID, r.ErrorKind, r.ErrorMessage)
		}
		l := logs[strconv.FormatUint(r.RequestID, 10)][0]
		m := l.Media
		if m == nil || r.AudioNS != m.AudioNS || r.MediaBytes != m.Bytes || r.MediaItems != 1 {
			t.Fatalf("request %d: client %d ns / %d bytes; server %+v", r.RequestID, r.AudioNS, r.MediaBytes, m)
		}
		if first := l.Events[0]; r.SentNS+r.FirstMediaNS < first.StartNS || r.FirstMediaNS > r.E2ENS {
			t.Errorf("request %d: first audio at %d, end %d; the server's first delta at %d", r.RequestID, r.SentNS+r.FirstMediaNS, r.SentNS+r.E2ENS, first.StartNS)
		}
	}
	if res.Summary.TotalAudio <= 0 || res.Summary.Metrics["time_to_first_media"] == nil {
		t.Errorf("summary audio %v, metrics %v", res.Summary.TotalAudio, res.Summary.Metrics)
	}
}
