package trace

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace/media"
)

var update = flag.Bool("update", false, "rewrite testdata/media_table.parquet")

// mediaTablePath is the Parquet dataset with image and audio columns
// that TestMediaParquetTable (here) and TestMediaParquetAgainstMock (in
// package reprise) read; mediaTableParquet makes it
// (go test ./trace -run TestMediaParquetTable -update).
const mediaTablePath = "testdata/media_table.parquet"

// hfMedia is Hugging Face's Image and Audio feature type:
// struct<bytes: binary, path: string>.
var hfMedia = arrow.StructOf(
	arrow.Field{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true},
	arrow.Field{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true},
)

// mediaTableItem is one cell item of the media table: an image (W×H, png
// or jpeg) or a WAV clip (Dur at 8 kHz, 8-bit mono).
type mediaTableItem struct {
	Format string
	W, H   int
	Dur    time.Duration
	Path   string // the struct's "path" (a name only: bytes win)
}

func (it mediaTableItem) bytes(t testing.TB, seed uint64) []byte {
	t.Helper()
	var m media.Item
	var err error
	if it.Dur > 0 {
		m, err = media.SynthAudio(media.AudioSpec{Duration: it.Dur, Format: "wav", SampleRate: 8000, Depth: 8, Channels: 1, Seed: seed})
	} else {
		m, err = media.SynthImage(media.ImageSpec{Width: it.W, Height: it.H, Format: it.Format, Seed: seed})
	}
	if err != nil {
		t.Fatal(err)
	}
	return m.Data
}

// mediaTableRow is one row of the media table. Image and Audio are
// Hugging Face struct cells (nil = a null cell), Images a list of them,
// AudioBytes a plain binary cell.
type mediaTableRow struct {
	Prompt     string
	Output     int64
	Image      *mediaTableItem
	Images     []mediaTableItem
	Audio      *mediaTableItem
	AudioBytes *mediaTableItem
}

var mediaTableRows = []mediaTableRow{
	{Prompt: "Describe the picture.", Output: 4,
		Image:  &mediaTableItem{Format: "png", W: 16, H: 12, Path: "square.png"},
		Images: []mediaTableItem{{Format: "png", W: 16, H: 12}, {Format: "jpeg", W: 8, H: 6}}},
	{Prompt: "Transcribe the clip.", Output: 3,
		Audio:      &mediaTableItem{Format: "wav", Dur: 250 * time.Millisecond},
		AudioBytes: &mediaTableItem{Format: "wav", Dur: 500 * time.Millisecond}},
	{Prompt: "What do you see and hear?", Output: 5,
		Image:      &mediaTableItem{Format: "jpeg", W: 8, H: 6, Path: "small.jpg"},
		Images:     []mediaTableItem{{Format: "png", W: 10, H: 10}},
		Audio:      &mediaTableItem{Format: "wav", Dur: 250 * time.Millisecond},
		AudioBytes: &mediaTableItem{Format: "wav", Dur: 250 * time.Millisecond}},
}

// mediaTableParquet writes mediaTableRows as one Parquet row group with
// the columns prompt, output_length, image, audio (Hugging Face structs),
// images (a list of them) and audio_bytes (binary).
func mediaTableParquet(t testing.TB) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "prompt", Type: arrow.BinaryTypes.String},
		{Name: "output_length", Type: arrow.PrimitiveTypes.Int64},
		{Name: "image", Type: hfMedia, Nullable: true},
		{Name: "images", Type: arrow.ListOf(hfMedia), Nullable: true},
		{Name: "audio", Type: hfMedia, Nullable: true},
		{Name: "audio_bytes", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	seed := uint64(1)
	appendStruct := func(sb *array.StructBuilder, it *mediaTableItem) {
		if it == nil {
			sb.AppendNull()
			return
		}
		sb.Append(true)
		sb.FieldBuilder(0).(*array.BinaryBuilder).Append(it.bytes(t, seed))
		seed++
		if it.Path == "" {
			sb.FieldBuilder(1).AppendNull()
		} else {
			sb.FieldBuilder(1).(*array.StringBuilder).Append(it.Path)
		}
	}
	for _, r := range mediaTableRows {
		b.Field(0).(*array.StringBuilder).Append(r.Prompt)
		b.Field(1).(*array.Int64Builder).Append(r.Output)
		appendStruct(b.Field(2).(*array.StructBuilder), r.Image)
		lb := b.Field(3).(*array.ListBuilder)
		lb.Append(true)
		for i := range r.Images {
			appendStruct(lb.ValueBuilder().(*array.StructBuilder), &r.Images[i])
		}
		appendStruct(b.Field(4).(*array.StructBuilder), r.Audio)
		if r.AudioBytes == nil {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.BinaryBuilder).Append(r.AudioBytes.bytes(t, seed))
			seed++
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithCreatedBy("reprise trace tests"), parquet.WithDictionaryDefault(false), parquet.WithStats(false), parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMediaParquetTable reads the committed media table (a Parquet file
// as Hugging Face datasets write one: Image and Audio features are
// struct<bytes, path> cells, a Sequence of images a list of them) with
// the default columns (image, audio) and with images and audio_bytes (a
// plain binary column): every row's media are counted with the sizes and
// lengths they were made with, and its Raw carries one chat part each.
// The committed file is also what mediaTableParquet makes today, so the
// fixture and its description cannot drift apart.
func TestMediaParquetTable(t *testing.T) {
	made := mediaTableParquet(t)
	if *update {
		if err := os.WriteFile(mediaTablePath, made, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		cols Columns
		want []MediaStats
	}{
		{"image-audio", Columns{}, []MediaStats{
			{Images: 1, ImageSizes: "16x12", ImagePixels: 192},
			{Audios: 1, AudioDuration: 250 * time.Millisecond},
			{Images: 1, ImageSizes: "8x6", ImagePixels: 48, Audios: 1, AudioDuration: 250 * time.Millisecond},
		}},
		{"images-audio_bytes", Columns{Image: "images", Audio: "audio_bytes"}, []MediaStats{
			{Images: 2, ImageSizes: "16x12,8x6", ImagePixels: 240},
			{Audios: 1, AudioDuration: 500 * time.Millisecond},
			{Images: 1, ImageSizes: "10x10", ImagePixels: 100, Audios: 1, AudioDuration: 250 * time.Millisecond},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, src := range []struct {
				name string
				path string
			}{{"committed", mediaTablePath}, {"made", writeTemp(t, made)}} {
				rows, _, err := ReadAll(src.path, Options{Format: FormatTable, Columns: c.cols})
				if err != nil {
					t.Fatalf("%s: %v", src.name, err)
				}
				var got []MediaStats
				for i := range rows {
					st := rows[i].Media
					if st.ImageBytes <= 0 != (st.Images == 0) || st.AudioBytes <= 0 != (st.Audios == 0) {
						t.Errorf("%s row %d: bytes %d image, %d audio for %d images, %d clips", src.name, i, st.ImageBytes, st.AudioBytes, st.Images, st.Audios)
					}
					if n := len(rawMedia(t, &rows[i])); n != st.Images+st.Audios {
						t.Errorf("%s row %d: %d chat parts for %d images and %d clips", src.name, i, n, st.Images, st.Audios)
					}
					if rows[i].OutputTokens != int(mediaTableRows[i].Output) || rows[i].Images != st.Images {
						t.Errorf("%s row %d: output %d, Images %d", src.name, i, rows[i].OutputTokens, rows[i].Images)
					}
					st.ImageBytes, st.AudioBytes = 0, 0
					got = append(got, st)
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("%s: media (-want +got):\n%s", src.name, d)
				}
			}
		})
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "media.parquet")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzParquetMedia: a Parquet table with image and audio columns (the
// committed media table, cut or altered) never panics the reader, every
// error is a ParseError with a row, and a row it accepts has valid JSON
// Raw with one chat part per image and clip it counts.
func FuzzParquetMedia(f *testing.F) {
	b, err := os.ReadFile(mediaTablePath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, uint8(0))
	f.Add(b, uint8(1))
	f.Add(b[:len(b)/2], uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		cols := [...]Columns{{}, {Image: "images", Audio: "audio_bytes"}, {Image: "audio", Audio: "image"}}[pick%3]
		rows, _ := readFuzz(t, data, Options{Format: FormatTable, Columns: cols, SkipInvalid: true})
		for i := range rows {
			var raw struct {
				Media []json.RawMessage `json:"media"`
			}
			if len(rows[i].Raw) == 0 {
				continue
			}
			if err := json.Unmarshal(rows[i].Raw, &raw); err != nil {
				t.Fatalf("row %d: Raw %.100q: %v", i, rows[i].Raw, err)
			}
			if st := rows[i].Media; len(raw.Media) != st.Images+st.Audios+st.Videos {
				t.Fatalf("row %d: %d parts for %+v", i, len(raw.Media), st)
			}
		}
	})
}

// TestMediaMooncakeRoundTrip: rows with media (the media table's) written
// as Mooncake lines (what synthesize writes) carry their "media" parts,
// and read back with the same counts, sizes and lengths; a bad part is an
// error naming the field.
func TestMediaMooncakeRoundTrip(t *testing.T) {
	rows, _, err := ReadAll(mediaTablePath, Options{Format: FormatTable, Columns: Columns{Image: "images", Audio: "audio_bytes"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, FormatMooncake)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		// A synthesized row: its length, and the media parts alone.
		_, parts, ok := media.CutMedia(rows[i].Raw, nil)
		if !ok {
			t.Fatalf("row %d: no media in Raw %.100q", i, rows[i].Raw)
		}
		rows[i].Raw = append(append([]byte(`{"media":`), parts...), '}')
		rows[i].InputTokens, rows[i].HasOffset = 8, true
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadAll(writeTempName(t, "m.jsonl", buf.Bytes()), Options{Format: FormatMooncake})
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rows) {
		t.Fatalf("%d rows back, want %d", len(back), len(rows))
	}
	for i := range rows {
		if d := cmp.Diff(rows[i].Media, back[i].Media); d != "" || back[i].Images != rows[i].Images {
			t.Errorf("row %d: media (-written +read):\n%s", i, d)
		}
	}
	bad := `{"timestamp": 0, "input_length": 4, "media": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}` + "\n"
	if _, _, err := ReadAll(writeTempName(t, "bad.jsonl", []byte(bad)), Options{Format: FormatMooncake}); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1: media") {
		t.Errorf("a corrupt image part: %v", err)
	}
}

func writeTempName(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
