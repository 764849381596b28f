package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"

	"github.com/reprise-bench/reprise/internal/testfiles"
)

const ms = time.Millisecond

// readFile reads every row of a testdata file with Next (not sorted).
func readFile(t *testing.T, path string, opts Options) ([]Row, ReadStats, Format, error) {
	t.Helper()
	r, err := Open(path, opts)
	if err != nil {
		return nil, ReadStats{}, "", err
	}
	defer r.Close()
	var rows []Row
	var row Row
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows, r.Stats(), r.Format(), nil
		}
		if err != nil {
			return rows, r.Stats(), r.Format(), err
		}
		rows = append(rows, row.Clone())
	}
}

// base is a Row with the defaults every reader sets.
// firstError reads content as the file name up to its first error,
// NewReader's or Next's; nil when every row reads.
func firstError(name, content string, opts Options) error {
	r, err := NewReader(name, strings.NewReader(content), opts)
	if err != nil {
		return err
	}
	defer r.Close()
	var row Row
	for range 1 << 20 {
		if err := r.Next(&row); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return errors.New("firstError: over 2^20 rows without an end")
}

func base(index, line int64) Row { return Row{Index: index, Line: line, ParentID: -1, RequestID: -1} }

func TestFormats(t *testing.T) {
	mk := func(index, line int64, f func(*Row)) Row {
		r := base(index, line)
		f(&r)
		return r
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		file   string // under testdata, or a real trace (see real)
		real   bool   // file is a real trace of the repository's testdata/traces
		opts   Options
		format Format
		want   []Row
		stats  ReadStats
	}{
		{
			file: "bailian.jsonl", format: FormatBailian,
			want: []Row{
				mk(0, 1, func(r *Row) {
					r.HasOffset, r.InputTokens, r.OutputTokens, r.SessionID, r.RequestID = true, 40, 12, "0", 0
					r.BlockSize, r.HashIDs, r.Cumulative, r.Kind = 16, []uint64{0, 1, 2}, true, "text"
				}),
				mk(1, 2, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.SessionID, r.RequestID = 250*ms, true, 16, 3, "1", 1
					r.BlockSize, r.HashIDs, r.Cumulative, r.Kind = 16, []uint64{3}, true, "search"
				}),
				// 61.114 s exactly: seconds are converted without float rounding.
				mk(2, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.SessionID, r.Turn, r.ParentID, r.RequestID = 61114*ms, true, 70, 132, "0", 1, 0, 2
					r.BlockSize, r.HashIDs, r.Cumulative, r.Kind = 16, []uint64{0, 1, 4, 5, 6}, true, "text"
				}),
				mk(3, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.SessionID, r.Turn, r.ParentID, r.RequestID = 75500*ms, true, 90, 20, "0", 2, 2, 3
					r.BlockSize, r.HashIDs, r.Cumulative, r.Kind = 16, []uint64{0, 1, 4, 5, 7, 8}, true, "text"
				}),
				// Parent 99 never appears: an orphan starts its own session;
				// Turn still follows the row's own turn field.
				mk(4, 5, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.SessionID, r.Turn, r.ParentID, r.RequestID = 80001*ms, true, 17, 5, "4", 1, 99, 4
					r.BlockSize, r.HashIDs, r.Cumulative, r.Kind = 16, []uint64{9, 10}, true, "image"
				}),
			},
			stats: ReadStats{Read: 5, Kept: 5, Orphans: 1, Warnings: 1},
		},
		{
			file: "burstgpt_v1.csv", format: FormatBurstGPT,
			want: []Row{
				mk(0, 2, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind = true, 472, 18, "ChatGPT" }),
				mk(1, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind = 40*time.Second, true, 1087, 230, "ChatGPT"
				}),
				mk(2, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind = 113*time.Second, true, 417, 276, "GPT-4"
				}),
				mk(3, 5, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind, r.Failed = 113*time.Second, true, 300, 0, "ChatGPT", true
				}),
				mk(4, 6, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind, r.Failed = 125500*ms, true, 0, 0, "GPT-4", true
				}),
			},
			stats: ReadStats{Read: 5, Kept: 5, Failed: 2},
		},
		{
			// Drop failed rows, keep GPT-4: offsets re-base to the first kept row.
			file: "burstgpt_v1.csv", format: FormatBurstGPT, opts: Options{DropFailed: true, ModelFilter: "gpt-4"},
			want: []Row{
				mk(2, 4, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind = true, 417, 276, "GPT-4" }),
			},
			stats: ReadStats{Read: 5, Kept: 1, DroppedFailed: 1, DroppedFiltered: 3},
		},
		{
			file: "burstgpt_v3.csv", format: FormatBurstGPT,
			want: []Row{
				mk(0, 2, func(r *Row) {
					r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind, r.SessionID = true, 472, 18, "ChatGPT", "s1"
				}),
				mk(1, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind = time.Second, true, 100, 50, "GPT-4"
				}),
				mk(2, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind, r.SessionID, r.Turn = 10*time.Second, true, 600, 40, "ChatGPT", "s1", 1
				}),
				mk(3, 5, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Kind, r.SessionID, r.Failed = 11*time.Second, true, 77, 0, "GPT-4", "s2", true
				}),
			},
			stats: ReadStats{Read: 4, Kept: 4, Failed: 1},
		},
		{
			// The second row is earlier than the first (mixed layouts, with and without fraction).
			file: "azure2024.csv", format: FormatAzure,
			want: []Row{
				mk(0, 2, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens = true, 2048, 128 }),
				mk(1, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens = -9930*time.Microsecond, true, 100, 10
				}),
				mk(2, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens = 1490070*time.Microsecond, true, 300, 30
				}),
			},
			stats: ReadStats{Read: 3, Kept: 3, OutOfOrder: 1, Warnings: 1},
		},
		{
			file: "azure2025.csv", format: FormatAzure,
			want: []Row{
				mk(0, 2, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens, r.Images = true, 2000, 100, 1 }),
				mk(1, 3, func(r *Row) { r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens = 243*ms, true, 150, 12 }),
				mk(2, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.Images = 1731*ms, true, 4000, 250, 3
				}),
			},
			stats: ReadStats{Read: 3, Kept: 3},
		},
		{
			// CRLF, 7 fractional digits, no final newline.
			file: "azure2023_crlf.csv", format: FormatAzure,
			want: []Row{
				mk(0, 2, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens = true, 374, 44 }),
				mk(1, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens = 3319410*time.Microsecond, true, 100, 7
				}),
				mk(2, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens = 3819410*time.Microsecond, true, 200, 8
				}),
			},
			stats: ReadStats{Read: 3, Kept: 3},
		},
		{
			file: "vidur_bom.csv", format: FormatVidur,
			want: []Row{
				mk(0, 2, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens = true, 4808, 10 }),
				mk(1, 3, func(r *Row) { r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens = 52*ms, true, 3180, 8 }),
			},
			stats: ReadStats{Read: 2, Kept: 2},
		},
		{
			file: "aiperf_single.jsonl", format: FormatAIPerfSingle,
			want: []Row{
				mk(0, 1, func(r *Row) {
					r.HasOffset, r.OutputTokens, r.InputTokens = true, 20, 6
					r.Raw = raw(`{"text":"What is the capital of France?","text_input":"What is the capital of France?"}`)
				}),
				mk(1, 2, func(r *Row) {
					r.Offset, r.HasOffset = 1500500*time.Microsecond, true
					r.Raw = raw(`{"texts":[{"name": "query", "contents": ["Summarise this"]}],"extra":{"temperature": 0},"text_input":"Summarise this"}`)
					r.InputTokens = 2
				}),
				mk(2, 3, func(r *Row) {
					r.Delay, r.HasDelay, r.SessionID, r.Cumulative, r.Raw = 250*ms, true, "s1", true, raw(`{"text":"Hi","text_input":"Hi"}`)
					r.InputTokens = 1
				}),
				mk(3, 4, func(r *Row) {
					r.Delay, r.HasDelay, r.SessionID, r.Turn, r.Cumulative = time.Second, true, "s1", 1, true
					r.Raw, r.InputTokens = raw(`{"text":"Tell me more","role":"user","text_input":"Tell me more"}`), 3
				}),
				mk(4, 5, func(r *Row) {
					r.Offset, r.HasOffset = 3*time.Second, true
					// The image goes as a content part (it was read and
					// then not sent before design 0022).
					r.Raw, r.InputTokens = raw(`{"text":"What is this?","media":[{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}],"text_input":"What is this?"}`), 3
					r.Images, r.Media = 1, MediaStats{Images: 1, ImageSizes: "?"}
				}),
			},
			stats: ReadStats{Read: 5, Kept: 5},
		},
		{
			file: "aiperf_multi.jsonl", format: FormatAIPerfMulti,
			want: []Row{
				mk(0, 1, func(r *Row) {
					r.HasOffset, r.SessionID, r.Raw, r.InputTokens = true, "a", raw(`{"text":"Hello","text_input":"Hello"}`), 1
				}),
				mk(1, 1, func(r *Row) {
					r.Delay, r.HasDelay, r.OutputTokens, r.SessionID, r.Turn, r.Raw = 2*time.Second, true, 50, "a", 1, raw(`{"text":"And then?","text_input":"And then?"}`)
					r.InputTokens = 2
				}),
				mk(2, 2, func(r *Row) {
					r.Offset, r.HasOffset, r.SessionID, r.Raw = 100*ms, true, "b", raw(`{"text":"Explain KV caches","text_input":"Explain KV caches"}`)
					r.InputTokens = 3
				}),
				// Lines with the same session_id continue the session.
				mk(3, 3, func(r *Row) {
					r.Delay, r.HasDelay, r.SessionID, r.Turn, r.Raw = 500*ms, true, "a", 2, raw(`{"text":"Thanks","text_input":"Thanks"}`)
					r.InputTokens = 1
				}),
			},
			stats: ReadStats{Read: 4, Kept: 4},
		},
		{
			file: "mooncake_ext.jsonl", format: FormatMooncake,
			want: []Row{
				mk(0, 1, func(r *Row) {
					r.HasOffset, r.InputTokens, r.OutputTokens, r.SessionID, r.BlockSize, r.HashIDs = true, 600, 40, "sess-1", 512, []uint64{1, 2}
				}),
				mk(1, 2, func(r *Row) {
					r.Delay, r.HasDelay, r.InputTokens, r.OutputTokens, r.SessionID, r.Turn = 1500250*time.Microsecond, true, 100, 10, "sess-1", 1
					r.BlockSize, r.HashIDs = 512, []uint64{3}
				}),
				mk(2, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.OutputTokens, r.SessionID, r.BlockSize = 12500*time.Microsecond, true, 30, "sess-2", 512
					r.Raw = raw(`{"text_input":"Write a haiku about caches."}`)
				}),
				mk(3, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.SessionID, r.BlockSize, r.Cumulative = 20*ms, true, "sess-3", 512, true
					r.Raw = raw(`{"messages":[{"role": "user", "content": "hi"}],"tools":[{"type": "function", "function": {"name": "f"}}],"extra":{"temperature": 0.2},"headers":{"X-Tenant": "a"}}`)
				}),
				// Aliases created_time / input_tokens / output_tokens; unknown fields ignored.
				mk(4, 5, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.BlockSize, r.HashIDs = 30*ms, true, 512, 1, 512, []uint64{7}
				}),
				mk(5, 6, func(r *Row) {
					r.Offset, r.HasOffset, r.BlockSize, r.Cumulative = 40*ms, true, 512, true
					r.Raw = raw(`{"payload":{"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5}}`)
				}),
			},
			stats: ReadStats{Read: 6, Kept: 6},
		},
		{
			file: "splitwise/test_trace.csv", real: true, format: FormatSplitwiseSim,
			want: []Row{
				mk(0, 2, func(r *Row) { r.HasOffset, r.InputTokens, r.OutputTokens, r.RequestID = true, 4096, 32, 0 }),
				mk(1, 3, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.RequestID = 2*time.Second, true, 2048, 8, 1
				}),
				mk(2, 4, func(r *Row) {
					r.Offset, r.HasOffset, r.InputTokens, r.OutputTokens, r.RequestID = 3*time.Second, true, 2048, 16, 2
				}),
			},
			stats: ReadStats{Read: 3, Kept: 3},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			if tt.real {
				path = testfiles.Trace(t, tt.file)
			}
			rows, stats, format, err := readFile(t, path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if format != tt.format {
				t.Errorf("format = %q, want %q", format, tt.format)
			}
			stats.FirstWarnings = nil
			if d := cmp.Diff(tt.stats, stats); d != "" {
				t.Errorf("stats (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, rows, cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
			// The same file forced to its format reads the same.
			again, _, _, err := readFile(t, path, Options{Format: tt.format, DropFailed: tt.opts.DropFailed, ModelFilter: tt.opts.ModelFilter})
			if err != nil || len(again) != len(rows) {
				t.Errorf("forced format: %d rows, %v; want %d rows", len(again), err, len(rows))
			}
		})
	}
}

func TestCompressed(t *testing.T) {
	plain, _, _, err := readFile(t, "testdata/mooncake40.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 40 {
		t.Fatalf("%d rows, want 40", len(plain))
	}
	for _, f := range []string{"testdata/mooncake40.jsonl.gz", "testdata/mooncake40.jsonl.zst"} {
		rows, _, format, err := readFile(t, f, Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if format != FormatMooncake {
			t.Errorf("%s: format %q", f, format)
		}
		if d := cmp.Diff(plain, rows); d != "" {
			t.Errorf("%s differs from the plain file (-plain +got):\n%s", f, d)
		}
	}
	// A multi-member gzip file (two members concatenated) reads as one stream.
	gz, err := os.ReadFile("testdata/mooncake40.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader("twice.jsonl.gz", bytes.NewReader(append(append([]byte(nil), gz...), gz...)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var row Row
	n := 0
	for r.Next(&row) == nil {
		n++
	}
	if n != 80 || r.Stats().OutOfOrder != 1 {
		t.Errorf("multi-member gzip: %d rows, stats %+v; want 80 rows, 1 out of order", n, r.Stats())
	}
	if _, err := Open("testdata/does-not-exist.jsonl", Options{}); err == nil || !strings.Contains(err.Error(), "open trace: open testdata/does-not-exist.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, content string
		opts          Options
		want          string // substring of the first error
		sentinel      error
	}{
		{"ids", `{"timestamp": 0, "input_length": 2000, "output_length": 5, "hash_ids": [1, 2, 3]}`, Options{},
			"t.jsonl:1: hash_ids: 3 ids but input_length 2000 needs 4 at block size 512", nil},
		{"negative", `{"timestamp": -5, "input_length": 10, "output_length": 5}`, Options{},
			"t.jsonl:1: timestamp: -5 is negative", nil},
		{"osl", `{"timestamp": 1, "input_length": 10, "output_length": 0}`, Options{},
			"t.jsonl:1: output_length: 0 tokens; must be ≥ 1", nil},
		{"both", `{"timestamp": 1, "delay": 5, "input_length": 10}`, Options{},
			"t.jsonl:1: delay: timestamp and delay are exclusive", nil},
		{"noinput", `{"timestamp": 1, "output_length": 4, "hash_ids": []}`, Options{Format: FormatMooncake},
			"t.jsonl:1: input_length: missing", nil},
		{"syntax", "{\"timestamp\": 1, \"input_length\": 10\n", Options{Format: FormatMooncake},
			"t.jsonl:1: invalid JSON at byte", nil},
		{"nan", "{\"timestamp\": NaN, \"input_length\": 10}", Options{Format: FormatMooncake},
			"t.jsonl:1: invalid JSON", nil},
		{"alias", `{"timestamp": 1, "created_time": 1, "input_length": 10}`, Options{},
			"timestamp and created_time are the same field", nil},
		{"tools", `{"timestamp": 1, "text_input": "x", "tools": [{"a": 1}]}`, Options{},
			"tools: only allowed together with messages", nil},
		{"two inputs", `{"timestamp": 1, "text_input": "x", "input_length": 4}`, Options{},
			"more than one input", nil},
		{"bailian missing", `{"chat_id": 1, "timestamp": 1.5, "input_length": 3}`, Options{},
			"t.jsonl:1: output_length: missing; a Bailian row needs", nil},
		{"csv column", "Timestamp,Model,Request tokens,Response\n1,a,2,3\n", Options{Format: FormatBurstGPT},
			`t.jsonl:1: bad CSV header: no column "Response tokens" (the columns found are "Timestamp", "Model", "Request tokens", "Response"); a burstgpt trace needs Timestamp, Model, Request tokens, Response tokens, in any order and case`, ErrHeader},
		// Detected from arrived_at alone; SkipInvalid cannot skip a header.
		{"csv columns", "\n\narrived_at, prefill\n1,2\n", Options{SkipInvalid: true},
			`t.jsonl:3: bad CSV header: no columns "num_prefill_tokens", "num_decode_tokens" (the columns found are "arrived_at", "prefill"); a vidur trace needs`, ErrHeader},
		// A wide header from another format is quoted up to 20 columns.
		{"csv wide header", "c0,c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12,c13,c14,c15,c16,c17,c18,c19,c20,c21,c22,c23,c24\n", Options{Format: FormatVidur},
			`"c18", "c19" and 5 more)`, ErrHeader},
		{"azure columns", "TIMESTAMP,ContextTokens\n", Options{Format: FormatAzure},
			`t.jsonl:1: bad CSV header: no column "GeneratedTokens"`, ErrHeader},
		{"csv header quote", "\"Timestamp,Model\n", Options{Format: FormatBurstGPT},
			"t.jsonl:1: bad CSV header: unterminated quoted field", ErrHeader},
		{"csv short row", "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,3\n", Options{},
			"t.jsonl:2: num_decode_tokens: missing: the row has 2 fields, the header 3", nil},
		{"azure time", "TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023 18:15,3,4\n", Options{},
			`t.jsonl:2: TIMESTAMP: "16/11/2023 18:15" is not a time`, nil},
		{"csv nan", "arrived_at,num_prefill_tokens,num_decode_tokens\nNaN,3,4\n", Options{},
			`t.jsonl:2: arrived_at: "NaN" is not a number`, nil},
		{"lfs", "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n", Options{},
			"t.jsonl:1: file is a Git LFS pointer, not the trace data (oid sha256:abc, size 123 bytes)", ErrLFSPointer},
		{"empty", "", Options{}, "t.jsonl: the trace is empty: 0 bytes", ErrEmpty},
		{"sharegpt", `[{"id": "x", "conversations": []}]`, Options{}, "a conversation needs a human message", nil},
		{"servegen", "0,1.33,8.59,Weibull,0.37,0.39\r\n600,0,0,,0,0\r\n", Options{}, "ServeGen", ErrUnknownFormat},
		{"unknown json", `{"foo": 1}`, Options{}, "JSON keys foo match no format", ErrUnknownFormat},
		{"model filter", `{"timestamp": 1, "input_length": 3}`, Options{ModelFilter: "x"}, "applies only to burstgpt", nil},
		{"bad format", `{}`, Options{Format: "nope"}, `unknown trace format "nope"`, nil},
		{"multi empty", `{"session_id": "a", "turns": []}`, Options{}, "t.jsonl:1: turns: empty", nil},
		{"single modality", `{"text": "a", "texts": ["b"]}`, Options{}, "t.jsonl:1: texts: text and texts are exclusive", nil},
		{"strict", "{\"timestamp\": 5, \"input_length\": 3}\n{\"timestamp\": 4, \"input_length\": 3}\n", Options{Strict: true},
			"t.jsonl:2: timestamp: arrival -1ms is earlier than 0s on line 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := firstError("t.jsonl", tt.content, tt.opts)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if _, ok := errors.AsType[*ParseError](err); !ok {
				t.Errorf("error %T is not a *ParseError", err)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error does not match %v", tt.sentinel)
			}
		})
	}
}

// TestEmpty checks that a trace without a non-blank line is ErrEmpty on
// every path that reads one, whether the format is detected or named: it
// used to be "cannot tell the format" when detected, and 0 rows when named.
func TestEmpty(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("\n"))
	zw.Close()
	contents := []struct {
		name, content, want string
	}{
		{"0 bytes", "", "the trace is empty: 0 bytes, so no rows"},
		{"blank lines", "\n  \r\n\t\n", "the trace is empty: 3 blank lines, so no rows"},
		{"BOM only", "\xef\xbb\xbf", "the trace is empty: 0 bytes"},
		{"gzip", gz.String(), "the trace is empty: 1 blank line once decompressed"},
	}
	formats := append([]Format{""}, allFormats...)
	dir := t.TempDir()
	for _, c := range contents {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range formats {
			check := func(t *testing.T, name string, err error) {
				t.Helper()
				if !errors.Is(err, ErrEmpty) {
					t.Fatalf("error %v, want ErrEmpty", err)
				}
				if pe, ok := errors.AsType[*ParseError](err); !ok || pe.Path != name || pe.Line != 0 {
					t.Errorf("error %#v, want a *ParseError for the whole file %s", err, name)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %q\nwant it to contain %q", err, c.want)
				}
			}
			opts := Options{Format: f}
			name := string(f)
			if f == "" {
				name = "detect"
			}
			t.Run(c.name+"/"+name, func(t *testing.T) {
				_, err := NewReader("t", strings.NewReader(c.content), opts)
				check(t, "t", err)
				_, err = Open(path, opts)
				check(t, path, err)
				_, _, err = ReadAll(path, opts)
				check(t, path, err)
				if f == "" {
					_, err = Detect("t", strings.NewReader(c.content))
					check(t, "t", err)
				}
			})
		}
	}
	// A header alone is not empty: it is a trace of 0 rows.
	r, err := NewReader("h.csv", strings.NewReader("arrived_at,num_prefill_tokens,num_decode_tokens\n\n"), Options{})
	if err != nil {
		t.Fatalf("header only: %v", err)
	}
	defer r.Close()
	if err := r.Next(&Row{}); !errors.Is(err, io.EOF) {
		t.Errorf("header only: Next = %v, want io.EOF", err)
	}
}

func TestSkipInvalid(t *testing.T) {
	rows, stats, _, err := readFile(t, "testdata/mooncake_bad.jsonl", Options{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Line != 7 || rows[0].Offset != 0 {
		t.Errorf("rows = %+v, want only line 7 at offset 0 (re-based to the first kept row)", rows)
	}
	if stats.Read != 7 || stats.DroppedInvalid != 6 || stats.Kept != 1 || stats.Warnings != 6 || len(stats.FirstWarnings) != 6 {
		t.Errorf("stats = %+v", stats)
	}
	if !strings.HasPrefix(stats.FirstWarnings[0], "testdata/mooncake_bad.jsonl:1: hash_ids: 3 ids") {
		t.Errorf("first warning %q", stats.FirstWarnings[0])
	}
	// Without SkipInvalid the caller can go on after a row error.
	r, err := Open("testdata/mooncake_bad.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var row Row
	var nerr, nok int
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			pe, ok := errors.AsType[*ParseError](err)
			if !ok || pe.Line < 1 {
				t.Fatalf("error %v is not a positioned *ParseError", err)
			}
			nerr++
			continue
		}
		nok++
	}
	if nerr != 6 || nok != 1 {
		t.Errorf("%d errors and %d rows, want 6 and 1", nerr, nok)
	}
}

func TestLongLines(t *testing.T) {
	// A Bailian-like row with 20,000 ids (~140 KB) is read whole.
	var b strings.Builder
	b.WriteString(`{"chat_id": 7, "timestamp": 1.5, "input_length": 320000, "output_length": 9, "hash_ids": [`)
	for i := range 20000 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("1234567")
	}
	b.WriteString("]}\n")
	long := b.String()
	r, err := NewReader("long.jsonl", strings.NewReader(long+long), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var row Row
	for i := range 2 {
		if err := r.Next(&row); err != nil {
			t.Fatal(err)
		}
		if len(row.HashIDs) != 20000 || row.Line != int64(i+1) {
			t.Fatalf("row %d: %d ids, line %d", i, len(row.HashIDs), row.Line)
		}
	}
	// Over the cap: the line is reported by number and skipped.
	r, err = NewReader("long.jsonl", strings.NewReader(`{"chat_id": 1, "timestamp": 1, "input_length": 1, "output_length": 1}`+"\n"+long+`{"chat_id": 2, "timestamp": 2, "input_length": 1, "output_length": 1}`+"\n"), Options{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	r.lr.maxLine = 100000
	var lines []int64
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
	if d := cmp.Diff([]int64{1, 3}, lines); d != "" || r.Stats().DroppedInvalid != 1 {
		t.Errorf("lines (-want +got): %s; stats %+v", d, r.Stats())
	}
	if w := r.Stats().FirstWarnings; len(w) != 1 || !strings.HasPrefix(w[0], "long.jsonl:2: line too long") {
		t.Errorf("warnings %q", w)
	}
}

// TestRealTraces checks the readers against the shape tables of
// docs/reference/real-traces.md §1 (rows, token sums, span, distinct timestamps).
func TestRealTraces(t *testing.T) {
	tests := []struct {
		file           string
		format         Format
		rows           int
		in, out        int64
		span           time.Duration
		distinct       int
		maxIDs, sumIDs int
	}{
		{"mooncake/conversation_trace.jsonl", FormatMooncake, 12031, 144793823, 4122048, 3536999 * ms, 1180, 247, 0},
		{"mooncake/synthetic_trace.jsonl", FormatMooncake, 3993, 61194628, 595432, 1022025 * ms, 3982, 374, 0},
		{"azure2023/AzureLLMInferenceTrace_code.csv", FormatAzure, 8819, 0, 0, 0, 8819, 0, 0},
		{"azure2023/AzureLLMInferenceTrace_conv.csv", FormatAzure, 19366, 0, 0, 0, 19366, 0, 0},
		{"splitwise/splitwise_code.csv", FormatVidur, 8819, 0, 0, 0, 8819, 0, 0},
		{"splitwise/splitwise_conv.csv", FormatVidur, 19366, 0, 0, 0, 19366, 0, 0},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			rows, stats, err := ReadAll(testfiles.Trace(t, tt.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tt.rows || stats.Kept != int64(tt.rows) || stats.OutOfOrder != 0 || stats.Moved != 0 {
				t.Errorf("%d rows, stats %+v; want %d rows in order", len(rows), stats, tt.rows)
			}
			var in, out int64
			distinct := map[time.Duration]bool{}
			maxIDs := 0
			for i, r := range rows {
				in += int64(r.InputTokens)
				out += int64(r.OutputTokens)
				distinct[r.Offset] = true
				maxIDs = max(maxIDs, len(r.HashIDs))
				if r.Index != int64(i) {
					t.Fatalf("row %d has Index %d", i, r.Index)
				}
			}
			if tt.in != 0 && (in != tt.in || out != tt.out) {
				t.Errorf("tokens in/out = %d/%d, want %d/%d", in, out, tt.in, tt.out)
			}
			if tt.span != 0 && rows[len(rows)-1].Offset != tt.span {
				t.Errorf("span %v, want %v", rows[len(rows)-1].Offset, tt.span)
			}
			if len(distinct) != tt.distinct {
				t.Errorf("%d distinct timestamps, want %d", len(distinct), tt.distinct)
			}
			if tt.maxIDs != 0 && maxIDs != tt.maxIDs {
				t.Errorf("max ids per row %d, want %d", maxIDs, tt.maxIDs)
			}
		})
	}
}

// TestSplitwiseEqualsAzure: the Vidur files are the Azure 2023 files
// re-based, so both readers must produce the same rows.
func TestSplitwiseEqualsAzure(t *testing.T) {
	for _, kind := range []string{"code", "conv"} {
		az, _, err := ReadAll(testfiles.Trace(t, "azure2023/AzureLLMInferenceTrace_"+kind+".csv"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		sw, _, err := ReadAll(testfiles.Trace(t, "splitwise/splitwise_"+kind+".csv"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(az) != len(sw) {
			t.Fatalf("%s: %d vs %d rows", kind, len(az), len(sw))
		}
		for i := range az {
			a, s := az[i], sw[i]
			d := a.Offset - s.Offset
			if d < -time.Microsecond || d > time.Microsecond || a.InputTokens != s.InputTokens || a.OutputTokens != s.OutputTokens {
				t.Fatalf("%s row %d: azure %v %d/%d, splitwise %v %d/%d", kind, i, a.Offset, a.InputTokens, a.OutputTokens, s.Offset, s.InputTokens, s.OutputTokens)
			}
		}
	}
}

// TestShuffledSorted: ReadAll of a shuffled Mooncake trace sorts it back
// stably: same multiset per timestamp, and ties keep file order.
func TestShuffledSorted(t *testing.T) {
	data := testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl")
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	path := filepath.Join(t.TempDir(), "shuffled.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, stats, err := ReadAll(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Moved == 0 || stats.OutOfOrder == 0 {
		t.Errorf("stats %+v: want moved and out-of-order rows", stats)
	}
	if rows[0].Offset != 0 {
		t.Errorf("first offset %v, want 0 after re-basing", rows[0].Offset)
	}
	orig, _, err := ReadAll(testfiles.Trace(t, "mooncake/conversation_trace.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var a, b []time.Duration
	for i := range rows {
		if i > 0 && rows[i].Offset == rows[i-1].Offset && rows[i].Index < rows[i-1].Index {
			t.Fatalf("row %d: tie not in file order", i)
		}
		if i > 0 && rows[i].Offset < rows[i-1].Offset {
			t.Fatalf("row %d not sorted", i)
		}
		a = append(a, rows[i].Offset)
		b = append(b, orig[i].Offset)
	}
	if d := cmp.Diff(b, a); d != "" {
		t.Errorf("offsets differ from the original:\n%s", d)
	}
	if _, _, err := ReadAll(path, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("strict: %v", err)
	}
}

func TestStdin(t *testing.T) {
	f, err := os.Open("testdata/bailian.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	rows, _, err := ReadAll("-", Options{})
	if err != nil || len(rows) != 5 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

func TestParseFormat(t *testing.T) {
	for _, name := range FormatNames() {
		f, err := ParseFormat(strings.ToUpper(name))
		if err != nil || string(f) != name {
			t.Errorf("ParseFormat(%q) = %q, %v", name, f, err)
		}
	}
	if f, err := ParseFormat("splitwise"); f != FormatVidur || err != nil {
		t.Errorf("splitwise alias: %q %v", f, err)
	}
	if f, err := ParseFormat(""); f != "" || err != nil {
		t.Errorf("empty: %q %v", f, err)
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "mooncake, bailian") {
		t.Errorf("unknown: %v", err)
	}
}

// TestBundledTraces reads the example traces shipped in traces/.
func TestBundledTraces(t *testing.T) {
	tests := []struct {
		file     string
		format   Format
		rows     int
		sessions int
		failed   int64
	}{
		{"mooncake-sample.jsonl", FormatMooncake, 300, 0, 0},
		{"bailian-sample.jsonl", FormatBailian, 44, 20, 0},
		{"burstgpt-sample.csv", FormatBurstGPT, 120, 6, 5},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Open(filepath.Join("..", "traces", tt.file), Options{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			sessions := map[string]bool{}
			var row Row
			for {
				err := r.Next(&row)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if row.SessionID != "" {
					sessions[row.SessionID] = true
				}
			}
			st := r.Stats()
			if r.Format() != tt.format || st.Kept != int64(tt.rows) || len(sessions) != tt.sessions || st.Failed != tt.failed || st.Warnings != 0 {
				t.Errorf("%s: %d rows, %d sessions, stats %+v; want %s, %d rows, %d sessions, %d failed",
					r.Format(), st.Kept, len(sessions), st, tt.format, tt.rows, tt.sessions, tt.failed)
			}
		})
	}
}

// TestWarningsLogged: skipped rows are logged at WARN, the first
// maxWarnings of them, then one line saying the rest are only counted.
func TestWarningsLogged(t *testing.T) {
	var log bytes.Buffer
	var b strings.Builder
	for i := range 15 {
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_length\": 0}\n", i)
	}
	r, err := NewReader("w.jsonl", strings.NewReader(b.String()), Options{
		Format: FormatMooncake, SkipInvalid: true, Log: slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var row Row
	if err := r.Next(&row); !errors.Is(err, io.EOF) {
		t.Fatalf("Next = %v, want io.EOF after skipping every row", err)
	}
	st := r.Stats()
	if st.DroppedInvalid != 15 || st.Warnings != 15 || len(st.FirstWarnings) != maxWarnings {
		t.Errorf("stats %+v", st)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != maxWarnings+1 || !strings.Contains(lines[0], `w.jsonl:1: input_length: 0 tokens; must be ≥ 1`) ||
		!strings.Contains(lines[maxWarnings], "further trace warnings are only counted") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestOpenDirectory: a directory is ErrIsDir, about the whole file, not a
// read error (which tells of a compressed file cut short).
func TestOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir, Options{})
	pe, ok := errors.AsType[*ParseError](err)
	if !errors.Is(err, ErrIsDir) || errors.Is(err, ErrRead) || !ok || pe.Path != dir || pe.Line != 0 {
		t.Fatalf("Open(dir) = %v, want ErrIsDir about %s", err, dir)
	}
	if _, _, err := ReadAll(dir, Options{}); !errors.Is(err, ErrIsDir) {
		t.Errorf("ReadAll(dir) = %v, want ErrIsDir", err)
	}
}
