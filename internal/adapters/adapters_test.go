package adapters

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/exitcode"
)

// TestValidate checks that Validate reports every problem of a config, in
// order, one a line.
func TestValidate(t *testing.T) {
	ok := filepath.Join("..", "..", "wasm", "testdata", "recordings", "anthropic-stream-thinking.http")
	for _, tt := range []struct {
		name string
		c    TestConfig
		want string // "" = valid
	}{
		{"build", TestConfig{Args: []string{"chat"}, Build: true}, ""},
		{"fixture", TestConfig{Args: []string{"x.wasm"}, Fixtures: []string{ok}, Batch: 3}, ""},
		{"nothing", TestConfig{}, "missing adapter: give a .wasm file or a shipped name\n" +
			"nothing to do: give --fixture PATH (a recorded .http response or a raw SSE body) and/or --build"},
		{"two, bad batch", TestConfig{Args: []string{"a", "b"}, Build: true, Batch: -1}, "want one adapter, got 2: a b\n" +
			"--batch -1: want a positive number of events (0 = all in one batch)"},
		{"missing fixture", TestConfig{Args: []string{"chat"}, Fixtures: []string{"/no/such/file"}},
			"--fixture: stat /no/such/file: no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.want == "":
			case err == nil:
				t.Errorf("Validate: nil, want %q", tt.want)
			case err.Error() != tt.want:
				t.Errorf("Validate:\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

// TestTest runs native, template and Wasm adapters on fixtures and checks
// what is written and the exit code of each outcome.
func TestTest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	responses := filepath.Join("..", "..", "engine", "adapter", "openai", "testdata", "responses", "stream-summary-incomplete.http")
	rec := filepath.Join("..", "..", "wasm", "testdata", "recordings", "anthropic-stream-thinking.http")
	trap := filepath.Join("..", "..", "wasm", "testdata", "hostile", "trap.wasm")
	template := filepath.Join("..", "..", "engine", "adapter", "openai", "templates", "openai-chat.json")
	raw := write("raw.sse", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
	for _, tt := range []struct {
		name string
		c    TestConfig
		code int
		want []string // in the output, in order
	}{
		{"native", TestConfig{Args: []string{"responses"}, Build: true, Fixtures: []string{responses}}, exitcode.OK,
			[]string{"== build (sample row: max_tokens 16, stream)\nPOST /v1/responses\n", `"max_output_tokens":16`,
				"== stream-summary-incomplete.http: HTTP 200, 19 events, adapter time ", "-> reasoning text_bytes=12 [captured]",
				"final: prompt_tokens=40 completion_tokens=16 reasoning_tokens=12 cached_tokens=0 finish=length choices=1"}},
		{"native bad options", TestConfig{Args: []string{"responses"}, Build: true, AdapterConfig: `{"max_tokens_field":1}`}, exitcode.Usage, nil},
		{"template", TestConfig{Args: []string{template}, Fixtures: []string{raw}}, exitcode.OK,
			[]string{"== raw.sse: HTTP 200, 1 events", "-> content text_bytes=2 [captured]", `text: "hi"`}},
		{"missing template", TestConfig{Args: []string{"nope.json"}, Build: true}, exitcode.Usage, nil},
		{"wasm", TestConfig{Args: []string{"anthropic-messages"}, Fixtures: []string{rec}, Build: true, Batch: 1}, exitcode.OK,
			[]string{"POST /v1/messages", "«prompt hole kind 1»", "-> reasoning text_bytes=22 [captured]", "finish=stop"}},
		{"unknown wasm", TestConfig{Args: []string{"nope"}, Build: true}, exitcode.Usage, nil},
		{"adapter fails", TestConfig{Args: []string{trap}, Fixtures: []string{write("bang.sse", "data: !\n\n")}}, exitcode.RunError,
			[]string{"== bang.sse: HTTP 200, 1 events", "adapter error:", "unreachable"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			err := Test(context.Background(), &b, tt.c)
			if got := exitcode.Code(err); got != tt.code {
				t.Fatalf("exit code %d (%v), want %d\n%s", got, err, tt.code, b.String())
			}
			out := b.String()
			for _, w := range tt.want {
				i := strings.Index(out, w)
				if i < 0 {
					t.Fatalf("output lacks %q (or has it too early):\n%s", w, b.String())
				}
				out = out[i+len(w):]
			}
		})
	}
}

// TestListInspect checks that List names both kinds of adapter and that
// Inspect describes a shipped one, or fails with a usage error.
func TestListInspect(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	if err := List(ctx, &b, nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"NAME  ", "responses", "native", "/v1/responses", "tgi-generate", "wasm", "KiB"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("List lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := Inspect(ctx, &b, "tgi-generate", nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"name:           tgi-generate\n", "language:       C\n", "abi:            v1\n", "imports:        (none)\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("Inspect lacks %q:\n%s", w, b.String())
		}
	}
	if err := Inspect(ctx, new(strings.Builder), "nope", nil); exitcode.Code(err) != exitcode.Usage {
		t.Errorf("Inspect(nope): %v, want a usage error", err)
	}
}

// TestByteSize checks the units and their boundaries.
func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 1 << 20: "1.0 MiB", 5<<20 + 1<<19: "5.5 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
