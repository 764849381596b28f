package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
)

// datasetRow is what the dataset tests compare of a row.
type datasetRow struct {
	Line        int64
	Text        string
	In, Out     int
	Session     string
	Turn        int
	Offset      int64 // ms, -1 without
	PayloadJSON bool
}

func readDataset(t *testing.T, name string, src io.Reader, opts Options) ([]datasetRow, Format) {
	t.Helper()
	r, err := NewReader(name, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []datasetRow
	var row Row
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d := datasetRow{Line: row.Line, In: row.InputTokens, Out: row.OutputTokens, Session: row.SessionID, Turn: row.Turn, Offset: -1}
		if row.HasOffset {
			d.Offset = row.Offset.Milliseconds()
		}
		var raw struct {
			TextInput *string `json:"text_input"`
			Payload   any     `json:"payload"`
		}
		if row.Raw != nil {
			if err := json.Unmarshal(row.Raw, &raw); err != nil {
				t.Fatalf("Raw %s: %v", row.Raw, err)
			}
		}
		if raw.TextInput != nil {
			d.Text = *raw.TextInput
		}
		d.PayloadJSON = raw.Payload != nil
		out = append(out, d)
	}
	return out, r.Format()
}

func openTestdata(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestShareGPT(t *testing.T) {
	t.Run("first pair", func(t *testing.T) {
		got, f := readDataset(t, "sharegpt.json", openTestdata(t, "sharegpt.json"), Options{})
		want := []datasetRow{
			{Line: 2, Text: "Explain paged attention.", In: 3, Out: 9, Offset: -1},
			{Line: 8, Text: "What is a prefix cache?", In: 5, Out: 6, Offset: -1},
			// Roles other than human/gpt: the first two messages.
			{Line: 13, Text: "Name three sorting algorithms.", In: 4, Out: 3, Offset: -1},
		}
		if f != FormatShareGPT {
			t.Errorf("format %s", f)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rows (-want +got):\n%s", d)
		}
	})
	t.Run("sessions", func(t *testing.T) {
		got, _ := readDataset(t, "sharegpt.json", openTestdata(t, "sharegpt.json"), Options{Sessions: true})
		want := []datasetRow{
			{Line: 2, Text: "Explain paged attention.", In: 3, Out: 9, Session: "QWJhYvA_0", Offset: -1},
			{Line: 2, Text: "Why blocks?", In: 2, Out: 3, Session: "QWJhYvA_0", Turn: 1, Offset: -1},
			{Line: 8, Text: "What is a prefix cache?", In: 5, Out: 6, Offset: -1},
			{Line: 13, Text: "Name three sorting algorithms.", In: 4, Out: 3, Offset: -1},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rows (-want +got):\n%s", d)
		}
	})
	t.Run("osl replaces reply lengths", func(t *testing.T) {
		got, _ := readDataset(t, "sharegpt.json", openTestdata(t, "sharegpt.json"), Options{DefaultOutputTokens: 100})
		for _, r := range got {
			if r.Out != 100 {
				t.Errorf("line %d: output %d, want --osl's 100", r.Line, r.Out)
			}
		}
	})
	t.Run("jsonl and gzip", func(t *testing.T) {
		src := `{"id": "a", "conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": "hello"}]}` + "\n" +
			`{"id": "b", "conversations": [{"from": "human", "value": "bye"}]}` + "\n"
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		w.Write([]byte(src))
		w.Close()
		got, f := readDataset(t, "c.jsonl.gz", &gz, Options{DefaultOutputTokens: 0, CountTokens: func(s string) int { return len(s) }})
		want := []datasetRow{
			{Line: 1, Text: "hi there", In: 8, Out: 5, Offset: -1},
			{Line: 2, Text: "bye", In: 3, Offset: -1}, // no reply: no output length
		}
		if f != FormatShareGPT {
			t.Errorf("format %s", f)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rows (-want +got):\n%s", d)
		}
	})
}

func TestDatasetErrors(t *testing.T) {
	tests := []struct {
		name, content string
		opts          Options
		want          string
	}{
		{"sharegpt element", "[\n  {\"id\": 1, \"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]},\n  {\"id\": 2, \"conversations\": 5}\n]",
			Options{}, "d.json:3: conversations: want {"},
		{"sharegpt no human", "[\n {\"conversations\": [{\"from\": \"gpt\", \"value\": \"a\"}]}\n]", Options{}, "d.json:2: conversations: no human message"},
		{"sharegpt cut short", "[\n {\"conversations\": [{\"from\": \"human\",", Options{}, "d.json:2: read: the JSON document ends inside a conversation"},
		{"sharegpt bad json", "[\n {\"conversations\": [}]\n]", Options{}, "d.json:2: not valid JSON in a conversation"},
		{"table no columns", "{\"a\": 1}\n", Options{Format: FormatTable}, "no prompt column"},
		{"table missing named", "{\"q\": \"x\"}\n", Options{Columns: Columns{Prompt: "question"}}, `no column "question" (--prompt-column); the table has "q"`},
		{"table bad length", "prompt,output_length\nhi,abc\n", Options{}, "d.json:2: output_length: \"abc\" is not a number"},
		{"table empty prompt", "{\"prompt\": \"a\"}\n{\"prompt\": \"\"}\n", Options{}, "d.json:2: prompt: an empty prompt"},
		{"table prompt not string", "{\"prompt\": 5}\n", Options{}, "d.json:1: prompt: want a string"},
		{"inputs no payloads", "{\n \"data\": [\n  {\"session_id\": \"a\"}\n ]\n}\n", Options{}, "d.json:3: payloads: missing or empty"},
		{"inputs not object", "{\n \"data\": 5\n}\n", Options{}, `want "[" to start the "data" array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := firstError("d.json", tt.content, tt.opts)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if _, ok := errors.AsType[*ParseError](err); !ok {
				t.Errorf("error %T is not a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestPrompts(t *testing.T) {
	got, f := readDataset(t, "prompts.txt", openTestdata(t, "prompts.txt"), Options{DefaultOutputTokens: 20})
	want := []datasetRow{
		{Line: 1, Text: "What is the capital of France?", In: 6, Out: 20, Offset: -1},
		{Line: 3, Text: "Write a haiku about caches.", In: 5, Out: 20, Offset: -1},
		{Line: 4, Text: `Explain "speculative decoding" in one sentence.`, In: 6, Out: 20, Offset: -1},
	}
	if f != FormatPrompts {
		t.Errorf("format %s, want detected from .txt", f)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

func TestTable(t *testing.T) {
	t.Run("jsonl named columns", func(t *testing.T) {
		opts := Options{Columns: Columns{Prompt: "question", OutputLength: "answer_tokens", Session: "conv"}}
		got, f := readDataset(t, "dataset.jsonl", openTestdata(t, "dataset.jsonl"), opts)
		want := []datasetRow{
			{Line: 1, Text: "What is 2+2?", In: 3, Out: 8, Session: "a", Offset: -1},
			{Line: 2, Text: "And times 3?", In: 3, Out: 4, Session: "a", Turn: 1, Offset: -1},
			{Line: 3, Text: "Define latency.", In: 2, Out: 16, Session: "b", Offset: -1},
		}
		if f != FormatTable {
			t.Errorf("format %s", f)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rows (-want +got):\n%s", d)
		}
	})
	t.Run("csv default columns", func(t *testing.T) {
		got, f := readDataset(t, "dataset.csv", openTestdata(t, "dataset.csv"), Options{})
		want := []datasetRow{
			{Line: 2, Text: "Summarise the plot of Hamlet, briefly.", In: 6, Out: 32, Offset: -1},
			{Line: 3, Text: "What is a GPU?", In: 4, Out: 12, Offset: -1},
		}
		if f != FormatTable {
			t.Errorf("format %s, want detected from the prompt column", f)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rows (-want +got):\n%s", d)
		}
	})
	t.Run("lengths only, timestamps", func(t *testing.T) {
		src := "timestamp,input_length,output_length\n0,100,10\n250.5,200,20\n"
		got, _ := readDataset(t, "l.csv", strings.NewReader(src), Options{Format: FormatTable})
		want := []datasetRow{
			{Line: 2, In: 100, Out: 10, Offset: 0},
			{Line: 3, In: 200, Out: 20, Offset: 250},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rows (-want +got):\n%s", d)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "train.parquet")
		writeParquet(t, path, []string{"Tell me a joke.", "Explain KV caching in two sentences.", ""}, []int64{16, 32, 8})
		// From a file (random access) and from a pipe (copied first).
		for _, how := range []string{"file", "pipe"} {
			var src io.Reader = openFile(t, path)
			if how == "pipe" {
				b, _ := os.ReadFile(path)
				src = bytes.NewReader(b)
			}
			r, err := NewReader(path, src, Options{Columns: Columns{Prompt: "text", OutputLength: "max_new_tokens"}, SkipInvalid: true})
			if err != nil {
				t.Fatal(err)
			}
			rows, st, err := ReadAllFrom(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || st.DroppedInvalid != 1 {
				t.Fatalf("%s: %d rows, %d invalid; want 2 and the empty prompt skipped", how, len(rows), st.DroppedInvalid)
			}
			if rows[1].Line != 2 || rows[1].OutputTokens != 32 || !strings.Contains(string(rows[1].Raw), "KV caching") {
				t.Errorf("%s: row 2 = %+v", how, rows[1])
			}
		}
	})
	t.Run("parquet missing column", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "train.parquet")
		writeParquet(t, path, []string{"a"}, []int64{1})
		_, err := Open(path, Options{Columns: Columns{Prompt: "prompt"}})
		if err == nil || !strings.Contains(err.Error(), `no column "prompt" (--prompt-column); the table has "text", "max_new_tokens"`) {
			t.Fatalf("error %v", err)
		}
	})
}

func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// writeParquet writes a Parquet table of a string column "text" and
// an int64 column "max_new_tokens" (as Hugging Face datasets look).
func writeParquet(t testing.TB, path string, texts []string, lens []int64) {
	t.Helper()
	b, err := parquetBytes(texts, lens)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParquet returns the bytes of the Parquet table writeParquet writes.
func parquetBytes(texts []string, lens []int64) ([]byte, error) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "max_new_tokens", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	bld.Field(0).(*array.StringBuilder).AppendValues(texts, nil)
	bld.Field(1).(*array.Int64Builder).AppendValues(lens, nil)
	rec := bld.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func TestInputsJSON(t *testing.T) {
	got, f := readDataset(t, "inputs.json", openTestdata(t, "inputs.json"), Options{})
	want := []datasetRow{
		{Line: 3, In: 1, Out: 128, Session: "6f0c", Offset: -1, PayloadJSON: true},
		{Line: 3, In: 2, Out: 64, Session: "6f0c", Turn: 1, Offset: -1, PayloadJSON: true},
		{Line: 10, In: 3, Offset: -1, PayloadJSON: true},
	}
	if f != FormatInputsJSON {
		t.Errorf("format %s", f)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	// GenAI-Perf's shape: singular payload, metadata in lists.
	genai := `{"data": [{"payload": [{"prompt": "hi", "max_tokens": 5}], "timestamp": [250]}]}`
	got, _ = readDataset(t, "inputs.json", strings.NewReader(genai), Options{Format: FormatInputsJSON})
	want = []datasetRow{{Line: 1, In: 1, Out: 5, Offset: 0, PayloadJSON: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GenAI-Perf rows (-want +got):\n%s", d)
	}
}

func TestDatasetFormatNames(t *testing.T) {
	for name, want := range map[string]Format{
		"random_pool": FormatAIPerfSingle, "inputs_json": FormatInputsJSON, "mooncake_trace": FormatMooncake,
		"parquet": FormatTable, "txt": FormatPrompts, "sharegpt": FormatShareGPT,
	} {
		if f, err := ParseFormat(name); err != nil || f != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", name, f, err, want)
		}
	}
}

// TestParquetRowCap: Parquet rows have the text formats' line cap. A row
// group whose columns hold more than the cap a row (8 rows of prompts
// over it, in a file of a few KB) is refused from its metadata, before
// it is decompressed; one cell over the cap among short rows is a row
// error naming the column.
func TestParquetRowCap(t *testing.T) {
	old := maxParquetRow
	maxParquetRow = 1 << 20
	defer func() { maxParquetRow = old }()
	big := strings.Repeat("x", 2<<20)
	read := func(texts []string) ([]Row, ReadStats, error) {
		path := filepath.Join(t.TempDir(), "train.parquet")
		writeParquet(t, path, texts, make([]int64, len(texts)))
		r, err := Open(path, Options{Columns: Columns{Prompt: "text"}, SkipInvalid: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return ReadAllFrom(r)
	}
	distinct := make([]string, 8)
	for i := range distinct {
		distinct[i] = big + strconv.Itoa(i)
	}
	_, _, err := read(distinct)
	if err == nil || !strings.Contains(err.Error(), "row group 0: its 8 rows hold more than 8388608 bytes uncompressed") {
		t.Errorf("8 rows over the cap: %v; want the row group refused", err)
	}
	// One value in 8 rows (a dictionary): held once, each row refused.
	rows, st, err := read([]string{big, big, big, big, big, big, big, big})
	if err != nil || len(rows) != 0 || st.DroppedInvalid != 8 {
		t.Errorf("8 equal rows over the cap: %d rows, %+v, %v; want each refused", len(rows), st, err)
	}
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = "hello there"
	}
	texts[3] = big
	rows, st, err = read(texts)
	if err != nil || len(rows) != 9 || st.DroppedInvalid != 1 || !strings.Contains(st.FirstWarnings[0], "train.parquet:4: text: 2097152 bytes, over the 1048576-byte cap") {
		t.Errorf("one cell over the cap: %d rows, %+v, %v; want it skipped, named", len(rows), st, err)
	}
}

// TestJSONDocumentOneLine reads JSON documents written on one line, as a
// minified file is: a line over the line cap is read element by element,
// each element under the cap (issue 37, item 14: an 81 MB minified
// ShareGPT array was refused as "line too long").
func TestJSONDocumentOneLine(t *testing.T) {
	conv := func(i int, pad int) string {
		return fmt.Sprintf(`{"id":"c%d","pad":"%s","conversations":[{"from":"human","value":"q%d"},{"from":"gpt","value":"a b"}]}`,
			i, strings.Repeat("x", pad), i)
	}
	t.Run("sharegpt over the line cap", func(t *testing.T) {
		// 9 elements of 8 MiB: 72 MiB on one line, over DefaultMaxLineBytes.
		var b strings.Builder
		b.WriteString("[")
		for i := range 9 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(conv(i, 8<<20))
		}
		b.WriteString("]")
		if b.Len() <= DefaultMaxLineBytes {
			t.Fatalf("the line is %d bytes, not over the cap", b.Len())
		}
		got, f := readDataset(t, "min.json", strings.NewReader(b.String()), Options{CountTokens: func(s string) int { return len(s) }})
		if f != FormatShareGPT || len(got) != 9 {
			t.Fatalf("format %s, %d rows; want sharegpt, 9", f, len(got))
		}
		for i, r := range got {
			if want := (datasetRow{Line: 1, Text: fmt.Sprintf("q%d", i), In: 2, Out: 3, Offset: -1}); r != want {
				t.Errorf("row %d: %+v, want %+v", i, r, want)
			}
		}
	})
	t.Run("element over the cap", func(t *testing.T) {
		// Lines and elements: the second element (line 3) is over the
		// lowered cap; it is skipped whole, and reading goes on.
		src := "\n[" + conv(0, 10) + ",\n " + conv(1, 5000) + ",\n" + conv(2, 10) + "]\n"
		r, err := NewReader("big.json", strings.NewReader(src), Options{SkipInvalid: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		r.lr.maxLine = 4096
		var lines []int64
		var row Row
		for {
			err := r.Next(&row)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, row.Line)
		}
		if d := cmp.Diff([]int64{2, 4}, lines); d != "" {
			t.Errorf("lines (-want +got):\n%s", d)
		}
		w := r.Stats().FirstWarnings
		want := fmt.Sprintf("big.json:3: JSON element too large: a conversation is %d bytes, over the 4096-byte cap on one element of a JSON document; shorten it or take it out of the file (--skip-invalid skips it)",
			len(conv(1, 5000)))
		if len(w) != 1 || !strings.Contains(w[0], want) {
			t.Errorf("warnings %q\nwant one with %q", w, want)
		}
	})
	t.Run("inputs.json minified", func(t *testing.T) {
		// A first line longer than the read buffer starting {"data": [ is
		// an inputs.json; a member other than data over the cap is passed.
		entry := `{"session_id":"s","payloads":[{"messages":[{"role":"user","content":"hi there"}],"max_tokens":7}]}`
		var b strings.Builder
		b.WriteString(`{"data":[`)
		for i := range 1000 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(entry)
		}
		b.WriteString(`],"meta":"` + strings.Repeat("m", 200<<10) + `"}`)
		r, err := NewReader("inputs.json", strings.NewReader(b.String()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		r.lr.maxLine = 64 << 10
		if r.Format() != FormatInputsJSON {
			t.Fatalf("format %s, want inputs-json", r.Format())
		}
		n := 0
		var row Row
		for {
			err := r.Next(&row)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if row.OutputTokens != 7 || row.InputTokens != 2 || row.Line != 1 {
				t.Fatalf("row %d: %+v", n, row)
			}
			n++
		}
		if n != 1000 {
			t.Errorf("%d rows, want 1000", n)
		}
	})
}
