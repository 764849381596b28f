package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// manifestProvenance is the provenance part of manifest.json.
type manifestProvenance struct {
	Version     string `json:"reprise_version"`
	Trace       string `json:"trace"`
	TraceSHA256 string `json:"trace_sha256"`
	TraceBytes  *int64 `json:"trace_size_bytes"`
	TraceRows   int    `json:"trace_rows"`
	Host        struct {
		Hostname    string `json:"hostname"`
		OS          string `json:"os"`
		Arch        string `json:"arch"`
		CPUModel    string `json:"cpu_model"`
		CPUs        int    `json:"cpus"`
		Kernel      string `json:"kernel"`
		ClockSource string `json:"clock_source"`
	} `json:"host"`
	Preflight *struct {
		Primitive    string `json:"primitive"`
		PeriodNS     int64  `json:"period_ns"`
		Samples      int    `json:"samples"`
		SleepP50NS   int64  `json:"sleep_p50_ns"`
		SleepP99NS   int64  `json:"sleep_p99_ns"`
		SleepMaxNS   int64  `json:"sleep_max_ns"`
		P50NS        int64  `json:"p50_ns"`
		P99NS        int64  `json:"p99_ns"`
		MaxNS        int64  `json:"max_ns"`
		SpinWindowNS int64  `json:"spin_window_ns"`
		TookNS       int64  `json:"took_ns"`
	} `json:"preflight"`
	Adapter struct {
		Source string `json:"source"`
		SHA256 string `json:"sha256"`
	} `json:"adapter"`
}

func readManifest(t *testing.T, dir string) manifestProvenance {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifestProvenance
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestReplayManifestProvenance: the manifest records the trace's sha256,
// size and rows (a file read while streamed, loaded whole, sorted after a
// first pass, gzip-compressed, or standard input), the host, the timer
// preflight, reprise's version, and a Wasm adapter's sha256; each is
// checked against what the test computes itself.
func TestReplayManifestProvenance(t *testing.T) {
	srv := dyingServer(t, 1<<30)
	const rows = 20
	var sorted, reversed bytes.Buffer
	for i := range rows {
		fmt.Fprintf(&sorted, `{"timestamp": %d, "input_length": 8, "output_length": 2, "hash_ids": [%d]}`+"\n", i, i)
		fmt.Fprintf(&reversed, `{"timestamp": %d, "input_length": 8, "output_length": 2, "hash_ids": [%d]}`+"\n", rows-1-i, i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(sorted.Bytes())
	zw.Close()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name  string
		trace []byte
		path  string // "-": stdin
		load  bool
	}{
		{"streamed", sorted.Bytes(), write("t.jsonl", sorted.Bytes()), false},
		{"loaded", sorted.Bytes(), write("t2.jsonl", sorted.Bytes()), true},
		{"unsorted", reversed.Bytes(), write("r.jsonl", reversed.Bytes()), false},
		{"gzip", gz.Bytes(), write("t.jsonl.gz", gz.Bytes()), false},
		{"stdin", sorted.Bytes(), "-", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loadTraces = tt.load
			defer func() { loadTraces = false }()
			out := t.TempDir()
			stdin := ""
			if tt.path == "-" {
				stdin = string(tt.trace)
			}
			code, _, stderr := runCLI(t, stdin, "replay", tt.path, "--url", srv.URL, "--model", "m", "--no-streaming",
				"--speedup", "1000", "--quiet", "--format", "jsonl", "--out", out, "--no-server-metrics")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			m := readManifest(t, out)
			if want := sha256Hex(tt.trace); m.TraceSHA256 != want {
				t.Errorf("trace_sha256 %q, want %q", m.TraceSHA256, want)
			}
			if m.TraceBytes == nil || *m.TraceBytes != int64(len(tt.trace)) {
				t.Errorf("trace_size_bytes %v, want %d", m.TraceBytes, len(tt.trace))
			}
			if m.TraceRows != rows || m.Trace != tt.path {
				t.Errorf("trace %q with %d rows, want %q with %d", m.Trace, m.TraceRows, tt.path, rows)
			}
		})
	}

	t.Run("host, preflight, version, adapter", func(t *testing.T) {
		const wasmPath = "../../wasm/adapters/openai-chat.wasm"
		module, err := os.ReadFile(wasmPath)
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--endpoint", wasmPath, "--no-streaming",
			"--isl", "8", "--osl", "2", "--request-count", "2", "--concurrency", "1", "--quiet", "--format", "jsonl",
			"--out", out, "--no-server-metrics")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		m := readManifest(t, out)
		if m.Version != versionString() {
			t.Errorf("reprise_version %q, want %q", m.Version, versionString())
		}
		if want := sha256Hex(module); m.Adapter.SHA256 != want || m.Adapter.Source != wasmPath {
			t.Errorf("adapter %q sha256 %q, want %q %q", m.Adapter.Source, m.Adapter.SHA256, wasmPath, want)
		}
		if m.TraceSHA256 != "" || m.TraceBytes != nil {
			t.Errorf("a synthetic load has a trace sha256 %q or size %v", m.TraceSHA256, m.TraceBytes)
		}
		h := m.Host
		if want, _ := os.Hostname(); h.Hostname != want {
			t.Errorf("host.hostname %q, want %q", h.Hostname, want)
		}
		if h.OS != runtime.GOOS || h.Arch != runtime.GOARCH || h.CPUs != runtime.NumCPU() {
			t.Errorf("host os %q arch %q cpus %d, want %q %q %d", h.OS, h.Arch, h.CPUs, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
		}
		checkHostLinux(t, h.CPUModel, h.Kernel, h.ClockSource)
		p := m.Preflight
		if p == nil {
			t.Fatal("no preflight in the manifest")
		}
		wantPrimitive := "time.Sleep"
		if runtime.GOOS == "linux" {
			wantPrimitive = "clock_nanosleep+spin"
		}
		// At least 100 deadlines, half measured with each method.
		if p.Primitive != wantPrimitive || p.PeriodNS <= 0 || p.Samples < 50 || p.TookNS < int64(2*p.Samples)*p.PeriodNS-p.PeriodNS {
			t.Errorf("preflight %+v: want %s, ≥ 50 samples, took ≥ 2·samples periods", *p, wantPrimitive)
		}
		if p.P50NS > p.P99NS || p.P99NS > p.MaxNS || p.SleepP50NS > p.SleepP99NS || p.SleepP99NS > p.SleepMaxNS {
			t.Errorf("preflight quantiles out of order: %+v", *p)
		}
	})
}

// hostFile reads a one-line file of /proc or /sys, "" when absent.
func hostFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
