package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reprise-bench/reprise/internal/httpfield"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/testfiles"
)

// maxFuzzRows bounds how many rows a fuzz iteration reads.
const maxFuzzRows = 200

// readFuzz reads up to maxFuzzRows rows from data and checks the
// invariants every reader promises: no panic, errors are *ParseError (with
// a line for row errors), and kept rows are well-formed.
func readFuzz(t *testing.T, data []byte, opts Options) ([]Row, *Reader) {
	t.Helper()
	r, err := NewReader("fuzz", bytes.NewReader(data), opts)
	if err != nil {
		if _, ok := errors.AsType[*ParseError](err); !ok {
			t.Fatalf("NewReader error %T %v is not a *ParseError", err, err)
		}
		return nil, nil
	}
	defer r.Close()
	var (
		rows      []Row
		row       Row
		lastIndex int64 = -1
	)
	for range maxFuzzRows {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			pe, ok := errors.AsType[*ParseError](err)
			if !ok || pe.Line < 1 {
				t.Fatalf("Next error %T %v is not a *ParseError with a line", err, err)
			}
			if pe.Path != "fuzz" || !strings.HasPrefix(pe.Error(), "fuzz:") {
				t.Fatalf("error %q does not name the file", pe)
			}
			if r.err != nil {
				break // final
			}
			continue
		}
		checkRow(t, r, &row)
		if row.Index <= lastIndex {
			t.Fatalf("Index %d after %d", row.Index, lastIndex)
		}
		lastIndex = row.Index
		rows = append(rows, row.Clone())
	}
	st := r.Stats()
	if st.Kept != int64(len(rows)) {
		t.Fatalf("stats kept %d, returned %d rows", st.Kept, len(rows))
	}
	return rows, r
}

func checkRow(t *testing.T, r *Reader, row *Row) {
	t.Helper()
	switch {
	case row.Line < 1:
		t.Fatalf("row without a line: %+v", row)
	case row.InputTokens < 0 || row.InputTokens > maxTokens || row.OutputTokens < 0 || row.OutputTokens > maxTokens:
		t.Fatalf("token counts out of range: %+v", row)
	case row.Delay < 0:
		t.Fatalf("negative delay: %+v", row)
	case row.Failed && r.Format() != FormatBurstGPT:
		t.Fatalf("Failed set for %s", r.Format())
	case row.OutputTokens == 0 && r.Format() != FormatBurstGPT && row.Raw == nil && row.HasOffset && r.Format() != FormatMooncake && r.Format() != FormatWeka:
		t.Fatalf("zero output tokens: %+v", row)
	case row.Raw != nil && !json.Valid(row.Raw):
		t.Fatalf("Raw is not valid JSON: %q", row.Raw)
	case row.BlockSize != r.BlockSize() && row.BlockSize != 0 && r.Format() != FormatWeka: // Weka: per conversation
		t.Fatalf("row block size %d, reader %d", row.BlockSize, r.BlockSize())
	}
	if row.HashIDs != nil && row.BlockSize > 0 {
		if need := (row.InputTokens + row.BlockSize - 1) / row.BlockSize; len(row.HashIDs) != need {
			t.Fatalf("%d ids for %d tokens at block %d", len(row.HashIDs), row.InputTokens, row.BlockSize)
		}
	}
}

// seeds adds the given testdata files and strings to the corpus.
func seeds(f *testing.F, files []string, extra ...string) {
	for _, name := range files {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// firstLines returns the first n lines of testdata file name.
func firstLines(f *testing.F, name string, n int) string {
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfterN(data, []byte("\n"), n+1)
	return string(bytes.Join(lines[:min(n, len(lines))], nil))
}

// roundTrip writes rows with a Writer of format and reads them back; the
// rows must come back equal (Index and Line aside).
func roundTrip(t *testing.T, rows []Row, format Format) {
	t.Helper()
	for _, r := range rows {
		if r.Offset < 0 {
			return // unsorted input: offsets relative to a later first row
		}
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, format)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatalf("write row %d: %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, _ := readFuzz(t, buf.Bytes(), Options{Format: format, BlockSize: rows[0].BlockSize})
	if !sameRows(rows, got) {
		t.Fatalf("round trip through the %s writer (-read +reread):\n%s\nwritten:\n%s", format, diffRows(rows, got), buf.Bytes())
	}
}

// sameRows reports whether a and b hold equal rows, Index and Line aside
// (nil and empty slices are equal). It is the fuzz targets' per-execution
// check: plain comparisons, because cmp.Diff with a path filter costs a
// formatted path string per visited field and an edit-distance pass per
// slice, most of an execution, and starved the fuzzer (diffRows explains
// a mismatch).
func sameRows(a, b []Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !slices.Equal(x.HashIDs, y.HashIDs) || !bytes.Equal(x.Raw, y.Raw) {
			return false
		}
		x.Index, x.Line, x.HashIDs, x.Raw = 0, 0, nil, nil
		y.Index, y.Line, y.HashIDs, y.Raw = 0, 0, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// diffRows describes how a and b differ, Index and Line aside.
func diffRows(a, b []Row) string {
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		s := p.Last().String()
		return s == ".Index" || s == ".Line"
	}, cmp.Ignore())
	return cmp.Diff(a, b, ignore, cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }))
}

// oracleMooncake decodes one Mooncake line with encoding/json, the slow
// exact reference for the hand-rolled scanner.
type oracleRow struct {
	ok                bool
	ts, delay         *big.Rat
	input, output     string
	ids               []string
	session           *string
	hasIDs, hasOutput bool
}

func oracleMooncake(line []byte) oracleRow {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return oracleRow{}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return oracleRow{} // data after the object
	}
	o := oracleRow{ok: true}
	num := func(k string) *big.Rat {
		if v, ok := m[k]; ok {
			r, ok := new(big.Rat).SetString(string(v))
			if ok {
				return r
			}
		}
		return nil
	}
	o.ts, o.delay = num("timestamp"), num("delay")
	o.input, o.output = string(m["input_length"]), string(m["output_length"])
	_, o.hasOutput = m["output_length"]
	if v, ok := m["hash_ids"]; ok {
		o.hasIDs = true
		var ids []json.Number
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if d.Decode(&ids) == nil {
			for _, id := range ids {
				o.ids = append(o.ids, id.String())
			}
		}
	}
	if v, ok := m["session_id"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			o.session = &s
		}
	}
	return o
}

// ratNanos converts ms (as a Rat) to ns, rounding half away from zero.
func ratNanos(r *big.Rat) int64 {
	x := new(big.Rat).Mul(r, big.NewRat(1e6, 1))
	n, d := x.Num(), x.Denom()
	q, m := new(big.Int).QuoRem(n, d, new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)).Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// checkOracle decodes each line of data alone with the fast decoder and
// with encoding/json and requires them to agree.
func checkOracle(t *testing.T, data []byte) {
	t.Helper()
	for n, line := range bytes.Split(data, []byte("\n")) {
		if n > maxFuzzRows {
			return
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if isBlank(line) || bytes.HasPrefix(line, []byte("version https://git-lfs")) {
			continue
		}
		// A bare decoder: no magic-byte sniffing, no re-basing.
		r := &Reader{name: "oracle", format: FormatMooncake, block: 512}
		r.lr = lineReader{br: bufio.NewReaderSize(bytes.NewReader(line), 16), maxLine: DefaultMaxLineBytes}
		var row Row
		ferr := newJSONLDecoder(r).next(&row)
		if errors.Is(ferr, io.EOF) {
			continue
		}
		o := oracleMooncake(line)
		if ferr != nil {
			if pe, ok := errors.AsType[*ParseError](ferr); ok && errors.Is(pe, errJSONSyntax) && o.ok {
				t.Fatalf("fast scanner rejects %q (%v) but encoding/json accepts it", line, ferr)
			}
			continue
		}
		if !o.ok {
			t.Fatalf("fast scanner accepts %q but encoding/json rejects it", line)
		}
		if o.ts != nil && (!row.HasOffset || int64(row.Offset) != ratNanos(o.ts)) {
			t.Fatalf("%q: offset %v, oracle %v ms", line, row.Offset, o.ts.FloatString(9))
		}
		if o.delay != nil && o.ts == nil && (!row.HasDelay || int64(row.Delay) != ratNanos(o.delay)) {
			t.Fatalf("%q: delay %v, oracle %v ms", line, row.Delay, o.delay.FloatString(9))
		}
		if o.input != "" {
			if v, ok := new(big.Rat).SetString(o.input); !ok || !v.IsInt() || v.Num().Int64() != int64(row.InputTokens) {
				t.Fatalf("%q: input %d, oracle %s", line, row.InputTokens, o.input)
			}
		}
		if o.hasOutput {
			if v, ok := new(big.Rat).SetString(o.output); !ok || !v.IsInt() || v.Num().Int64() != int64(row.OutputTokens) {
				t.Fatalf("%q: output %d, oracle %s", line, row.OutputTokens, o.output)
			}
		}
		if o.hasIDs && o.input != "" {
			if len(o.ids) != len(row.HashIDs) {
				t.Fatalf("%q: %d ids, oracle %d", line, len(row.HashIDs), len(o.ids))
			}
			for i, s := range o.ids {
				v, ok := new(big.Int).SetString(s, 10)
				if !ok || (v.Sign() >= 0 && v.Uint64() != row.HashIDs[i]) || (v.Sign() < 0 && uint64(v.Int64()) != row.HashIDs[i]) {
					t.Fatalf("%q: id %d = %d, oracle %s", line, i, row.HashIDs[i], s)
				}
			}
		}
		if o.session != nil && *o.session != row.SessionID {
			t.Fatalf("%q: session %q, oracle %q", line, row.SessionID, *o.session)
		}
	}
}

// TestScanOracle runs the encoding/json oracle over the real Mooncake
// traces line by line.
func TestScanOracle(t *testing.T) {
	for _, f := range []string{"mooncake/conversation_trace.jsonl", "mooncake/synthetic_trace.jsonl"} {
		data := testfiles.TraceBytes(t, f)
		lines := bytes.Split(data, []byte("\n"))
		for i := 0; i < len(lines); i += maxFuzzRows {
			checkOracle(t, bytes.Join(lines[i:min(i+maxFuzzRows, len(lines))], []byte("\n")))
		}
	}
	data, _ := os.ReadFile("testdata/mooncake_ext.jsonl")
	checkOracle(t, data)
}

func FuzzMooncake(f *testing.F) {
	// The first lines of mooncake40.jsonl only: its 40 similar rows (8 KB)
	// add no coverage that 3 do not, and cost every execution of every
	// input mutated from them, minimization included.
	seeds(f, []string{"mooncake_ext.jsonl", "mooncake_bad.jsonl", "mooncake_agentic.jsonl"},
		`{"request_id": 1, "timestamp": 0, "input_length": 3}`+"\n"+`{"extends": 1, "tool_wait_ms": 0.5, "input_length": 2, "hash_ids": [9]}`,
		firstLines(f, "mooncake40.jsonl", 3),
		`{"timestamp": 1.25e3, "input_length": 6758.0, "output_length": 5, "hash_ids": [-1, 18446744073709551615, 0]}`+"\n",
		`{"ti\u006destamp": 0.0000001, "input_length": 1, "session_id": "\ud83d\ude00\u0000", "hash_ids": [1]}`,
		`{"timestamp": 0, "input_length": 4, "media": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}, {"type": "audio_url", "audio_url": {"url": "http://a/b.wav"}}]}`+"\n"+
			`{"timestamp": 1, "input_length": 4, "media": [{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}]}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _ := readFuzz(t, data, Options{Format: FormatMooncake, SkipInvalid: true})
		checkOracle(t, data)
		if len(rows) > 0 {
			roundTrip(t, rows, FormatMooncake)
		}
	})
}

// FuzzWeka: every row the Weka reader returns waits only for rows it
// returned before (the graph is acyclic and closed), and a row without
// dependencies has a time.
func FuzzWeka(f *testing.F) {
	seeds(f, []string{"weka.jsonl"},
		`{"id":"a","block_size":2,"requests":[{"t":0,"in":3,"hash_ids":[1,2]},{"type":"subagent","requests":[{"in":1}]},{"t":1e0,"in":1,"think_time":0.5}]}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _ := readFuzz(t, data, Options{Format: FormatWeka, SkipInvalid: true})
		seen := map[int64]bool{}
		for _, r := range rows {
			for _, d := range r.WaitFor {
				if !seen[d] {
					t.Fatalf("row %d waits for %d, not returned before it", r.RequestID, d)
				}
			}
			if r.WaitFor == nil && !r.HasOffset {
				t.Fatalf("root row %d without a time", r.RequestID)
			}
			seen[r.RequestID] = true
		}
	})
}

func FuzzBailian(f *testing.F) {
	seeds(f, []string{"bailian.jsonl"},
		`{"chat_id": 5, "parent_chat_id": 5, "timestamp": 0.0005, "input_length": 1, "output_length": 1, "time_to_parent_chat": 1.5}`+"\n"+
			`{"chat_id": 6, "parent_chat_id": 5, "timestamp": 1e-3, "input_length": 33, "output_length": 1, "hash_ids": [1,2,3]}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _ := readFuzz(t, data, Options{Format: FormatBailian, SkipInvalid: true})
		for _, r := range rows {
			if r.SessionID == "" || r.RequestID < 0 && r.SessionID == "" || !r.Cumulative || r.BlockSize != 16 || !r.HasOffset {
				t.Fatalf("bad Bailian row %+v", r)
			}
		}
		if len(rows) > 0 {
			roundTrip(t, rows, FormatBailian)
		}
	})
}

// csvRoundTrip re-encodes rows as CSV with the given header and row
// formatter, reads them back and compares.
func csvRoundTrip(t *testing.T, rows []Row, header string, format Format, line func(Row) string) {
	t.Helper()
	for _, r := range rows {
		if r.Offset < 0 {
			return
		}
	}
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, r := range rows {
		b.WriteString(line(r) + "\n")
	}
	got, _ := readFuzz(t, []byte(b.String()), Options{Format: format})
	if !sameRows(rows, got) {
		t.Fatalf("CSV round trip (-read +reread):\n%s\n%s", diffRows(rows, got), b.String())
	}
}

func secs(d time.Duration) string { return string(appendDecimal(nil, int64(d), 9)) }

func FuzzBurstGPT(f *testing.F) {
	seeds(f, []string{"burstgpt_v1.csv", "burstgpt_v3.csv"},
		"Log Type,Response tokens,Model,Timestamp,Request tokens\n\"API log\",3,\"GPT-4\",1.5,\"2\"\"\"\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _ := readFuzz(t, data, Options{Format: FormatBurstGPT, SkipInvalid: true})
		for _, r := range rows {
			if r.Failed != (r.InputTokens == 0 || r.OutputTokens == 0) {
				t.Fatalf("Failed flag wrong: %+v", r)
			}
		}
		for _, r := range rows {
			if strings.ContainsAny(r.Kind+r.SessionID, ",\"\r\n") || r.Kind != strings.TrimSpace(r.Kind) || r.SessionID != strings.TrimSpace(r.SessionID) {
				return // not representable without quoting; skip the round trip
			}
		}
		csvRoundTrip(t, rows, "Timestamp,Session ID,Model,Request tokens,Response tokens", FormatBurstGPT, func(r Row) string {
			return fmt.Sprintf("%s,%s,%s,%d,%d", secs(r.Offset), r.SessionID, r.Kind, r.InputTokens, r.OutputTokens)
		})
	})
}

func FuzzAzure(f *testing.F) {
	seeds(f, []string{"azure2024.csv", "azure2025.csv", "azure2023_crlf.csv"})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _ := readFuzz(t, data, Options{Format: FormatAzure, SkipInvalid: true})
		for _, r := range rows {
			if !r.HasOffset || r.InputTokens < 1 || r.OutputTokens < 1 {
				t.Fatalf("bad Azure row %+v", r)
			}
		}
		// Azure times re-based are Vidur offsets (Vidur has no images).
		for i := range rows {
			rows[i].Images = 0
		}
		csvRoundTrip(t, rows, "arrived_at,num_prefill_tokens,num_decode_tokens", FormatVidur, func(r Row) string {
			return fmt.Sprintf("%s,%d,%d", secs(r.Offset), r.InputTokens, r.OutputTokens)
		})
	})
}

func FuzzVidur(f *testing.F) {
	seeds(f, []string{"vidur_bom.csv"},
		"request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n0,2,0,1,1,4096,32\n",
		"arrived_at,num_prefill_tokens,num_decode_tokens,pd_ratio\n1e-9,1,1,0.5\n0.0000000005,2,2\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatVidur, FormatSplitwiseSim} {
			rows, _ := readFuzz(t, data, Options{Format: format, SkipInvalid: true})
			csvRoundTrip(t, rows, "arrival_timestamp,prompt_size,token_size,request_id", FormatSplitwiseSim, func(r Row) string {
				id := ""
				if r.RequestID >= 0 {
					id = strconv.FormatInt(r.RequestID, 10)
				}
				return fmt.Sprintf("%s,%d,%d,%s", secs(r.Offset), r.InputTokens, r.OutputTokens, id)
			})
		}
	})
}

func FuzzAIPerf(f *testing.F) {
	seeds(f, []string{"aiperf_single.jsonl", "aiperf_multi.jsonl"})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatAIPerfSingle, FormatAIPerfMulti} {
			rows, _ := readFuzz(t, data, Options{Format: format, SkipInvalid: true})
			for _, r := range rows {
				if r.Raw == nil || r.HasOffset && r.HasDelay {
					t.Fatalf("bad AIPerf row %+v", r)
				}
				if format == FormatAIPerfMulti && r.SessionID == "" {
					t.Fatalf("multi_turn row without session: %+v", r)
				}
			}
		}
	})
}

func FuzzDetect(f *testing.F) {
	for _, name := range []string{"bailian.jsonl", "burstgpt_v3.csv", "azure2025.csv", "vidur_bom.csv",
		"aiperf_single.jsonl", "aiperf_multi.jsonl", "mooncake_ext.jsonl", "lfs_pointer.jsonl", "mooncake40.jsonl.gz", "mooncake40.jsonl.zst"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 4096 {
			data = data[:4096]
		}
		f.Add(data)
	}
	f.Add([]byte("\n\n  \nrequest_id,arrival_timestamp,prompt_size,token_size\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		format, err := Detect("fuzz", bytes.NewReader(data))
		if err != nil {
			if _, ok := errors.AsType[*ParseError](err); !ok {
				t.Fatalf("Detect error %T %v is not a *ParseError", err, err)
			}
			return
		}
		if !format.valid() {
			t.Fatalf("Detect returned unknown format %q", format)
		}
		// Forcing the detected format must be accepted too.
		r, err := NewReader("fuzz", bytes.NewReader(data), Options{Format: format})
		if err != nil {
			t.Fatalf("detected %s but forcing it fails: %v", format, err)
		}
		r.Close()
		readFuzz(t, data, Options{SkipInvalid: true})
	})
}

// FuzzWriter writes generated rows and reads them back.
func FuzzWriter(f *testing.F) {
	f.Add(int64(1500000), int64(250), uint16(1000), uint16(20), uint64(7), "s1", true)
	f.Add(int64(0), int64(0), uint16(16), uint16(1), uint64(1<<63), "", false)
	f.Fuzz(func(t *testing.T, off, delay int64, in, out uint16, id uint64, session string, bailian bool) {
		if off < 0 || delay < 0 || in == 0 || out == 0 {
			return
		}
		// A session id that is no valid header value is refused by the
		// reader (it may be sent as a header): not a row to write.
		if httpfield.CheckValue(strings.ToValidUTF8(session, "\uFFFD")) != nil {
			return
		}
		format, block := FormatMooncake, 512
		if bailian {
			format, block = FormatBailian, 16
		}
		rows := make([]Row, 3)
		for i := range rows {
			r := &rows[i]
			*r = Row{ParentID: -1, RequestID: -1, BlockSize: block, InputTokens: int(in) + i, OutputTokens: int(out)}
			for k := 0; k < (r.InputTokens+block-1)/block; k++ {
				r.HashIDs = append(r.HashIDs, id+uint64(k))
			}
			r.Offset, r.HasOffset = time.Duration(off%(1<<50))*time.Duration(i), true
			if bailian {
				r.RequestID, r.SessionID, r.Cumulative = int64(i), strconv.Itoa(i), true
				r.Delay, r.HasDelay = time.Duration(delay%(1<<50)), true
			} else if session != "" {
				r.SessionID, r.Turn = strings.ToValidUTF8(session, "\uFFFD"), i
				if i > 0 {
					r.Offset, r.HasOffset = 0, false
					r.Delay, r.HasDelay = time.Duration(delay%(1<<50)), true
				}
			}
		}
		roundTrip(t, rows, format)
	})
}

func FuzzShareGPT(f *testing.F) {
	seeds(f, []string{"sharegpt.json"},
		`{"id": "a", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}`,
		"[\n{\"conversations\": [{\"from\": \"x\", \"value\": \"a\"}]},\n{\"conversations\": []}\n]")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sessions := range []bool{false, true} {
			rows, _ := readFuzz(t, data, Options{Format: FormatShareGPT, Sessions: sessions})
			for _, r := range rows {
				if r.Raw == nil || r.InputTokens < 0 {
					t.Fatalf("ShareGPT row without its prompt: %+v", r)
				}
			}
		}
	})
}

func FuzzPrompts(f *testing.F) {
	seeds(f, []string{"prompts.txt"}, "a\r\n\r\nb \"c\" \\ d\n\x00\xff")
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _ := readFuzz(t, data, Options{Format: FormatPrompts})
		for _, r := range rows {
			if r.Raw == nil {
				t.Fatalf("prompt row without its text: %+v", r)
			}
		}
	})
}

func FuzzTable(f *testing.F) {
	seeds(f, []string{"dataset.jsonl", "dataset.csv"},
		"timestamp,input_length,output_length\n0,100,10\n250.5,200,20\n",
		`{"prompt": "x", "output_length": 1e3, "session_id": 5}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		readFuzz(t, data, Options{Format: FormatTable, RequireOutput: true, DefaultOutputTokens: 3})
		readFuzz(t, data, Options{Columns: Columns{Prompt: "question", OutputLength: "answer_tokens", Session: "conv"}, RequireOutput: true})
	})
}

func FuzzInputsJSON(f *testing.F) {
	seeds(f, []string{"inputs.json"},
		`{"data": [{"payload": [{"prompt": "hi", "max_tokens": 5}], "timestamp": [250]}]}`,
		"{\n\"x\": [1, {\"data\": 2}], \"data\": [{\"payloads\": [5]}]\n}")
	f.Fuzz(func(t *testing.T, data []byte) {
		readFuzz(t, data, Options{Format: FormatInputsJSON})
	})
}

func FuzzParquet(f *testing.F) {
	b, err := parquetBytes([]string{"Tell me a joke.", "", "Explain KV caching."}, []int64{16, 0, 32})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		readFuzz(t, data, Options{Format: FormatTable, SkipInvalid: true})
	})
}

// FuzzAIPerfDAG and FuzzAIPerfGraph: every row the AIPerf DAG readers
// return waits only for rows returned before it, and a row without
// dependencies has a time.
func FuzzAIPerfDAG(f *testing.F) {
	seeds(f, []string{"aiperf-dag.jsonl"},
		`{"session_id":"a","pre_session_spawns":["b"],"turns":[{"messages":[{"role":"user","content":"x"}],"forks":[{"child":"c","background":true}]},{"messages":[{"role":"user","content":"y"}]}]}`+"\n"+
			`{"session_id":"b","turns":[{"messages":[{"role":"user","content":"z"}],"delay":1.5}]}`+"\n"+`{"session_id":"c","context_mode":"message_array_with_responses","turns":[{"messages":[]}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { checkDependent(t, data, FormatAIPerfDAG) })
}

func FuzzAIPerfGraph(f *testing.F) {
	seeds(f, []string{"aiperf-graph.jsonl"},
		`{"kind":"graph","nodes":{"p":{"node_type":"llm","prompt":[{"role":"user","content":"p"}],"output":"o"},"q":{"node_type":"llm","prompt":[{"role":"user","content":"q"}],"inputs":[{"channel":"o","count":"all"}]},"r":{"node_type":"llm","prompt":[{"role":"user","content":"r"}]}},"edges":[{"source":"START","target":"p","min_start_delay_us":7},{"source":"q","target":"r","delay_after_predecessor_start_us":5}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { checkDependent(t, data, FormatAIPerfGraph) })
}

func checkDependent(t *testing.T, data []byte, format Format) {
	rows, _ := readFuzz(t, data, Options{Format: format, SkipInvalid: true})
	seen := map[int64]bool{}
	for _, r := range rows {
		for _, d := range r.WaitFor {
			if !seen[d] {
				t.Fatalf("row %d waits for %d, not returned before it", r.RequestID, d)
			}
		}
		if r.ParentID >= 0 && !slices.Contains(r.WaitFor, r.ParentID) {
			t.Fatalf("row %d extends %d without waiting for it", r.RequestID, r.ParentID)
		}
		if r.WaitFor == nil && !r.HasOffset {
			t.Fatalf("root row %d without a time", r.RequestID)
		}
		seen[r.RequestID] = true
	}
}

// FuzzScanMooncake: whenever scan's fast path for the published Mooncake
// shape takes a line, the full scanner reads it the same (scanBoth).
func FuzzScanMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 27000, "input_length": 1100, "output_length": 30, "hash_ids": [0, 14, 15]}`))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1234567, 12345678, 0]}`))
	f.Add([]byte(`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [-1, 01]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		scanBoth(t, line)
	})
}

// FuzzAIPerfMedia: AIPerf rows with arbitrary image, audio and video
// fields never panic the reader, and a row it accepts has Raw that is
// valid JSON whose media parts match its counts.
func FuzzAIPerfMedia(f *testing.F) {
	dir := mediaDir(f)
	for _, s := range []string{`"a.png"`, `["a.png","b.jpg"]`, `"c.wav"`, `"data:image/png;base64,AAAA"`, `{"bytes":"AAAA"}`, `[{"contents":["a.png"]}]`, `"https://x/y.png"`, `7`, `"bomb.png"`} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, val string, k uint8) {
		key := [...]string{"image", "images", "audio", "audios", "video", "videos"}[k%6]
		line := `{"text":"x","` + key + `":` + val + "}\n"
		p := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		rows, _, err := ReadAll(p, Options{Format: FormatAIPerfSingle})
		if err != nil {
			return
		}
		for _, r := range rows {
			if !json.Valid(r.Raw) {
				t.Fatalf("invalid Raw %q", r.Raw)
			}
		}
	})
}
