package trace

import (
	"strings"
	"testing"
)

// TestRecordedMooncake reads the keys reprise record writes: the file's
// block size from its first row (a 300-token prompt has 19 ids at 16, where
// Mooncake's 512 would want 1), the endpoint and the template tokens; the
// writer writes them back.
func TestRecordedMooncake(t *testing.T) {
	ids := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = "1"
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	text := `{"timestamp": 0, "input_length": 300, "template_tokens": 27, "hash_ids": ` + ids(19) + `, "block_size": 16, "endpoint": "chat", "request_id": 0}` + "\n" +
		`{"timestamp": 5, "input_length": 20, "hash_ids": ` + ids(2) + `, "block_size": 16, "endpoint": "completions", "request_id": 1}` + "\n"
	rd, err := NewReader("rec.jsonl", strings.NewReader(text), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rd.BlockSize() != 16 {
		t.Errorf("BlockSize() %d before the first row, want the file's 16", rd.BlockSize())
	}
	rows, _, err := ReadAllFrom(rd)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.BlockSize != 16 || r.TemplateTokens != 27 || r.Endpoint != EndpointChat || rows[1].Endpoint != EndpointCompletions || rows[1].TemplateTokens != 0 {
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
	again, _, err := ReadAllFrom(mustNewReader(t, b.String(), Options{}))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !sameRows(rows, again) || again[0].TemplateTokens != 27 || again[1].Endpoint != EndpointCompletions {
		t.Errorf("round trip:\n%s\n%s", diffRows(rows, again), b.String())
	}
	// --block-size overrides the file's.
	if _, _, err := ReadAllFrom(mustNewReader(t, text, Options{BlockSize: 512})); err == nil ||
		!strings.Contains(err.Error(), "rec.jsonl:1: hash_ids: 19 ids but input_length 300 needs 1 at block size 512") {
		t.Errorf("with --block-size 512: %v", err)
	}
}

func mustNewReader(t *testing.T, text string, o Options) *Reader {
	t.Helper()
	rd, err := NewReader("rec.jsonl", strings.NewReader(text), o)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

func TestRecordedMooncakeErrors(t *testing.T) {
	first := `{"timestamp": 0, "input_length": 20, "hash_ids": [1, 2], "block_size": 16, "endpoint": "chat"}` + "\n"
	tests := []struct {
		text string
		opts Options
		want string
	}{
		{first + `{"timestamp": 1, "input_length": 20, "hash_ids": [1], "block_size": 32}`, Options{},
			`x.jsonl:2: block_size: 32, but the file's block size is 16`},
		{`{"timestamp": 0, "input_length": 20}` + "\n" + `{"timestamp": 1, "input_length": 20, "block_size": 16}`, Options{},
			`x.jsonl:2: block_size: 16, but the file's block size is 512`},
		{`{"timestamp": 0, "input_length": 20, "block_size": 0}`, Options{}, `x.jsonl:1: block_size: 0: want a whole number of tokens ≥ 1`},
		{`{"timestamp": 0, "input_length": 20, "endpoint": "embeddings"}`, Options{}, `x.jsonl:1: endpoint: "embeddings": want "chat" or "completions"`},
		{first, Options{Endpoint: EndpointCompletions}, `x.jsonl:1: endpoint: recorded through chat, but this run sends completions requests: replay with --endpoint chat`},
		{`{"timestamp": 0, "input_length": 20, "template_tokens": 20}`, Options{}, `x.jsonl:1: template_tokens: 20 tokens of input_length 20: the template leaves no prompt`},
		{`{"timestamp": 0, "input_length": 20, "template_tokens": -1}`, Options{}, `x.jsonl:1: template_tokens: -1`},
		{`{"timestamp": 0, "text_input": "hi", "template_tokens": 2}`, Options{}, `x.jsonl:1: template_tokens: only allowed together with input_length`},
	}
	for _, tc := range tests {
		tc.opts.Format = FormatMooncake
		last := firstError("x.jsonl", tc.text, tc.opts)
		if last == nil || !strings.HasPrefix(last.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.text, last, tc.want)
		}
	}
}
