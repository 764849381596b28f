package reprise

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/trace/media"
)

// writeMedia writes a synthetic image or clip to dir/name and returns
// the item.
func writeMedia(t *testing.T, dir, name string, it media.Item) media.Item {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), it.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	return it
}

// mediaRun runs o against a fresh mock server that keeps its log and
// returns the records and the server's log by request id.
func mediaRun(t *testing.T, o Options) ([]record.Request, map[string]mockserver.RequestLog) {
	t.Helper()
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.KeepLog = true
		c.PrefillPerImage, c.PrefillPerAudioSecond = time.Millisecond, time.Millisecond
	})
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The summary's images and audio seconds are the records'.
	var images, audio int64
	for _, l := range serverLog(t, srv) {
		m := logMedia(l.InputMedia)
		images += int64(m.Images)
		audio += m.AudioNS
	}
	if res.Summary.TotalInputImages != images || int64(res.Summary.TotalInputAudio) != audio || images > 0 && res.Summary.InputImageThroughput <= 0 {
		t.Errorf("summary: %d images, %v of audio, %.1f images/s; the server got %d images, %v", res.Summary.TotalInputImages, res.Summary.TotalInputAudio,
			res.Summary.InputImageThroughput, images, time.Duration(audio))
	}
	reqs, err := arrowio.ReadRequests(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	logs := map[string]mockserver.RequestLog{}
	for _, l := range serverLog(t, srv) {
		logs[fmt.Sprint(l.ClientRequestID)] = l
	}
	return reqs, logs
}

// logMedia sums a server log's media as the records count them.
func logMedia(ls []mockserver.InputMediaLog) record.Media {
	var m record.Media
	var sizes []string
	for _, l := range ls {
		switch l.Kind {
		case "image":
			m.Images++
			m.ImageBytes += int64(l.Bytes)
			m.ImagePixels += int64(l.Width) * int64(l.Height)
			sizes = append(sizes, fmt.Sprintf("%dx%d", l.Width, l.Height))
		case "audio":
			m.Audios++
			m.AudioBytes += int64(l.Bytes)
			m.AudioNS += int64(l.Duration)
		case "video":
			m.Videos++
			m.VideoBytes += int64(l.Bytes)
		}
	}
	m.ImageSizes = strings.Join(sizes, ",")
	return m
}

// TestMediaDatasetAgainstMock replays an AIPerf single_turn dataset whose
// rows carry images (local PNG and JPEG files, a data URL) and WAV audio,
// and a multi_turn one sent with its history, against the mock server:
// the mock's log shows every image with its size and format and every
// clip with its length, per request, and the records agree. Before this
// the single_turn images were read and silently not sent.
func TestMediaDatasetAgainstMock(t *testing.T) {
	dir := t.TempDir()
	writeMedia(t, dir, "a.png", mustItem(t)(media.SynthImage(media.ImageSpec{Width: 64, Height: 48, Format: "png", Seed: 1})))
	jpg := writeMedia(t, dir, "b.jpg", mustItem(t)(media.SynthImage(media.ImageSpec{Width: 32, Height: 40, Format: "jpeg", Seed: 2})))
	wav := writeMedia(t, dir, "c.wav", mustItem(t)(media.SynthAudio(media.AudioSpec{Duration: 1500 * time.Millisecond, Format: "wav", SampleRate: 16000, Depth: 16, Channels: 1, Seed: 3})))
	var dataURL []byte
	dataURL = media.AppendDataURL(dataURL, &jpg)
	type want struct {
		images []string // "png 64x48"
		audios []time.Duration
	}
	cases := []struct {
		name, format, text string
		wants              []want
	}{
		{"single_turn", "aiperf-single",
			`{"text": "describe", "image": "a.png", "output_length": 3}` + "\n" +
				`{"text": "both", "images": ["a.png", "b.jpg"], "audio": "c.wav", "output_length": 3}` + "\n" +
				`{"text": "inline", "image": "` + string(dataURL) + `", "output_length": 3}` + "\n" +
				`{"audios": ["c.wav", "c.wav"], "output_length": 3}` + "\n",
			[]want{{images: []string{"png 64x48"}}, {images: []string{"png 64x48", "jpeg 32x40"}, audios: []time.Duration{wav.Duration}},
				{images: []string{"jpeg 32x40"}}, {audios: []time.Duration{wav.Duration, wav.Duration}}}},
		{"multi_turn", "aiperf-multi",
			`{"session_id": "s", "turns": [{"text": "one", "image": "a.png", "output_length": 3}, {"text": "two", "image": "b.jpg", "audio": "c.wav", "output_length": 3}]}` + "\n",
			[]want{{images: []string{"png 64x48"}}, {images: []string{"jpeg 32x40"}, audios: []time.Duration{wav.Duration}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".jsonl")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			o := NewOptions()
			o.Trace.Path, o.Trace.Format = path, c.format
			o.Replay.Concurrency = 1
			reqs, logs := mediaRun(t, o)
			if len(reqs) != len(c.wants) {
				t.Fatalf("%d records, want %d", len(reqs), len(c.wants))
			}
			sort.Slice(reqs, func(i, j int) bool { return reqs[i].RequestID < reqs[j].RequestID })
			for i, r := range reqs {
				if !r.OK() {
					t.Fatalf("request %d failed: %s %s", i, r.ErrorKind, r.ErrorMessage)
				}
				l, ok := logs[fmt.Sprint(r.RequestID)]
				if !ok {
					t.Fatalf("request %d: not in the server's log", r.RequestID)
				}
				var gotImages []string
				var gotAudio []time.Duration
				for _, m := range l.InputMedia {
					switch m.Kind {
					case "image":
						gotImages = append(gotImages, fmt.Sprintf("%s %dx%d", m.Format, m.Width, m.Height))
					case "audio":
						gotAudio = append(gotAudio, m.Duration)
					}
				}
				w := c.wants[i]
				if fmt.Sprint(gotImages) != fmt.Sprint(w.images) || fmt.Sprint(gotAudio) != fmt.Sprint(w.audios) {
					t.Errorf("request %d: the server got images %v and audio %v, want %v and %v", i, gotImages, gotAudio, w.images, w.audios)
				}
				if lm := logMedia(l.InputMedia); r.Media() != lm {
					t.Errorf("request %d: records say %+v, the server's log %+v", i, r.Media(), lm)
				}
			}
		})
	}
}

func mustItem(t *testing.T) func(media.Item, error) media.Item {
	return func(it media.Item, err error) media.Item {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
}

// TestMediaSyntheticAgainstMock sends a synthetic load with 2 images
// (PNG and JPEG, sizes drawn) and a WAV clip per request: the server
// decodes every image at the drawn size and format and every clip at its
// length, the records agree, and each request's images differ from the
// others' unless ImageReuse.
func TestMediaSyntheticAgainstMock(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		o := NewOptions()
		o.Synthetic = SyntheticLoad{ISL: 8, OSL: 2}
		o.Replay.Concurrency, o.Replay.RequestCount = 2, 6
		o.Media = MediaOptions{Images: 2, ImageWidthMean: 96, ImageWidthStdDev: 16, ImageHeightMean: 64, ImageHeightStdDev: 8,
			ImageFormat: "random", ImageReuse: reuse, Audios: 1, AudioLengthMean: 0.5, AudioLengthStdDev: 0.1,
			AudioSampleRates: []float64{8, 16}, AudioDepths: []int{16, 24}, AudioChannels: 2}
		reqs, logs := mediaRun(t, o)
		if len(reqs) != 6 {
			t.Fatalf("%d records, want 6", len(reqs))
		}
		// What was asked: the generator's draws for requests 0 … 5, as
		// a multiset (records come in completion order).
		gen := media.NewGenerator(mediaConfig(&o.Media), o.Replay.Seed)
		asked, got := map[string]int{}, map[string]int{}
		for i := range 6 {
			parts, err := gen.Request(nil, uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range parts {
				asked[fmt.Sprintf("%s %s %dx%d %v %d", p.Item.Kind, p.Item.Format, p.Item.Width, p.Item.Height, p.Item.Duration, len(p.Item.Data))]++
			}
		}
		bytesSeen := map[int]int{}
		for _, r := range reqs {
			if !r.OK() {
				t.Fatalf("request %d failed: %s %s", r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			l := logs[fmt.Sprint(r.RequestID)]
			if len(l.InputMedia) != 3 || l.InputMedia[0].Kind != "image" || l.InputMedia[1].Kind != "image" || l.InputMedia[2].Kind != "audio" {
				t.Fatalf("request %d: the server got %+v, want 2 images and 1 clip", r.RequestID, l.InputMedia)
			}
			if lm := logMedia(l.InputMedia); r.Media() != lm {
				t.Errorf("request %d: records say %+v, the server's log %+v", r.RequestID, r.Media(), lm)
			}
			for _, m := range l.InputMedia {
				bytesSeen[m.Bytes]++
				got[fmt.Sprintf("%s %s %dx%d %v %d", m.Kind, m.Format, m.Width, m.Height, m.Duration, m.Bytes)]++
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(asked) {
			t.Errorf("reuse %v: the server got\n%v\nasked\n%v", reuse, got, asked)
		}
		distinct := len(bytesSeen)
		switch {
		case reuse && distinct > 2+6: // 2 reused images + ≤ 6 clips
			t.Errorf("reuse: %d distinct media sizes, want the same 2 images in every request", distinct)
		case !reuse && distinct < 12:
			t.Errorf("no reuse: %d distinct media sizes over 6 requests × 3, want the images to differ", distinct)
		}
	}
}

// TestMediaServerRefusesImages serves what llama.cpp's llama-server
// without a vision projector answers to a request with an image
// (trace/media/testdata, recorded): every request is recorded as
// failed, with the status, the kind and the server's message, and the run
// goes on (a failed request is data).
func TestMediaServerRefusesImages(t *testing.T) {
	rec, err := os.ReadFile("trace/media/testdata/llamacpp_image_unsupported.http")
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(strings.ReplaceAll(string(rec), "\r\n", "\n"), "\n\n")
	if !ok || !strings.HasPrefix(head, "HTTP/1.1 500") {
		t.Fatalf("fixture: %q", head)
	}
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"image_url"`) {
			seen.Add(1)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(500)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	o := NewOptions()
	o.URL, o.Model = srv.URL, "tiny"
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 2}
	o.Replay.Concurrency, o.Replay.RequestCount = 1, 3
	o.Media = MediaOptions{Images: 1, ImageWidthMean: 16, ImageHeightMean: 16}
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := arrowio.ReadRequests(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 || seen.Load() != 3 {
		t.Fatalf("%d records, %d requests with an image seen", len(reqs), seen.Load())
	}
	for _, r := range reqs {
		if r.OK() || r.StatusCode != 500 || r.ErrorKind != record.ErrHTTPStatus || !strings.Contains(r.ErrorMessage, "image input is not supported") || r.InputImages != 1 {
			t.Errorf("request %d: ok %v status %d kind %s message %q images %d", r.RequestID, r.OK(), r.StatusCode, r.ErrorKind, r.ErrorMessage, r.InputImages)
		}
	}
	if res.Summary.ErrorRequestCount != 3 {
		t.Errorf("summary: %d errors, want 3", res.Summary.ErrorRequestCount)
	}
}

// TestMediaFFmpegAgainstMock sends synthetic MP3 audio and MP4 video
// (made with ffmpeg, which scripts/need-tools.sh installs): the mock
// decodes each, and the records agree with its log.
func TestMediaFFmpegAgainstMock(t *testing.T) {
	o := NewOptions()
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 2}
	o.Replay.Concurrency, o.Replay.RequestCount = 1, 2
	o.Media = MediaOptions{Audios: 1, AudioLengthMean: 1, AudioFormat: "mp3", Videos: 1, VideoDuration: 1, VideoFPS: 4, VideoWidth: 64, VideoHeight: 48}
	reqs, logs := mediaRun(t, o)
	if len(reqs) != 2 {
		t.Fatalf("%d records", len(reqs))
	}
	for _, r := range reqs {
		l := logs[fmt.Sprint(r.RequestID)]
		if !r.OK() || len(l.InputMedia) != 2 || l.InputMedia[0].Format != "mp3" || l.InputMedia[1].Kind != "video" || l.InputMedia[1].Format != "mp4" {
			t.Fatalf("request %d (%s %s): the server got %+v", r.RequestID, r.ErrorKind, r.ErrorMessage, l.InputMedia)
		}
		if lm := logMedia(l.InputMedia); r.Media() != lm || r.InputVideos != 1 || r.InputAudioNS < int64(900*time.Millisecond) {
			t.Errorf("request %d: records %+v, log %+v", r.RequestID, r.Media(), lm)
		}
	}
}

// TestMediaVideoAudioAgainstMock gives synthetic videos an audio track
// (AIPerf's --video-audio-*; the rate in AIPerf's kHz form): the mock
// reads each video's container and logs an audio track of the asked
// codec, rate and channels, as long as the video within one codec frame.
func TestMediaVideoAudioAgainstMock(t *testing.T) {
	for _, c := range []struct {
		format, codec, want string
		rate                float64
		hz, channels        int
	}{
		{"mp4", "", "aac", 22.05, 22050, 2},
		{"webm", "libopus", "opus", 16000, 16000, 1},
	} {
		o := NewOptions()
		o.Synthetic = SyntheticLoad{ISL: 8, OSL: 2}
		o.Replay.Concurrency, o.Replay.RequestCount = 1, 2
		o.Media = MediaOptions{Videos: 1, VideoDuration: 1.5, VideoFPS: 4, VideoWidth: 64, VideoHeight: 48, VideoFormat: c.format,
			VideoAudioChannels: c.channels, VideoAudioSampleRate: c.rate, VideoAudioCodec: c.codec}
		reqs, logs := mediaRun(t, o)
		if len(reqs) != 2 {
			t.Fatalf("%s: %d records", c.format, len(reqs))
		}
		frame := 2048 * time.Second / time.Duration(c.hz)
		for _, r := range reqs {
			l := logs[fmt.Sprint(r.RequestID)]
			if !r.OK() || len(l.InputMedia) != 1 || l.InputMedia[0].Format != c.format || l.InputMedia[0].AudioTrack == nil {
				t.Fatalf("%s request %d (%s %s): the server got %+v", c.format, r.RequestID, r.ErrorKind, r.ErrorMessage, l.InputMedia)
			}
			a := *l.InputMedia[0].AudioTrack
			if d := a.Duration - 1500*time.Millisecond; a.Codec != c.want || a.SampleRate != c.hz || a.Channels != c.channels || d < -frame || d > frame {
				t.Errorf("%s request %d: the server's audio track %+v, want %s at %d Hz, %d channels, 1.5 s ± %v", c.format, r.RequestID, a, c.want, c.hz, c.channels, frame)
			}
			if lm := logMedia(l.InputMedia); r.Media() != lm || r.InputVideos != 1 {
				t.Errorf("%s request %d: records %+v, log %+v", c.format, r.RequestID, r.Media(), lm)
			}
		}
	}
}
