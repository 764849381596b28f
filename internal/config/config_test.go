package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// own are a few of reprise's profile flags, for the reprise section.
var own = []string{"max-error-rate", "senders", "header", "H", "seed"}

func flagsOf(args []Arg) []string {
	var out []string
	for _, a := range args {
		out = append(out, a.Flag+"="+a.Value)
	}
	return out
}

func TestParseAIPerf(t *testing.T) {
	const file = `endpoint:
  model_names: [Qwen/Qwen3-0.6B, other]
  url: http://localhost:8000
  endpoint-type: chat
  streaming: true
input:
  synthetic_input_tokens_mean: 512
  osl: 128
  extra_inputs: {temperature: 0, stop: [a, b]}
  goodput: {time_to_first_token: 250, inter_token_latency: 10}
  headers: {X-Team: perf}
  dataset_filter: {language: en}
loadgen:
  concurrency: [10, 50, 100]
  request_count: 100
output:
  artifact_directory: out/a
tokenizer:
  name: builtin
multi_run:
  num_profile_runs: 3
reprise:
  max-error-rate: 0.1
`
	args, warns, err := Parse("config.yaml", []byte(file), AIPerf(own, []string{"header", "H"}))
	if err != nil || len(warns) > 0 {
		t.Fatalf("Parse: %v, warnings %v", err, warns)
	}
	want := []string{
		"model=Qwen/Qwen3-0.6B", "model=other", "url=http://localhost:8000", "endpoint-type=chat", "streaming=true",
		"isl=512", "osl=128", `extra-inputs={"stop":["a","b"],"temperature":0}`,
		"goodput=time_to_first_token:250 inter_token_latency:10", "header=X-Team:perf", "dataset-filter=language=en",
		"concurrency=10,50,100", "request-count=100", "artifact-dir=out/a", "tokenizer=builtin", "num-profile-runs=3",
		"max-error-rate=0.1",
	}
	if d := cmp.Diff(want, flagsOf(args)); d != "" {
		t.Errorf("flags (-want +got):\n%s", d)
	}
	if args[0].Line != 2 || args[0].Key != "endpoint.model_names" {
		t.Errorf("first arg at %d %q, want line 2 endpoint.model_names", args[0].Line, args[0].Key)
	}
}

func TestParseErrors(t *testing.T) {
	s := AIPerf(own, nil)
	for _, tc := range []struct{ name, file, want string }{
		{"typo", "endpoint:\n  model: m\nloadgen:\n  concurency: 8\n", "config.yaml:4: loadgen.concurency: unknown key; did you mean concurrency?"},
		{"underscored typo", "loadgen:\n  request_cout: 8\n", "config.yaml:2: loadgen.request_cout: unknown key; did you mean request_count?"},
		{"wrong section", "endpoint:\n  concurrency: 8\n", "config.yaml:2: endpoint.concurrency: unknown key; concurrency belongs in the loadgen section"},
		{"flag at the top", "concurrency: 8\n", "config.yaml:1: concurrency: unknown key at the top: concurrency (--concurrency) is a key of the loadgen section"},
		{"section typo", "loadegn:\n  concurrency: 8\n", "config.yaml:1: loadegn: unknown key; did you mean loadgen?"},
		{"v2", "schemaVersion: \"2.0\"\n", "config.yaml:1: schemaVersion: AIPerf's v2 config"},
		{"not a mapping", "- a\n", "config.yaml:1: want a mapping"},
		{"bad yaml", "endpoint:\n  model: [a\n", "config.yaml:"},
		{"reprise typo", "reprise:\n  sendres: 4\n", "config.yaml:2: reprise.sendres: unknown key; did you mean senders?"},
		{"sweep type", "sweep:\n  type: cube\n", "config.yaml:2: sweep.type: want grid or zip"},
		{"nested list", "loadgen:\n  concurrency: [[1]]\n", "config.yaml:2: loadgen.concurrency: want a list of plain values"},
		{"two documents", "endpoint: {model: a}\n---\nendpoint: {model: b}\n", "config.yaml:2: a second YAML document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("config.yaml", []byte(tc.file), s)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to start with %q", err, tc.want)
			}
			if _, ok := errors.AsType[*Error](err); !ok {
				t.Errorf("error %T is no *Error", err)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, _, err := Parse("c.yaml", []byte("loadgen:\n  concurency: 1\n  reqest_rate: 2\n"), AIPerf(nil, nil))
	if err == nil || strings.Count(err.Error(), "unknown key") != 2 {
		t.Fatalf("error %v, want both unknown keys", err)
	}
}

func TestParseWarnings(t *testing.T) {
	args, warns, err := Parse("c.yaml", []byte("loadgen:\n  concurrency:\n  request_count: 5\noutput:\n"), AIPerf(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"request-count=5"}, flagsOf(args)); d != "" {
		t.Errorf("flags (-want +got):\n%s", d)
	}
	if len(warns) != 2 || warns[0].Error() != "c.yaml:2: loadgen.concurrency: no value; ignored" {
		t.Errorf("warnings %v", warns)
	}
}

// TestParseSweep is the mapping of the sweep section onto the sweep flags
// of profile (issue 40's names).
func TestParseSweep(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"grid", "sweep:\n  type: grid\n  concurrency: [10, 50, 100]\n  request_rate: [1, 2.5]\n",
			[]string{"sweep-type=grid", "concurrency=10,50,100", "request-rate=1,2.5"}},
		{"zip of lengths", "sweep:\n  type: zip\n  isl: [128, 512]\n  output_tokens_mean: [64, 128]\n  isl_stddev: [0, 10]\n",
			[]string{"sweep-type=zip", "isl=128,512", "osl=64,128", "isl-stddev=0,10"}},
		{"genai-perf", "sweep:\n  type: concurrency\n  sweep_list: [1, 2, 4]\n", []string{"sweep-type=concurrency", "sweep-list=1,2,4"}},
		{"genai-perf range", "sweep:\n  type: request_rate\n  sweep-range: \"1:9:4\"\n", []string{"sweep-type=request_rate", "sweep-range=1:9:4"}},
		{"turns", "sweep:\n  conversation_turn_mean: [1, 4]\n  osl_stddev: [0, 5]\n",
			[]string{"conversation-turn-mean=1,4", "osl-stddev=0,5"}},
		{"variants", "sweep:\n  variants:\n    - {name: small, isl: 128, osl: 64}\n    - {concurrency: 32, request_count: 200}\n",
			[]string{"variant=small: isl=128, osl=64", "variant=concurrency=32, request-count=200"}},
		{"scenarios", "sweep:\n  scenarios:\n    - name: long\n      synthetic_input_tokens_mean: 4096\n",
			[]string{"variant=long: isl=4096"}},
		{"sobol", "sweep:\n  sampling: sobol\n  samples: 16\n  dimensions:\n    request_rate: [1, 10]\n    isl: {low: 128, high: 4096, type: int}\n",
			[]string{"sweep-sampling=sobol", "sweep-samples=16", "sweep-dimension=request-rate:1,10", "sweep-dimension=isl:128,4096:int"}},
		{"latin hypercube", "sweep:\n  sampling: latin_hypercube\n  samples: 8\n  dimensions:\n    concurrency: [1, 64, int]\n",
			[]string{"sweep-sampling=latin_hypercube", "sweep-samples=8", "sweep-dimension=concurrency:1,64:int"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _, err := Parse("s.yaml", []byte(tc.file), AIPerf(nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, flagsOf(args)); d != "" {
				t.Errorf("flags (-want +got):\n%s", d)
			}
		})
	}
	for _, tc := range []struct{ name, file, want string }{
		{"not sweepable", "sweep:\n  model: [a, b]\n", "s.yaml:2: sweep.model: unknown key"},
		{"scalar list", "sweep:\n  concurrency: 8\n", "want a list of the values to sweep"},
		{"samples", "sweep:\n  samples: many\n", "want a whole number"},
		{"sampling", "sweep:\n  sampling: random\n", "want sobol or latin_hypercube"},
		{"dimension type", "sweep:\n  dimensions:\n    isl: [1, 2, str]\n", "want int or float"},
		{"dimension bound", "sweep:\n  dimensions:\n    isl: {low: a, high: 2}\n", "want numbers"},
		{"variant key", "sweep:\n  variants:\n    - {concurency: 3}\n", "sweep.variants[0].concurency: unknown key; did you mean concurrency?"},
		{"variant value", "sweep:\n  variants:\n    - {goodput: \"a=b\"}\n", "holds a comma or '='"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("s.yaml", []byte(tc.file), AIPerf(nil, nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseFlat(t *testing.T) {
	s := Flat([]string{"model", "m", "concurrency", "header", "H", "trace-format"}, []string{"header", "H"})
	args, _, err := Parse("r.yaml", []byte("model: m\nconcurrency: [1, 2]\nheader: [\"A: b, c\", \"D: e\"]\ntrace_format: mooncake\n"), s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"model=m", "concurrency=1,2", "header=A: b, c", "header=D: e", "trace-format=mooncake"}
	if d := cmp.Diff(want, flagsOf(args)); d != "" {
		t.Errorf("flags (-want +got):\n%s", d)
	}
	if _, _, err := Parse("r.yaml", []byte("modle: m\n"), s); err == nil || err.Error() != "r.yaml:1: modle: unknown key; did you mean model?" {
		t.Errorf("error %v", err)
	}
	if _, _, err := Parse("r.yaml", []byte("endpoint:\n  model: m\n"), s); err == nil || !strings.Contains(err.Error(), "want a value, a list or a mapping") && !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("error %v", err)
	}
}

func TestTemplateParses(t *testing.T) {
	args, warns, err := Parse("profile.yaml", []byte(Template), AIPerf(own, nil))
	if err != nil || len(warns) > 0 {
		t.Fatalf("Parse(Template): %v, %v", err, warns)
	}
	if len(args) < 8 {
		t.Errorf("the template sets %d flags: %v", len(args), flagsOf(args))
	}
}

func TestEmptyFile(t *testing.T) {
	for _, f := range []string{"", "# only a comment\n", "~\n"} {
		args, warns, err := Parse("e.yaml", []byte(f), AIPerf(nil, nil))
		if err != nil || len(args) > 0 || len(warns) != 1 {
			t.Errorf("%q: args %v, warnings %v, error %v", f, args, warns, err)
		}
	}
}

// TestSectionsDisjoint: a key names one flag in one section only, so the
// "belongs in" hint is never ambiguous.
func TestSectionsDisjoint(t *testing.T) {
	seen := map[string]string{}
	for sec, entries := range aiperfSections {
		for _, e := range entries {
			for _, k := range strings.Split(e, "|") {
				if other, ok := seen[k]; ok {
					t.Errorf("key %s is in %s and %s", k, other, sec)
				}
				seen[k] = sec
			}
		}
	}
}
