package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace/media"
)

// mediaDir writes a PNG (40×30), a JPEG (20×10), a WAV clip (0.5 s), a
// truncated PNG, a text file and a 50,000 × 50,000 PNG header into a new
// directory.
func mediaDir(t testing.TB) string {
	dir := t.TempDir()
	png, _ := media.SynthImage(media.ImageSpec{Width: 40, Height: 30, Format: "png", Seed: 1})
	jpg, _ := media.SynthImage(media.ImageSpec{Width: 20, Height: 10, Format: "jpeg", Seed: 2})
	wav, _ := media.SynthAudio(media.AudioSpec{Duration: 500 * time.Millisecond, Format: "wav", SampleRate: 8000, Depth: 16, Channels: 1})
	bomb := []byte("\x89PNG\r\n\x1a\n")
	ihdr := append([]byte("IHDR"), binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 50000), 50000)...)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	bomb = binary.BigEndian.AppendUint32(bomb, 13)
	bomb = binary.BigEndian.AppendUint32(append(bomb, ihdr...), crc32.ChecksumIEEE(ihdr))
	for name, b := range map[string][]byte{"a.png": png.Data, "b.jpg": jpg.Data, "c.wav": wav.Data,
		"cut.png": png.Data[:len(png.Data)/2], "notes.txt": []byte("not an image"), "bomb.png": bomb} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readMediaRows(t *testing.T, dir, name, text string, opts Options) ([]Row, error) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadAll(p, opts)
	return rows, err
}

// rawMedia returns the chat parts of a row's Raw "media".
func rawMedia(t *testing.T, r *Row) []map[string]json.RawMessage {
	t.Helper()
	var raw struct {
		Media []map[string]json.RawMessage `json:"media"`
	}
	if err := json.Unmarshal(r.Raw, &raw); err != nil {
		t.Fatalf("row %d: Raw %.200s: %v", r.Index, r.Raw, err)
	}
	return raw.Media
}

// TestAIPerfMediaRows: the image, images, audio and video fields of AIPerf
// rows become chat content parts in Raw (local paths as base64 data URLs,
// relative to the trace's directory; URLs as they are), counted in
// Row.Media. They used to be read and dropped.
func TestAIPerfMediaRows(t *testing.T) {
	dir := mediaDir(t)
	text := `{"text": "one", "image": "a.png"}
{"text": "two", "images": ["a.png", {"name": "x", "contents": ["b.jpg", "https://example.com/cat.png"]}], "audio": "c.wav"}
{"audios": ["c.wav"], "video": "https://example.com/v.mp4"}
`
	rows, err := readMediaRows(t, dir, "t.jsonl", text, Options{Format: FormatAIPerfSingle})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	want := []MediaStats{
		{Images: 1, ImageBytes: fileSize(t, dir, "a.png"), ImagePixels: 1200, ImageSizes: "40x30"},
		{Images: 3, ImageBytes: fileSize(t, dir, "a.png") + fileSize(t, dir, "b.jpg"), ImagePixels: 1400, ImageSizes: "40x30,20x10,?",
			Audios: 1, AudioBytes: fileSize(t, dir, "c.wav"), AudioDuration: 500 * time.Millisecond},
		{Audios: 1, AudioBytes: fileSize(t, dir, "c.wav"), AudioDuration: 500 * time.Millisecond, Videos: 1},
	}
	for i := range rows {
		if rows[i].Media != want[i] || rows[i].Images != want[i].Images {
			t.Errorf("row %d: %+v, want %+v", i, rows[i].Media, want[i])
		}
	}
	parts := rawMedia(t, &rows[1])
	if len(parts) != 4 || !bytes.HasPrefix(parts[0]["image_url"], []byte(`{"url":"data:image/png;base64,`)) ||
		!bytes.HasPrefix(parts[1]["image_url"], []byte(`{"url":"data:image/jpeg;base64,`)) ||
		string(parts[2]["image_url"]) != `{"url":"https://example.com/cat.png"}` || parts[3]["input_audio"] == nil {
		t.Errorf("row 1's parts: %.300s", rows[1].Raw)
	}
	if bytes.Contains(rows[1].Raw, []byte(`"images"`)) {
		t.Errorf("row 1 keeps its images field as well: %.200s", rows[1].Raw)
	}
}

func fileSize(t *testing.T, dir, name string) int {
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Size())
}

// TestMediaBadInput: a missing path, a corrupt image, a file that is no
// image, a decompression bomb, a data URL that is not base64 and an image
// over the caps are errors naming the file, line and field, before any
// row is returned.
func TestMediaBadInput(t *testing.T) {
	dir := mediaDir(t)
	for _, c := range []struct {
		row, field, msg string
		opts            Options
	}{
		{`{"text": "x", "image": "nope.png"}`, "image", "does not exist", Options{}},
		{`{"text": "x", "image": "cut.png"}`, "image", "corrupt", Options{}},
		{`{"text": "x", "images": ["a.png", "notes.txt"]}`, "images[1]", "not a PNG, JPEG", Options{}},
		{`{"text": "x", "image": "bomb.png"}`, "image", "2500000000 pixels", Options{}},
		{`{"text": "x", "image": "data:image/png,abcd"}`, "image", "not base64", Options{}},
		{`{"text": "x", "image": "a.png"}`, "image", "more than the 100 allowed", Options{MediaLimits: MediaLimits{MaxPixels: 100}}},
		{`{"text": "x", "audio": "a.png"}`, "audio", "not a WAV or MP3", Options{}},
		{`{"text": "x", "image": "a.png"}`, "image", "more than the 10 a request may carry", Options{MediaLimits: MediaLimits{MaxBytes: 10}}},
		{`{"text": "x", "image": 7}`, "image", "want a string", Options{}},
	} {
		c.opts.Format = FormatAIPerfSingle
		_, err := readMediaRows(t, dir, "bad.jsonl", `{"text": "fine"}`+"\n"+c.row+"\n", c.opts)
		pe, ok := errors.AsType[*ParseError](err)
		if !ok || pe.Line != 2 || pe.Field != c.field || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "bad.jsonl:2") {
			t.Errorf("%s: %v, want bad.jsonl:2 field %s mentioning %q", c.row, err, c.field, c.msg)
		}
	}
}

// TestShareGPTAndTableMedia: a LLaVA-style ShareGPT conversation's image
// goes with its first turn; a table's image and audio columns take paths,
// data URLs, bare base64 and {"bytes", "path"} cells.
func TestShareGPTAndTableMedia(t *testing.T) {
	dir := mediaDir(t)
	rows, err := readMediaRows(t, dir, "s.json", `[{"id": "1", "image": "a.png", "conversations": [{"from": "human", "value": "<image>\nwhat is it"}, {"from": "gpt", "value": "a square"}]}]`,
		Options{Format: FormatShareGPT})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Media.Images != 1 || rows[0].Media.ImageSizes != "40x30" {
		t.Fatalf("sharegpt rows %+v", rows)
	}
	jpg, _ := os.ReadFile(filepath.Join(dir, "b.jpg"))
	b64 := base64.StdEncoding.EncodeToString(jpg)
	table := `{"prompt": "p1", "image": "a.png", "audio": "c.wav"}
{"prompt": "p2", "image": {"bytes": "` + b64 + `", "path": null}}
{"prompt": "p3", "image": "` + b64 + `"}
`
	rows, err = readMediaRows(t, dir, "t.jsonl", table, Options{Format: FormatTable})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Media.ImageSizes != "40x30" || rows[0].Media.Audios != 1 || rows[1].Media.ImageSizes != "20x10" || rows[2].Media.ImageSizes != "20x10" {
		t.Fatalf("table rows: %+v %+v %+v", rows[0].Media, rows[1].Media, rows[2].Media)
	}
	if _, err := readMediaRows(t, dir, "t.csv", "prompt,image\np,nope.png\n", Options{Format: FormatTable}); err == nil || !strings.Contains(err.Error(), "t.csv:2: image") {
		t.Errorf("a CSV image column naming a missing file: %v", err)
	}
}
