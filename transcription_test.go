package reprise

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/media"
)

// clipsParquet writes a table dataset as Hugging Face datasets writes an
// Audio feature (a struct<bytes, path> column named audio) with one clip
// per row.
func clipsParquet(t *testing.T, path string, clips []media.Item) {
	t.Helper()
	hf := arrow.StructOf(
		arrow.Field{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true},
		arrow.Field{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	schema := arrow.NewSchema([]arrow.Field{{Name: "prompt", Type: arrow.BinaryTypes.String}, {Name: "audio", Type: hf, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, c := range clips {
		b.Field(0).(*array.StringBuilder).Append("transcribe " + strconv.Itoa(i))
		sb := b.Field(1).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.BinaryBuilder).Append(c.Data)
		sb.FieldBuilder(1).(*array.StringBuilder).Append("clip" + strconv.Itoa(i) + "." + c.Format)
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunTranscriptionDataset replays datasets whose rows carry audio
// against the transcription endpoint: AIPerf single_turn rows (WAV and
// MP3 files of different lengths, a row with none, a row with two
// clips), a multi_turn session, and a Parquet table with Hugging Face's
// Audio column. The mock's log shows each upload's length equal to its
// row's clip (a row without one uploads the run's synthetic clip), the
// records' input and heard audio agree with it, and the row with two
// clips fails as data, naming why, without being sent.
func TestRunTranscriptionDataset(t *testing.T) {
	dir := t.TempDir()
	synth := func(d time.Duration, format string, rate int, seed uint64) media.Item {
		it, err := media.SynthAudio(media.AudioSpec{Duration: d, Format: format, SampleRate: rate, Depth: 16, Channels: 1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	a := writeMedia(t, dir, "a.wav", synth(500*time.Millisecond, "wav", 16000, 1))
	b := writeMedia(t, dir, "b.mp3", synth(time.Second, "mp3", 16000, 2))
	c := writeMedia(t, dir, "c.wav", synth(1250*time.Millisecond, "wav", 8000, 3))
	const synthetic = 2 * time.Second // o.Generation.TranscribeSeconds
	pq := filepath.Join(dir, "clips.parquet")
	clipsParquet(t, pq, []media.Item{c, a, b})
	cases := []struct {
		name, format, text string
		want               []time.Duration // per request, in order; 0: fails without being sent
	}{
		{"single_turn", "aiperf-single",
			`{"text": "x", "audio": "a.wav"}` + "\n" + `{"text": "x", "audio": "b.mp3"}` + "\n" + `{"text": "no clip"}` + "\n" +
				`{"audios": ["a.wav", "c.wav"]}` + "\n" + `{"audio": "c.wav"}` + "\n",
			[]time.Duration{a.Duration, b.Duration, synthetic, 0, c.Duration}},
		{"multi_turn", "aiperf-multi",
			`{"session_id": "s", "turns": [{"text": "one", "audio": "c.wav"}, {"text": "two", "audio": "a.wav"}]}` + "\n",
			[]time.Duration{c.Duration, a.Duration}},
		{"parquet", string(trace.FormatTable), "", []time.Duration{c.Duration, a.Duration, b.Duration}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := pq
			if tc.text != "" {
				path = filepath.Join(dir, tc.name+".jsonl")
				if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			srv := startMock(t, fastMedia)
			_, reqs := runNative(t, srv, func(o *Options) {
				o.Endpoint, o.Synthetic = "transcription", SyntheticLoad{}
				o.Trace.Path, o.Trace.Format = path, tc.format
				o.Replay.Concurrency, o.Replay.RequestCount = 1, 0
				o.Generation.TranscribeSeconds = synthetic.Seconds()
			}, 0, 0, 0)
			logs := logsByID(t, srv)
			if len(reqs) != len(tc.want) {
				t.Fatalf("%d records, want %d", len(reqs), len(tc.want))
			}
			sort.Slice(reqs, func(i, j int) bool { return reqs[i].RequestID < reqs[j].RequestID })
			for i, r := range reqs {
				ls := logs[strconv.FormatUint(r.RequestID, 10)]
				if tc.want[i] == 0 {
					if r.OK() || r.ErrorKind != record.ErrAdapter || !strings.Contains(r.ErrorMessage, "2 media items") || len(ls) != 0 {
						t.Errorf("request %d: %s %q, %d server log lines; want a build failure naming the 2 clips, unsent", i, r.ErrorKind, r.ErrorMessage, len(ls))
					}
					continue
				}
				if !r.OK() || len(ls) != 1 {
					t.Fatalf("request %d: %s %s, %d server log lines", i, r.ErrorKind, r.ErrorMessage, len(ls))
				}
				heard := ls[0].Media
				if heard == nil || time.Duration(heard.AudioNS) != tc.want[i] || r.AudioNS != heard.AudioNS {
					t.Errorf("request %d: the server heard %+v, the record %v; want the row's clip, %v", i, heard, time.Duration(r.AudioNS), tc.want[i])
				}
				if in := time.Duration(r.InputAudioNS); tc.want[i] != synthetic && in != tc.want[i] {
					t.Errorf("request %d: input audio %v, want %v", i, in, tc.want[i])
				}
			}
		})
	}
}
