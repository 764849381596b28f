package trace

import (
	"strings"
	"testing"
	"time"
)

// TestAgenticMooncake reads Dynamo's agentic Mooncake rows: request ids
// (strings and integers), wait_for, delay and tool_wait_ms; the rows are
// whole prompts (Cumulative) and keep their file order when sorted.
func TestAgenticMooncake(t *testing.T) {
	rows, _, err := ReadAll("testdata/mooncake_agentic.jsonl", Options{BlockSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	d91, _, _ := requestID([]byte(`"d-91"`))
	d92, _, _ := requestID([]byte(`"d-92"`))
	if d91 < stringIDBase || d92 < stringIDBase || d91 == d92 {
		t.Fatalf("string ids %d %d", d91, d92)
	}
	want := []struct {
		id      int64
		waitFor []int64
		delay   time.Duration
		tool    time.Duration
	}{
		{d91, nil, 0, 0},
		{d92, []int64{d91}, 40 * time.Millisecond, 850500 * time.Microsecond},
		{7, []int64{d91}, 0, 10 * time.Millisecond},
		{-1, []int64{d92, 7}, 40 * time.Millisecond, 850 * time.Millisecond},
	}
	for i, w := range want {
		r := rows[i]
		if w.id >= 0 && r.RequestID != w.id {
			t.Errorf("row %d: request id %d, want %d", i, r.RequestID, w.id)
		}
		if !r.Cumulative || r.Delay != w.delay || r.ToolWait != w.tool || len(r.WaitFor) != len(w.waitFor) {
			t.Errorf("row %d: %+v", i, r)
			continue
		}
		for k := range w.waitFor {
			if r.WaitFor[k] != w.waitFor[k] {
				t.Errorf("row %d: wait_for %v, want %v", i, r.WaitFor, w.waitFor)
			}
		}
	}
	if rows[1].SessionID != "run7:worker" || rows[3].Turn != 1 {
		t.Errorf("sessions: %q turn %d", rows[1].SessionID, rows[3].Turn)
	}
}

func TestAgenticMooncakeErrors(t *testing.T) {
	root := `{"request_id": "a", "timestamp": 0, "input_length": 10}` + "\n"
	tests := []struct{ text, want string }{
		{root + `{"request_id": "b", "wait_for": ["zz"], "input_length": 10}`, `x.jsonl:2: wait_for: request "zz" is not the request_id of an earlier line`},
		{root + `{"request_id": "a", "timestamp": 1, "input_length": 10}`, `x.jsonl:2: request_id: "a" names the same request as line 1`},
		{root + `{"wait_for": ["a", "a"], "input_length": 10}`, `x.jsonl:2: wait_for: request "a" is listed twice`},
		{root + `{"wait_for": "a", "input_length": 10}`, `x.jsonl:2: wait_for: want an array of request ids`},
		{root + `{"wait_for": [1.5], "input_length": 10}`, `x.jsonl:2: wait_for: 1.5 is not a request id`},
		{`{"request_id": -3, "timestamp": 0, "input_length": 10}`, `x.jsonl:1: request_id: -3 is not a request id`},
		{`{"request_id": "", "timestamp": 0, "input_length": 10}`, `x.jsonl:1: request_id: "" is not a request id`},
		{`{"tool_wait_ms": -1, "timestamp": 0, "input_length": 10}`, `x.jsonl:1: tool_wait_ms: -1 is negative`},
		{`{"request_id": "a", "timestamp": 0, "text_input": "hi"}`, `x.jsonl:1: request_id: request_id and wait_for describe agentic rows with input_length`},
	}
	for _, tc := range tests {
		last := firstError("x.jsonl", tc.text, Options{Format: FormatMooncake})
		if last == nil || !strings.HasPrefix(last.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.text, last, tc.want)
		}
	}
}

// TestAgenticWriterRoundTrip: the Mooncake writer writes request ids,
// wait_for and tool_wait_ms, and they read back to the same rows.
func TestAgenticWriterRoundTrip(t *testing.T) {
	rows, _, err := ReadAll("testdata/mooncake_agentic.jsonl", Options{BlockSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w, _ := NewWriter(&b, FormatMooncake)
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader("again.jsonl", strings.NewReader(b.String()), Options{BlockSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadAllFrom(rd)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !sameRows(rows, got) {
		t.Errorf("round trip:\n%s", diffRows(rows, got))
	}
}

// TestAgenticExtends: a row that extends another is not cumulative (its
// lengths are the new tokens), names its parent, waits for it, and
// writes back the same.
func TestAgenticExtends(t *testing.T) {
	text := `{"request_id": "p", "timestamp": 0, "input_length": 40, "output_length": 6}
{"request_id": "c", "extends": "p", "wait_for": ["p"], "input_length": 20, "output_length": 5}
{"extends": "c", "input_length": 9, "output_length": 3}
{"extends": "zz", "input_length": 9}
`
	r, err := NewReader("x.jsonl", strings.NewReader(text), Options{Format: FormatMooncake, SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	rows, st, err := ReadAllFrom(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || st.DroppedInvalid != 1 || !strings.Contains(st.FirstWarnings[0], `x.jsonl:4: extends: request "zz" is not the request_id of an earlier line`) {
		t.Fatalf("%d rows, stats %+v", len(rows), st)
	}
	p, c, g := rows[0], rows[1], rows[2]
	if !p.Cumulative || c.Cumulative || g.Cumulative || c.ParentID != p.RequestID || g.ParentID != c.RequestID ||
		len(c.WaitFor) != 1 || len(g.WaitFor) != 1 || g.WaitFor[0] != c.RequestID {
		t.Errorf("rows %+v", rows)
	}
	var b strings.Builder
	w, _ := NewWriter(&b, FormatMooncake)
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	rd, _ := NewReader("again.jsonl", strings.NewReader(b.String()), Options{})
	got, _, err := ReadAllFrom(rd)
	if err != nil || !sameRows(rows, got) {
		t.Errorf("round trip: %v\n%s", err, b.String())
	}
}

// TestAgenticHashMismatch: a row with one hash id more than its
// input_length needs is kept under FitHashIDs (--hash-mismatch fit) for
// the prompt builder to fit, and refused otherwise; a row that waits for
// (or extends) a refused row says that it was refused, and why.
func TestAgenticHashMismatch(t *testing.T) {
	text := `{"request_id": "c0", "timestamp": 0, "input_length": 1000, "output_length": 6, "hash_ids": [1, 2, 3]}
{"request_id": "c1", "wait_for": ["c0"], "input_length": 20, "output_length": 5, "hash_ids": [4]}
{"request_id": "c2", "extends": "c0", "input_length": 20, "output_length": 5}
`
	for _, fit := range []bool{false, true} {
		r, err := NewReader("x.jsonl", strings.NewReader(text), Options{Format: FormatMooncake, SkipInvalid: true, FitHashIDs: fit})
		if err != nil {
			t.Fatal(err)
		}
		rows, st, err := ReadAllFrom(r)
		if err != nil {
			t.Fatal(err)
		}
		if fit {
			if len(rows) != 3 || st.DroppedInvalid != 0 || len(rows[0].HashIDs) != 3 {
				t.Errorf("fit: %d rows, stats %+v; want all 3, c0 with its 3 ids", len(rows), st)
			}
			continue
		}
		want := []string{
			`x.jsonl:1: hash_ids: 3 ids but input_length 1000 needs 2 at block size 512; fix the row, pass --block-size with the block size the trace was hashed with, or --hash-mismatch fit to use the ids that fit`,
			`x.jsonl:2: wait_for: request "c0" (line 1) was refused: hash_ids: 3 ids but input_length 1000 needs 2`,
			`x.jsonl:3: extends: request "c0" (line 1) was refused: hash_ids: 3 ids`,
		}
		if len(rows) != 0 || len(st.FirstWarnings) != len(want) {
			t.Fatalf("%d rows, warnings %q", len(rows), st.FirstWarnings)
		}
		for i, w := range want {
			if !strings.Contains(st.FirstWarnings[i], w) {
				t.Errorf("warning %d = %q, want it to hold %q", i, st.FirstWarnings[i], w)
			}
		}
	}
}
