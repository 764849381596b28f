package mediagen

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

func newInst(t testing.TB, api API, opts map[string]string) *Instance {
	t.Helper()
	a := Adapter{API: api}
	if api == Transcription {
		w, err := SynthWAV(time.Second, 8000, 1)
		if err != nil {
			t.Fatal(err)
		}
		a.Clip = w
	}
	in, err := a.NewInstance(&adapter.Config{Model: "m", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return in.(*Instance)
}

// parse runs events through one context and returns the records and final.
func parse(t testing.TB, in *Instance, flags adapter.OpenFlags, evs ...adapter.Event) ([]adapter.Record, adapter.Final, error) {
	t.Helper()
	if err := in.Open(1, flags); err != nil {
		t.Fatal(err)
	}
	recs, err := in.Parse(1, &adapter.Batch{Events: evs}, nil)
	var fin adapter.Final
	if cerr := in.Close(1, &fin); cerr != nil {
		t.Fatal(cerr)
	}
	return recs, fin, err
}

func TestBuildBodies(t *testing.T) {
	in := newInst(t, Images, map[string]string{"n": "2", "size": "64x64", "partial_images": "1"})
	var out adapter.HTTPRequest
	if err := in.Build(&adapter.BuildInput{PromptText: `a "cat"`, Flags: adapter.BuildStream}, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := string(out.Body), `{"model":"m","prompt":"a \"cat\"","stream":true,"n":2,"partial_images":1,"size":"64x64"}`; got != want || out.Path != "/v1/images/generations" {
		t.Fatalf("images body %s at %s\nwant %s", got, out.Path, want)
	}
	if err := in.Build(&adapter.BuildInput{PromptText: "p"}, &out); err != nil || strings.Contains(string(out.Body), "partial") {
		t.Fatalf("unstreamed images body %s (%v): partial_images only when streaming", out.Body, err)
	}
	sp := newInst(t, Speech, nil)
	if err := sp.Build(&adapter.BuildInput{PromptText: "hello"}, &out); err != nil ||
		string(out.Body) != `{"model":"m","input":"hello","voice":"alloy","response_format":"wav"}` {
		t.Fatalf("speech body %s, %v", out.Body, err)
	}
	// Forms: the transcription upload and a multipart video submit parse
	// back to their fields.
	for _, tc := range []struct {
		in   *Instance
		want map[string]string
	}{
		{newInst(t, Transcription, nil), map[string]string{"model": "m", "response_format": "json", "stream": "true"}},
		{newInst(t, Video, map[string]string{OptContentType: "multipart/form-data", "seconds": "4"}), map[string]string{"model": "m", "prompt": "p", "seconds": "4"}},
	} {
		if err := tc.in.Build(&adapter.BuildInput{PromptText: "p", Flags: adapter.BuildStream}, &out); err != nil {
			t.Fatal(err)
		}
		var ct string
		for _, h := range out.Header {
			if h.Name == "Content-Type" {
				ct = h.Value
			}
		}
		_, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatal(err)
		}
		mr := multipart.NewReader(bytes.NewReader(out.Body), params["boundary"])
		got := map[string]string{}
		var file []byte
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(p)
			if p.FormName() == "file" {
				file = b
				continue
			}
			got[p.FormName()] = string(b)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s form: %s = %q, want %q (all %v)", tc.in.a.Info().Name, k, got[k], v, got)
			}
		}
		if tc.in.a.API == Transcription && !bytes.Equal(file, tc.in.a.Clip.Data) {
			t.Errorf("transcription form: file of %d bytes, want the clip's %d", len(file), len(tc.in.a.Clip.Data))
		}
	}
}

func TestParseImages(t *testing.T) {
	img := base64.StdEncoding.EncodeToString(make([]byte, 100))
	in := newInst(t, Images, nil)
	recs, fin, err := parse(t, in, 0, adapter.Event{Flags: adapter.EventWholeBody,
		Data: []byte(`{"created":1,"data":[{"b64_json":"` + img + `"},{"url":"https://x/y.png"}]}`)})
	if err != nil || fin.Media.Items != 2 || fin.Media.Bytes != 100 || fin.Media.FirstEvent != 1 || len(recs) != 1 || recs[0].Kind != record.EventContent {
		t.Fatalf("whole: %v, media %+v, records %+v", err, fin.Media, recs)
	}
	recs, fin, err = parse(t, in, adapter.OpenStream,
		adapter.Event{Name: []byte("image_generation.partial_image"), Data: []byte(`{"type":"image_generation.partial_image","b64_json":"QUJD"}`)},
		adapter.Event{Data: []byte(`{"type":"image_generation.completed","b64_json":"` + img + `"}`)},
		adapter.Event{Flags: adapter.EventDone, Data: []byte("[DONE]")})
	if err != nil || fin.Media.Items != 1 || fin.Media.Partials != 1 || fin.Media.Bytes != 100 || fin.Media.FirstEvent != 1 || len(recs) != 3 {
		t.Fatalf("stream: %v, media %+v, records %+v", err, fin.Media, recs)
	}
	_, fin, _ = parse(t, in, adapter.OpenStream, adapter.Event{Name: []byte("error"), Data: []byte(`{"type":"error","error":{"message":"boom"}}`)})
	if fin.Valid&adapter.ValidError == 0 || string(fin.ErrorMessage) != "boom" {
		t.Fatalf("error event: %+v", fin)
	}
	if _, _, err := parse(t, in, 0, adapter.Event{Flags: adapter.EventWholeBody, Data: []byte(`{"data":[{}]}`)}); err == nil {
		t.Fatal("an image with neither b64_json nor url parsed")
	}
}

func TestParseTranscription(t *testing.T) {
	in := newInst(t, Transcription, nil)
	recs, fin, err := parse(t, in, adapter.OpenStream,
		adapter.Event{Data: []byte(`{"type":"transcript.text.delta","delta":"hel"}`)},
		adapter.Event{Data: []byte(`{"type":"transcript.text.delta","delta":"lo"}`)},
		adapter.Event{Data: []byte(`{"type":"transcript.text.done","text":"hello","usage":{"input_tokens":50,"output_tokens":2}}`)})
	if err != nil || len(recs) != 3 || recs[0].TextBytes != 3 || recs[2].Kind != record.EventFinish ||
		fin.PromptTokens != 50 || fin.CompletionTokens != 2 || fin.Media.AudioNS != int64(time.Second) {
		t.Fatalf("%v, records %+v, final %+v", err, recs, fin)
	}
}

func TestParseSpeechAcrossReads(t *testing.T) {
	w, err := SynthWAV(500*time.Millisecond, 24000, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := newInst(t, Speech, nil)
	// The header split across reads.
	_, fin, err := parse(t, in, adapter.OpenStream, adapter.Event{Data: w.Data[:10]}, adapter.Event{Data: w.Data[10:30]}, adapter.Event{Data: w.Data[30:]})
	if err != nil || fin.Media.AudioNS != int64(500*time.Millisecond) || fin.Media.Bytes != int64(len(w.Data)-44) || fin.Media.FirstEvent != 1 {
		t.Fatalf("%v, media %+v", err, fin.Media)
	}
	_, fin, _ = parse(t, in, adapter.OpenStream, adapter.Event{Data: make([]byte, 48000)})
	if fin.Media.AudioNS != int64(time.Second) {
		t.Fatalf("raw pcm: %+v, want 1 s (24 kHz 16-bit mono)", fin.Media)
	}
}

func TestParseVideoJob(t *testing.T) {
	in := newInst(t, Video, nil)
	_, fin, err := parse(t, in, 0, adapter.Event{Flags: adapter.EventWholeBody, Data: []byte(`{"id":"video_1","status":"in_progress","progress":40}`)})
	if err != nil || string(fin.Job.ID) != "video_1" || fin.Job.Status != adapter.JobInProgress || fin.Job.Progress != 40 {
		t.Fatalf("%v, job %+v", err, fin.Job)
	}
	_, fin, err = parse(t, in, 0, adapter.Event{Flags: adapter.EventWholeBody, Data: []byte(`{"id":"video_1","status":"failed","error":{"message":"no"}}`)})
	if err != nil || fin.Job.Status != adapter.JobFailed || fin.Valid&adapter.ValidError != 0 || string(fin.ErrorMessage) != "no" {
		t.Fatalf("failed job: %v, %+v", err, fin)
	}
	var out adapter.HTTPRequest
	if err := in.ContentRequest([]byte("video_1"), &out); err != nil || out.Path != "/v1/videos/video_1/content" || out.Method != adapter.MethodGET {
		t.Fatalf("content request %+v, %v", out, err)
	}
	video := []byte("\x00\x00\x00\x18ftypmp42 video bytes")
	_, fin, _ = parse(t, in, 0, adapter.Event{Flags: adapter.EventWholeBody, Data: video})
	if fin.Media.Items != 1 || fin.Media.Bytes != int64(len(video)) {
		t.Fatalf("content: %+v", fin.Media)
	}
	for _, id := range []string{"", "../x", "a b", strings.Repeat("x", 300)} {
		if err := in.PollRequest([]byte(id), &out); err == nil {
			t.Errorf("job id %q accepted into a path", id)
		}
	}
}

func TestB64Len(t *testing.T) {
	for n := range 20 {
		s := base64.StdEncoding.EncodeToString(make([]byte, n))
		if got := b64Len(s); got != int64(n) {
			t.Errorf("b64Len of %d bytes' text %q = %d", n, s, got)
		}
	}
}
