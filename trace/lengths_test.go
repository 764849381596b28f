package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// readRows reads every row of content, returning the rows (cloned), the
// row errors and the final error.
func readRows(t *testing.T, content string, opts Options) ([]Row, []error, ReadStats, error) {
	t.Helper()
	r, err := NewReader("t.jsonl", strings.NewReader(content), opts)
	if err != nil {
		return nil, nil, ReadStats{}, err
	}
	defer r.Close()
	var (
		rows []Row
		errs []error
		row  Row
	)
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows, errs, r.Stats(), nil
		}
		if err != nil {
			if r.Err() != nil {
				return rows, errs, r.Stats(), err
			}
			errs = append(errs, err)
			continue
		}
		rows = append(rows, row.Clone())
	}
}

// A row without an output length is never silently a request without
// max_tokens: by default it keeps OutputTokens 0 ("not given", for
// analysis); RequireOutput makes it a row error naming the file, line and
// field and what to do; DefaultOutputTokens gives it that length. A
// Mooncake payload row is sent as written, so it needs none. A BurstGPT
// failed row (0 response tokens) counts as one without an output length.
func TestMissingOutputLength(t *testing.T) {
	const (
		mooncake = `{"timestamp": 0, "input_length": 10}` + "\n"
		payload  = `{"timestamp": 0, "payload": {"model": "m", "prompt": "x", "max_tokens": 3}}` + "\n"
		aiperf   = `{"text": "hello", "timestamp": 0}` + "\n"
		burst    = "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,10,0\n"
	)
	tests := []struct {
		name    string
		content string
		opts    Options
		out     int    // the row's OutputTokens when it is kept
		wantErr string // the row error, when there is one
	}{
		{"mooncake", mooncake, Options{}, 0, ""},
		{"mooncake required", mooncake, Options{RequireOutput: true}, 0,
			"t.jsonl:1: output_length: missing: the request would have no max_tokens (with ignore_eos the server never stops); give the row an output_length, or pass --osl N to send rows without one with N output tokens"},
		{"mooncake default", mooncake, Options{RequireOutput: true, DefaultOutputTokens: 64}, 64, ""},
		{"mooncake default alone", mooncake, Options{DefaultOutputTokens: 7}, 7, ""},
		{"payload", payload, Options{RequireOutput: true}, 0, ""},
		{"aiperf required", aiperf, Options{Format: FormatAIPerfSingle, RequireOutput: true}, 0,
			"t.jsonl:1: output_length: missing: the request would have no max_tokens"},
		{"aiperf multi required", `{"session_id": "a", "turns": [{"text": "x", "output_length": 3}, {"text": "y"}]}` + "\n",
			Options{RequireOutput: true}, 3, "t.jsonl:1: output_length: missing"},
		{"aiperf default", aiperf, Options{Format: FormatAIPerfSingle, DefaultOutputTokens: 9}, 9, ""},
		{"burstgpt failed", burst, Options{}, 0, ""},
		{"burstgpt failed default", burst, Options{RequireOutput: true, DefaultOutputTokens: 5}, 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, errs, st, err := readRows(t, tt.content, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				if len(errs) == 0 {
					t.Fatalf("no row error, rows %+v; want %q", rows, tt.wantErr)
				}
				if !strings.Contains(errs[0].Error(), tt.wantErr) {
					t.Errorf("error %q\nwant it to contain %q", errs[0], tt.wantErr)
				}
				if pe, ok := errors.AsType[*ParseError](errs[0]); !ok || pe.Line < 1 || pe.Field == "" {
					t.Errorf("error %#v is not a *ParseError with a line and a field", errs[0])
				}
				if tt.out > 0 && (len(rows) == 0 || rows[0].OutputTokens != tt.out) {
					t.Errorf("rows %+v; want the valid turn kept with %d output tokens", rows, tt.out)
				}
				return
			}
			if len(errs) > 0 || len(rows) != 1 {
				t.Fatalf("rows %+v, errors %v; want one row", rows, errs)
			}
			if rows[0].OutputTokens != tt.out {
				t.Errorf("OutputTokens %d, want %d", rows[0].OutputTokens, tt.out)
			}
			defaulted := int64(0)
			if tt.opts.DefaultOutputTokens > 0 {
				defaulted = 1
			}
			if st.DefaultedOutput != defaulted {
				t.Errorf("DefaultedOutput %d, want %d", st.DefaultedOutput, defaulted)
			}
		})
	}

	// SkipInvalid drops and counts such rows like any invalid row; a
	// failed row dropped by DropFailed is no error.
	rows, errs, st, err := readRows(t, mooncake+`{"timestamp": 1, "input_length": 10, "output_length": 2}`+"\n",
		Options{RequireOutput: true, SkipInvalid: true})
	if err != nil || len(errs) > 0 || len(rows) != 1 || st.DroppedInvalid != 1 {
		t.Errorf("SkipInvalid: rows %d, errors %v, stats %+v, err %v", len(rows), errs, st, err)
	}
	rows, errs, st, err = readRows(t, burst, Options{RequireOutput: true, DropFailed: true})
	if err != nil || len(errs) > 0 || len(rows) != 0 || st.DroppedFailed != 1 {
		t.Errorf("DropFailed: rows %d, errors %v, stats %+v, err %v", len(rows), errs, st, err)
	}
	if _, err := NewReader("t.jsonl", strings.NewReader(mooncake), Options{DefaultOutputTokens: -1}); err == nil {
		t.Error("a negative DefaultOutputTokens is accepted")
	}
}

// The input length of a row is capped at DefaultMaxInputTokens (2^24, above
// any model's context window), or Options.MaxInputTokens: the cap used to
// be 2^30 tokens, a 7 GB prompt. The error names the file, line and field
// and how to raise the cap.
func TestMaxInputTokens(t *testing.T) {
	over := `{"timestamp": 0, "input_length": 16777217, "output_length": 1}` + "\n"
	tests := []struct {
		name    string
		content string
		opts    Options
		wantErr string
	}{
		{"mooncake", over, Options{},
			"t.jsonl:1: input_length: 16777217 tokens, over the cap of 16777216 (--max-input-tokens): fix the row, or raise --max-input-tokens"},
		{"mooncake alias", `{"timestamp": 0, "input_tokens": 20000000, "output_length": 1}` + "\n", Options{},
			"t.jsonl:1: input_length: 20000000 tokens, over the cap of 16777216"},
		{"mooncake raised", over, Options{MaxInputTokens: 1 << 25}, ""},
		{"mooncake at cap", `{"timestamp": 0, "input_length": 16777216, "output_length": 1}` + "\n", Options{}, ""},
		{"mooncake lowered", `{"timestamp": 0, "input_length": 4097, "output_length": 1}` + "\n", Options{MaxInputTokens: 4096},
			"t.jsonl:1: input_length: 4097 tokens, over the cap of 4096"},
		{"bailian", `{"chat_id": 1, "timestamp": 0, "input_length": 16777217, "output_length": 1}` + "\n", Options{},
			"t.jsonl:1: input_length: 16777217 tokens, over the cap"},
		{"burstgpt", "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,16777217,3\n", Options{},
			"t.jsonl:2: Request tokens: 16777217 tokens, over the cap"},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,16777217,4\n", Options{},
			"t.jsonl:2: ContextTokens: 16777217 tokens, over the cap"},
		{"vidur", "arrived_at,num_prefill_tokens,num_decode_tokens\n1,16777217,4\n", Options{},
			"t.jsonl:2: num_prefill_tokens: 16777217 tokens, over the cap"},
		{"splitwisesim", "arrival_timestamp,prompt_size,token_size\n1,16777217,4\n", Options{},
			"t.jsonl:2: prompt_size: 16777217 tokens, over the cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, errs, _, err := readRows(t, tt.content, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantErr == "" {
				if len(errs) > 0 || len(rows) != 1 {
					t.Fatalf("rows %d, errors %v; want one row", len(rows), errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("errors %v; want one: %q", errs, tt.wantErr)
			}
			if !strings.Contains(errs[0].Error(), tt.wantErr) {
				t.Errorf("error %q\nwant it to contain %q", errs[0], tt.wantErr)
			}
		})
	}
	if _, err := NewReader("t.jsonl", strings.NewReader(over), Options{MaxInputTokens: -1}); err == nil {
		t.Error("a negative MaxInputTokens is accepted")
	}
}

// MaxRows ends a read after that many kept rows, without reading the
// lines after them (here a broken one), so a replay from a pipe can stop
// at its request count.
func TestMaxRows(t *testing.T) {
	content := `{"timestamp": 0, "input_length": 3, "output_length": 1}
{"timestamp": "x", "input_length": 3, "output_length": 1}
{"timestamp": 1, "input_length": 3, "output_length": 1}
{"timestamp": 2, "input_length": 3, "output_length": 1}
not json
`
	rows, errs, st, err := readRows(t, content, Options{MaxRows: 2, SkipInvalid: true})
	if err != nil || len(errs) > 0 || len(rows) != 2 || rows[1].Line != 3 || st.Kept != 2 || st.DroppedInvalid != 1 {
		t.Errorf("rows %+v, errors %v, stats %+v, err %v; want lines 1 and 3", rows, errs, st, err)
	}
	if _, err := NewReader("t.jsonl", strings.NewReader(content), Options{MaxRows: -1}); err == nil {
		t.Error("a negative MaxRows is accepted")
	}
}

// TestFailedRowLeftOutOfReplay: a row that failed in the source (BurstGPT,
// zero response tokens) has no output length a replay could ask for; with
// RequireOutput (a replay) and no default it is left out and counted, as
// DropFailed would, instead of stopping the read (traces/README.md).
func TestFailedRowLeftOutOfReplay(t *testing.T) {
	const burst = "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,10,5\n2,ChatGPT,10,0\n"
	rows, errs, st, err := readRows(t, burst, Options{RequireOutput: true})
	if err != nil || len(errs) > 0 {
		t.Fatalf("err %v, row errors %v; want the failed row left out", err, errs)
	}
	if len(rows) != 1 || rows[0].OutputTokens != 5 || st.DroppedFailed != 1 {
		t.Errorf("rows %+v, DroppedFailed %d; want the one good row and 1 failed row dropped", rows, st.DroppedFailed)
	}
}
