package flagmap

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/replay"
)

// vals is a Values over a map: a name present is set.
type vals map[string]any

func (m vals) String(n string) string { s, _ := m[n].(string); return s }
func (m vals) Int(n string) int       { i, _ := m[n].(int); return i }
func (m vals) Int64(n string) int64   { i, _ := m[n].(int64); return i }
func (m vals) Uint64(n string) uint64 { u, _ := m[n].(uint64); return u }
func (m vals) Float(n string) float64 { f, _ := m[n].(float64); return f }
func (m vals) Bool(n string) bool     { b, _ := m[n].(bool); return b }
func (m vals) Duration(n string) time.Duration {
	d, _ := m[n].(time.Duration)
	return d
}
func (m vals) StringSlice(n string) []string { s, _ := m[n].([]string); return s }
func (m vals) IsSet(n string) bool           { _, ok := m[n]; return ok }

var _ Values = vals{}

// aiperfFlagDefaults are the values the profile command's flags default to
// where the mapping reads them unconditionally. The model is the base
// options' (replay's --model): none here, so the artifact dir says "model".
var aiperfFlagDefaults = vals{"endpoint-type": "chat", "export-level": "summary", "export": "aiperf",
	"session-delay-ratio": 1.0, "metrics-interval": time.Second, "mode": "auto"}

// TestProfile maps AIPerf's option names onto reprise.Options: each case
// gives options over aiperfFlagDefaults and checks the fields they set.
func TestProfile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given vals
		check func(o reprise.Options, quiet bool) bool
		err   string // a substring of the error; "" = none
	}{
		{"defaults: 10 requests, one in flight, AIPerf's artifact dir", vals{},
			func(o reprise.Options, _ bool) bool {
				return o.Replay.RequestCount == 10 && o.Replay.Concurrency == 1 && o.Output.Overwrite &&
					o.Output.Dir == "artifacts/model-openai-chat-concurrency1" && o.Replay.Grace == 30*time.Second && o.TokenizerFromModel
			}, ""},
		{"endpoint type renamed", vals{"endpoint-type": "nim_embeddings"},
			func(o reprise.Options, _ bool) bool { return o.Endpoint == "nim-embeddings" }, ""},
		{"timeout in float seconds", vals{"request-timeout-seconds": 2.5},
			func(o reprise.Options, _ bool) bool { return o.Timeout == 2500*time.Millisecond }, ""},
		{"fixed schedule", vals{"fixed-schedule": true, "fixed-schedule-start-offset": 1500},
			func(o reprise.Options, _ bool) bool {
				return o.Replay.Mode == replay.ModeFixed && o.Replay.StartOffset == 1500*time.Millisecond && o.Replay.RequestCount == 0
			}, ""},
		{"a rate names the artifact dir", vals{"request-rate": "4.5"},
			func(o reprise.Options, _ bool) bool {
				return o.Replay.RequestRate == 4.5 && o.Output.Dir == "artifacts/model-openai-chat-request_rate4.5"
			}, ""},
		{"ui none is quiet", vals{"ui-type": "none"},
			func(o reprise.Options, quiet bool) bool { return quiet && o.UI == reprise.UILine }, ""},
		// 2000 ms × 0.5 = 1 s.
		{"turn delay in ms times the ratio", vals{"session-turn-delay-mean": 2000.0, "session-delay-ratio": 0.5},
			func(o reprise.Options, _ bool) bool { return o.Synthetic.TurnDelay == time.Second }, ""},
		{"cancellation rate in percent", vals{"request-cancellation-rate": 20.0},
			func(o reprise.Options, _ bool) bool { return o.CancelRate == 0.2 }, ""},
		{"url strategy spelled with underscores", vals{"url-strategy": "least_in_flight"},
			func(o reprise.Options, _ bool) bool { return o.URLPolicy == reprise.URLPolicyLeastInFlight }, ""},
		{"export level raw is events", vals{"export-level": "raw"},
			func(o reprise.Options, _ bool) bool { return o.Output.ExportLevel == "events" }, ""},
		{"infinite grace", vals{"benchmark-duration": 10.0, "benchmark-grace-period": "inf"},
			func(o reprise.Options, _ bool) bool {
				return o.Replay.Duration == 10*time.Second && o.Replay.Grace == 365*24*time.Hour && o.Replay.RequestCount == 0
			}, ""},
		{"export file names the prefix", vals{"profile-export-prefix": "run.json"},
			func(o reprise.Options, _ bool) bool { return o.Output.ExportPrefix == "run" }, ""},
		{"bad ui type", vals{"ui-type": "tui"}, nil, "--ui-type \"tui\""},
		{"grace needs a duration", vals{"benchmark-grace-period": "5"}, nil, "needs --benchmark-duration"},
		{"seconds out of range", vals{"request-timeout-seconds": 1e300}, nil, "out of range"},
		{"both fixed flags", vals{"fixed-schedule": true, "no-fixed-schedule": true}, nil, "exclude each other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := vals{}
			for k, x := range aiperfFlagDefaults {
				v[k] = x
			}
			for k, x := range tc.given {
				v[k] = x
			}
			o, quiet, err := Profile(v, reprise.NewOptions())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o, quiet) {
				t.Errorf("options %+v (quiet %v) fail the check", o, quiet)
			}
		})
	}
}

// TestProfileHooks: a hook runs after AIPerf's options and before the
// defaults, which see what it set; its error is joined with the others.
func TestProfileHooks(t *testing.T) {
	v := vals{}
	for k, x := range aiperfFlagDefaults {
		v[k] = x
	}
	hook := func(_ Values, o *reprise.Options, rc *replay.Config) error {
		rc.Concurrency = 3
		return nil
	}
	o, _, err := Profile(v, reprise.NewOptions(), hook)
	if err != nil || o.Replay.Concurrency != 3 || o.Output.Dir != "artifacts/model-openai-chat-concurrency3" {
		t.Errorf("concurrency %d, dir %q, err %v: want the hook's 3 in both", o.Replay.Concurrency, o.Output.Dir, err)
	}
}

// TestExtraInputs: AIPerf's KEY:VALUE pairs are typed as AIPerf types them
// and merged with --extra-body.
func TestExtraInputs(t *testing.T) {
	got, err := extraInputs(`{"a": 1}`, []string{"ignore_eos:true", "temperature:0.5", "n:2", "stop:none", "name:x:y", `{"b": [1]}`})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": 1.0, "ignore_eos": true, "temperature": 0.5, "n": 2.0, "stop": nil, "name": "x:y", "b": []any{1.0}}
	if len(m) != len(want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	for k, v := range want {
		want1, _ := json.Marshal(v)
		if b1, _ := json.Marshal(m[k]); string(b1) != string(want1) {
			t.Errorf("%s = %s, want %s", k, b1, string(want1))
		}
	}
	if _, err := extraInputs("", []string{"novalue"}); err == nil {
		t.Error("a pair without a colon was accepted")
	}
}
