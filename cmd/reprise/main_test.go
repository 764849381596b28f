package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	// A calibration of the machine the tests run on (reprise selftest's,
	// in the user cache directory) must not change their replays: a test
	// applies one only by naming it.
	os.Setenv("REPRISE_CALIBRATION", "off")
	// No test reaches the real Hugging Face Hub: a model id tokenizer or
	// public dataset a test does not serve from its fake Hub fails at
	// once, and nothing is read from the user's cache. A CLI child (the
	// doc-test's commands among them) keeps the Hub its test gave it.
	if os.Getenv(cliChildEnv) == "" {
		os.Setenv("HF_ENDPOINT", "http://127.0.0.1:9")
		os.Setenv("HF_HUB_CACHE", filepath.Join(os.TempDir(), "reprise-test-no-hf-cache"))
	}
	os.Exit(m.Run())
}

// runCLI runs the CLI in-process and returns the exit code and both streams.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"reprise"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "--version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"reprise ", "commit ", "go1."} {
		if !strings.Contains(out, want) {
			t.Errorf("version %q lacks %q", out, want)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	tests := [][]string{
		{"--no-such-flag"},
		{"--log-level", "loud", "--version"},
		{"--log-format", "xml", "--version"},
		{"no-such-command"},
	}
	for _, args := range tests {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut)
		}
		if !strings.Contains(errOut, "reprise:") {
			t.Errorf("%v: stderr %q does not explain the error", args, errOut)
		}
	}
}

func TestLogLevelFromEnv(t *testing.T) {
	t.Setenv("REPRISE_LOG_LEVEL", "loud")
	if code, _, _ := runCLI(t, "", "--version"); code != 2 {
		t.Errorf("REPRISE_LOG_LEVEL=loud: exit %d, want 2", code)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "--help")
	if code != 0 || !strings.Contains(out, "Exit codes") {
		t.Errorf("exit %d, help:\n%s", code, out)
	}
	// Every command is listed, completion too.
	for _, name := range []string{"replay", "adapters", "selftest", "completion"} {
		if !strings.Contains(out, "\n   "+name+" ") {
			t.Errorf("reprise --help does not list %s:\n%s", name, out)
		}
	}
	// A command made of subcommands prints its help without one.
	if code, out, _ := runCLI(t, "", "adapters"); code != 0 || !strings.Contains(out, "inspect") {
		t.Errorf("reprise adapters: exit %d, output:\n%s", code, out)
	}
}

// The committed completion scripts (docs/completion, regenerated with
// `go generate ./cmd/reprise`) match what the binary prints.
func TestCompletionScriptsUpToDate(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := runCLI(t, "", "completion", sh)
		if code != 0 {
			t.Fatalf("completion %s: exit %d: %s", sh, code, errOut)
		}
		want, err := os.ReadFile("../../docs/completion/reprise." + sh)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("docs/completion/reprise.%s is stale: run go generate ./cmd/reprise", sh)
		}
	}
}

// Flag and command mistakes are explained in reprise's words, with the
// closest name as a suggestion when there is one.
func TestUsageErrorMessages(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want []string // substrings of stderr
	}{
		{args: []string{"replay", "--urll", "http://x"}, want: []string{"reprise: unknown flag --urll\n", "did you mean --url?", "see 'reprise replay --help'"}},
		{args: []string{"replay", "--trace_format", "mooncake"}, want: []string{"did you mean --trace-format?"}},
		// Two letters swapped: one edit from --model, as --mode is one
		// deletion away; the name of the same length wins.
		{args: []string{"replay", "--modle", "M"}, want: []string{"reprise: unknown flag --modle\n", "did you mean --model?"}},
		{args: []string{"adapters", "bogus"}, want: []string{`reprise: unknown command "bogus" for 'reprise adapters'` + "\n",
			"'reprise adapters' has the commands list, inspect, test, new;"}},
		{args: []string{"adapters", "lst"}, want: []string{"did you mean 'reprise adapters list'?"}},
		{args: []string{"completion", "tcsh"}, want: []string{`unknown command "tcsh" for 'reprise completion'`, "bash, zsh, fish, pwsh"}},
		{args: []string{"help", "bogus"}, want: []string{`reprise: help: unknown command "bogus"`}},
		{args: []string{"--bogus"}, want: []string{"reprise: unknown flag --bogus\nhint: see 'reprise --help'\n"}},
		{args: []string{"replay", "-x"}, want: []string{"reprise: unknown flag -x\nhint: see 'reprise replay --help'\n"}}, // no guess from one letter
		{args: []string{"replai"}, want: []string{`unknown command "replai"`, "did you mean 'reprise replay'?"}},
		{args: []string{"analyze"}, want: []string{"did you mean 'reprise analyze-trace'?"}}, // a unique prefix
		{args: []string{"replay", "--speedup", "abc"}, want: []string{`reprise: --speedup "abc": want a number` + "\n"}},
		{args: []string{"replay", "--timeout", "5"}, want: []string{`--timeout "5": want a duration with a unit`}},
		{args: []string{"replay", "--request-count", "1.5"}, want: []string{`--request-count "1.5": want a whole number`}},
		{args: []string{"replay", "--streaming=maybe"}, want: []string{`--streaming "maybe": want true or false`}},
		{args: []string{"replay", "--context-mode", "x"}, want: []string{"reprise: --context-mode \"x\": want auto, history or self-contained\n"}},
		{args: []string{"replay", "-m", "m"}, env: map[string]string{"REPRISE_TIMEOUT": "5"},
			want: []string{`environment variable "REPRISE_TIMEOUT"`, "hint: fix or unset the environment variable"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, _, errOut := runCLI(t, "", tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}
