package reprise

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace/synth"
)

// optionsFieldExists reports whether path ("Output.Dir", "Replay.Speedup")
// names a field of Options.
func optionsFieldExists(path string) bool {
	t := reflect.TypeFor[Options]()
	for name := range strings.SplitSeq(path, ".") {
		if t.Kind() == reflect.Pointer {
			t = t.Elem() // Trace.Synthesis
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := t.FieldByName(name)
		if !ok {
			return false
		}
		t = f.Type
	}
	return true
}

// brokenOptions are Options with one validation problem each, named by
// the field the problem must name (and a word more where one field has
// several).
func brokenOptions(t *testing.T) map[string]func(*Options) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badRow := write("bad.jsonl", `{"timestamp":0,"input_length":"x","output_length":1}`+"\n")
	noRows := write("empty-rows.jsonl", `{"timestamp":0,"input_length":0,"output_length":1}`+"\n")
	history := write("history.jsonl", `{"session_id":"a","timestamp":0,"output_length":1,"messages":[{"role":"user","content":"hi"}]}`+"\n"+
		`{"session_id":"a","timestamp":1,"output_length":1,"messages":[{"role":"user","content":"hi"}]}`+"\n")
	return map[string]func(*Options){
		"Model":                     func(o *Options) { o.Model = "" },
		"Nice":                      func(o *Options) { n := 99; o.Nice = &n },
		"URL":                       func(o *Options) { o.URL = "ftp://x" },
		"URL query":                 func(o *Options) { o.URL = "http://x/?a=1" },
		"URL empty":                 func(o *Options) { o.URL = "" },
		"URL no host":               func(o *Options) { o.URL = "http://" },
		"Tokenizer":                 func(o *Options) { o.Tokenizer = "no-such-tokenizer" },
		"Trace.PublicSubset":        func(o *Options) { o.Trace.PublicSubset = "main" },
		"Trace.PublicFilters":       func(o *Options) { o.Trace.PublicDataset, o.Trace.PublicFilters = "aimo", []string{"level"} },
		"Adapter.MemoryMiB":         func(o *Options) { o.Adapter.MemoryMiB = 1 },
		"Adapter.Sandbox":           func(o *Options) { o.Adapter.Sandbox = "sometimes" },
		"Endpoint":                  func(o *Options) { o.Endpoint = "no-such-adapter" },
		"ExtraBody":                 func(o *Options) { o.ExtraBody = "[1]" },
		"ExtraBody syntax":          func(o *Options) { o.ExtraBody = "{" },
		"Headers":                   func(o *Options) { o.Headers = []string{"no colon"} },
		"Timeout":                   func(o *Options) { o.Timeout = -time.Second },
		"MaxConnections":            func(o *Options) { o.MaxConnections = -1 },
		"Preflight.Timeout":         func(o *Options) { o.Preflight.Timeout = -time.Second },
		"AbortAfterConnectFailures": func(o *Options) { o.AbortAfterConnectFailures = -1 },
		"FailedRequestThreshold":    func(o *Options) { t := 1.5; o.FailedRequestThreshold = &t },
		"ProgressInterval":          func(o *Options) { o.ProgressInterval = -time.Second },
		"MaxResponseEvents":         func(o *Options) { o.MaxResponseEvents = -1 },
		"MaxEventBytes":             func(o *Options) { o.MaxEventBytes = -1 },
		"MaxResponseBytes":          func(o *Options) { o.MaxResponseBytes = -1 },
		"Goodput":                   func(o *Options) { o.Goodput = "nonsense:1" },
		"Goodput streaming":         func(o *Options) { o.Goodput, o.Streaming = "ttft:100", false },
		"MaxErrorRate":              func(o *Options) { o.MaxErrorRate = 2 },
		"MinGoodFraction":           func(o *Options) { o.MinGoodFraction = -1 },
		"Output.Format":             func(o *Options) { o.Output.Format = "csv" },
		"Output.PartInterval":       func(o *Options) { o.Output.PartInterval = -1 },
		"Output.PartRows":           func(o *Options) { o.Output.PartRows = 0 },
		"Output.Export":             func(o *Options) { o.Output.Export = "csv" },
		"Output.ExportLevel":        func(o *Options) { o.Output.ExportLevel = "all" },
		"Trace.Format":              func(o *Options) { o.Trace.Format = "nope" },
		"Trace.BlockSize":           func(o *Options) { o.Trace.BlockSize = -1 },
		"Synthetic":                 func(o *Options) { o.Synthetic = SyntheticLoad{} },
		"Synthetic stddev":          func(o *Options) { o.Synthetic.ISLStdDev = -1 },
		"Synthetic with trace":      func(o *Options) { o.Trace.Path = badRow },
		"Synthetic.OSL":             func(o *Options) { o.Trace.Path, o.Synthetic = badRow, SyntheticLoad{OSL: 1.5} },
		"Trace.MaxInputTokens":      func(o *Options) { o.Trace.MaxInputTokens = 0 },
		"Trace.SpoolMiB":            func(o *Options) { o.Trace.SpoolMiB = 0 },
		"Prompts.HashMismatch":      func(o *Options) { o.Prompts.HashMismatch = "maybe" },
		"Prompts.Format":            func(o *Options) { o.Prompts.Format = "bytes" },
		"Prompts.Corpus":            func(o *Options) { o.Prompts.Corpus = "poems" },
		"Prompts.CacheBust":         func(o *Options) { o.Prompts.CacheBust = "always" },
		"Trace.Synthesis.OutputLenMultiplier": func(o *Options) {
			s := synth.NewDeriveConfig()
			s.OutputLenMultiplier = 0
			o.Trace.Path, o.Trace.Synthesis = badRow, &s
		},
		"Replay.RateSeries":     func(o *Options) { o.Replay.RateSeries = []replay.RatePoint{{At: 0, QPS: 5}} },
		"Prompts.ISLCorrection": func(o *Options) { o.Prompts.ISLCorrection = -1 },
		"Replay.Speedup":        func(o *Options) { o.Replay.Speedup = -1 },
		// NaN passes every comparison a range check makes; infinities
		// pass the one-sided ones.
		"Synthetic.OSL NaN":       func(o *Options) { o.Synthetic.OSL = math.NaN() },
		"Synthetic.ISLStdDev Inf": func(o *Options) { o.Synthetic.ISLStdDev = math.Inf(1) },
		"Replay.Speedup NaN":      func(o *Options) { o.Replay.Speedup = math.NaN() },
		"CancelRate NaN":          func(o *Options) { o.CancelRate = math.NaN() },
		"MaxErrorRate NaN":        func(o *Options) { o.MaxErrorRate = math.NaN() },
		"MinGoodFraction NaN":     func(o *Options) { o.MinGoodFraction = math.NaN() },
		// Every synthetic length is under the input cap before a prompt is
		// built (--isl 99999999999 ran out of memory).
		"Synthetic.ISL cap":          func(o *Options) { o.Synthetic.ISL = 99999999999 },
		"Synthetic.SharedPrefix cap": func(o *Options) { o.Synthetic.SharedPrefix = 99999999999 },
		"Synthetic.SharedPrefix sum": func(o *Options) {
			o.Synthetic.SharedPrefix, o.Synthetic.UserContext, o.Trace.MaxInputTokens = 64, 64, 100
		},
		"Synthetic.OSL huge": func(o *Options) { o.Synthetic.OSL = 99999999999 },
		"Replay.Late":        func(o *Options) { o.Replay.Late = "never" },
		"Trace.Path":         func(o *Options) { o.Trace.Path, o.Synthetic = badRow, SyntheticLoad{} },
		"Trace.Path missing": func(o *Options) { o.Trace.Path, o.Synthetic = filepath.Join(dir, "none.jsonl"), SyntheticLoad{} },
		"Trace.Path no rows": func(o *Options) { o.Trace.Path, o.Synthetic, o.Trace.SkipInvalid = noRows, SyntheticLoad{}, true },
		"Prompts.ContextMode": func(o *Options) {
			o.Trace.Path, o.Synthetic, o.Prompts.ContextMode = history, SyntheticLoad{}, "history"
		},
		"Prompts.ContextMode value": func(o *Options) { o.Prompts.ContextMode = "sometimes" },
		"Trace.SpoolMiB full": func(o *Options) {
			o.Trace.Reader, o.Synthetic, o.Trace.SpoolMiB = strings.NewReader(strings.Repeat(" ", 2<<20)), SyntheticLoad{}, 1
		},
	}
}

// TestConfigErrorsNameFields: every validation problem of Run is a
// FieldError in a *ConfigError whose Field, and every field its message
// names, is a path of Options, and whose message spells no flag.
func TestConfigErrorsNameFields(t *testing.T) {
	for name, breakIt := range brokenOptions(t) {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			o.Model, o.Synthetic = "m", SyntheticLoad{ISL: 8, OSL: 8}
			o.Output.Dir = filepath.Join(t.TempDir(), "run")
			o.Replay.Concurrency, o.Replay.RequestCount = 1, 1
			breakIt(&o)
			_, err := Run(context.Background(), o)
			ce, ok := errors.AsType[*ConfigError](err)
			if !ok {
				t.Fatalf("Run: %v (%T), want a *ConfigError", err, err)
			}
			if _, statErr := os.Stat(o.Output.Dir); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("the run directory was created: %v", statErr)
			}
			want, _, _ := strings.Cut(name, " ")
			found := false
			for _, fe := range ce.Errors {
				found = found || fe.Field == want
				if !optionsFieldExists(fe.Field) {
					t.Errorf("Field %q of %q is not a field of Options", fe.Field, fe)
				}
				fe.Format(func(path string) string {
					p, _, _ := strings.Cut(path, "=")
					if !optionsFieldExists(p) {
						t.Errorf("%q names %q, not a field of Options", fe, path)
					}
					return path
				})
				if msg := fe.Error(); strings.Contains(msg, "--") {
					t.Errorf("%q spells a flag", msg)
				}
			}
			if !found {
				t.Errorf("no problem names %s: %v", want, err)
			}
		})
	}
}
