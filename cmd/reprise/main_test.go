package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

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
