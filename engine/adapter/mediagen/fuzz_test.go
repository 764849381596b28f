package mediagen

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// FuzzParseWAV: any bytes never panic; a clip SynthWAV made reads back
// with its duration; a parsed file's duration fits its bytes.
func FuzzParseWAV(f *testing.F) {
	w, _ := SynthWAV(100*time.Millisecond, 8000, 1)
	f.Add(w.Data, uint16(100))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt "), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, ms uint16) {
		if p, err := ParseWAV(b); err == nil {
			bytesPerSec := p.SampleRate * p.Channels * p.Bits / 8
			if p.Duration < 0 || int64(p.Duration) > int64(len(b))*int64(time.Second)/int64(bytesPerSec)+1 {
				t.Fatalf("duration %v for %d bytes at %d B/s", p.Duration, len(b), bytesPerSec)
			}
		}
		if ms == 0 {
			return
		}
		d := time.Duration(ms) * time.Millisecond
		s, err := SynthWAV(d, 8000, uint64(ms))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseWAV(s.Data)
		if err != nil || p.Duration != d {
			t.Fatalf("round trip of %v: %v, %v", d, p, err)
		}
	})
}

// FuzzGenerationEvent: any SSE event of the images or transcription
// stream, and any whole body of every API, never panics; a base64
// image's counted bytes are its decoded length.
func FuzzGenerationEvent(f *testing.F) {
	f.Add([]byte(`{"type":"image_generation.partial_image","b64_json":"QUJD"}`), []byte("image_generation.partial_image"), uint8(0))
	f.Add([]byte(`{"type":"transcript.text.delta","delta":"hi"}`), []byte(""), uint8(2))
	f.Add([]byte(`{"id":"video_1","status":"queued"}`), []byte(""), uint8(1))
	f.Add([]byte(`{"data":[{"b64_json":"QUJDRA=="}]}`), []byte(""), uint8(4))
	f.Fuzz(func(t *testing.T, data, name []byte, sel uint8) {
		api := API(sel % 4)
		a := Adapter{API: api}
		if api == Transcription {
			a.Clip, _ = SynthWAV(time.Second, 8000, 1)
		}
		inst, err := a.NewInstance(&adapter.Config{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		in := inst.(*Instance)
		flags := adapter.OpenStream
		ev := adapter.Event{Name: name, Data: data}
		if sel&4 != 0 {
			flags, ev.Flags = 0, adapter.EventWholeBody
		}
		if err := in.Open(1, flags); err != nil {
			t.Fatal(err)
		}
		_, perr := in.Parse(1, &adapter.Batch{Events: []adapter.Event{ev}}, nil)
		var fin adapter.Final
		if err := in.Close(1, &fin); err != nil {
			t.Fatal(err)
		}
		if perr != nil || api != Images {
			return
		}
		// Oracle: the decoded bytes of every b64_json string.
		var v struct {
			Type string `json:"type"`
			B64  string `json:"b64_json"`
			Data []struct {
				B64 string `json:"b64_json"`
			} `json:"data"`
		}
		if json.Unmarshal(data, &v) != nil {
			return
		}
		var want int64
		ok := true
		add := func(s string) {
			b, err := base64.StdEncoding.DecodeString(s)
			ok = ok && err == nil
			want += int64(len(b))
		}
		if sel&4 != 0 {
			for _, d := range v.Data {
				add(d.B64)
			}
		} else if v.Type == "image_generation.completed" {
			add(v.B64)
		}
		if ok && fin.Media.Bytes != want {
			t.Fatalf("%s: counted %d image bytes, decoded %d", data, fin.Media.Bytes, want)
		}
	})
}

// FuzzJobJSON: a video job answer's id and status read as encoding/json
// reads them, and never panic.
func FuzzJobJSON(f *testing.F) {
	f.Add([]byte(`{"id":"video_1","status":"in_progress","progress":12.5}`))
	f.Add([]byte(`{"id":"v","status":"failed","error":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, _ := Adapter{API: Video}.NewInstance(&adapter.Config{})
		if err := in.Open(1, 0); err != nil {
			t.Fatal(err)
		}
		_, perr := in.Parse(1, &adapter.Batch{Events: []adapter.Event{{Data: b, Flags: adapter.EventWholeBody}}}, nil)
		var fin adapter.Final
		_ = in.Close(1, &fin)
		var v struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if perr != nil || json.Unmarshal(b, &v) != nil || fin.Valid&adapter.ValidError != 0 {
			return
		}
		if string(fin.Job.ID) != v.ID || fin.Job.Status != adapter.ParseJobStatus([]byte(v.Status)) {
			t.Fatalf("%s: job %q %v; encoding/json %q %q", b, fin.Job.ID, fin.Job.Status, v.ID, v.Status)
		}
	})
}
