package mockserver

import (
	"bytes"
	"encoding/binary"
	"mime/multipart"
	"testing"
	"time"
)

// FuzzMediaRequest: the generation endpoints' request decoder (JSON or a
// multipart form) never panics, and a form it reads back has the fields
// it was written with.
func FuzzMediaRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","prompt":"p","n":2,"size":"64x64"}`), "application/json", "p", "4")
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--b--\r\n"), "multipart/form-data; boundary=b", "x", "")
	f.Fuzz(func(t *testing.T, body []byte, ct, prompt, seconds string) {
		_, _ = decodeMediaRequest(body, ct)
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("prompt", prompt)
		_ = w.WriteField("seconds", seconds)
		_ = w.Close()
		m, err := decodeMediaRequest(buf.Bytes(), w.FormDataContentType())
		if err != nil || m.Prompt != prompt || m.Seconds != seconds {
			t.Fatalf("form round trip: %+v, %v; want prompt %q seconds %q", m, err, prompt, seconds)
		}
	})
}

// FuzzWAVDuration: the mock's WAV reader never panics, and reads a
// header it wrote with its length.
func FuzzWAVDuration(f *testing.F) {
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"), uint16(100))
	f.Fuzz(func(t *testing.T, b []byte, samples uint16) {
		_, _ = wavDuration(b)
		clip := appendWAVHeader(nil, 8000, 2*int(samples))
		for range samples {
			clip = binary.LittleEndian.AppendUint16(clip, 1)
		}
		d, err := wavDuration(clip)
		if want := time.Duration(samples) * time.Second / 8000; err != nil || d != want {
			t.Fatalf("%d samples: %v, %v; want %v", samples, d, err, want)
		}
	})
}
