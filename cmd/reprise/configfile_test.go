package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/config"
	"github.com/reprise-bench/reprise/internal/sweep"
)

func writeCfg(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func measured(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, r := range readRecords(t, dir) {
		if r["phase"] == "profile" {
			n++
		}
	}
	return n
}

// TestConfigFileProfile: an AIPerf config file runs as its flags would,
// and flags on the command line override the file's, repeatable ones
// (--url) included.
func TestConfigFileProfile(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	cfg := writeCfg(t, dir, "profile.yaml", `endpoint:
  model: reprise-mock
  url: http://127.0.0.1:1   # overridden below
  streaming: true
input:
  isl: 16
  osl: 4
loadgen:
  concurrency: 2
  request_count: 5
output:
  artifact_dir: `+filepath.Join(dir, "a")+`
reprise:
  format: jsonl
  quiet: true
`)
	code, _, stderr := runCLI(t, "", "profile", "-f", cfg, "--url", srv.URL())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := measured(t, filepath.Join(dir, "a")); n != 5 {
		t.Errorf("%d requests, want the file's 5", n)
	}
	code, _, stderr = runCLI(t, "", "profile", "--config="+cfg, "--url", srv.URL(), "--request-count", "3", "--artifact-dir", filepath.Join(dir, "b"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := measured(t, filepath.Join(dir, "b")); n != 3 {
		t.Errorf("%d requests, want the command line's 3", n)
	}
}

// TestConfigFileReplay: replay's file has replay's flag names and trace
// (its TRACE).
func TestConfigFileReplay(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	tr := writeCfg(t, dir, "t.jsonl", `{"timestamp": 0, "input_length": 40, "output_length": 8, "hash_ids": [1, 2, 3]}
{"timestamp": 10, "input_length": 40, "output_length": 8, "hash_ids": [1, 2, 4]}
`)
	cfg := writeCfg(t, dir, "replay.yaml", "trace: "+tr+"\nmodel: reprise-mock\nurl: "+srv.URL()+
		"\nblock_size: 16\nout: "+filepath.Join(dir, "r")+"\nformat: jsonl\nquiet: true\n")
	code, _, stderr := runCLI(t, "", "replay", "-f", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(readRecords(t, filepath.Join(dir, "r"))); n != 2 {
		t.Errorf("%d records, want 2", n)
	}
}

func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, cmd, file, want string }{
		{"typo", "profile", "endpoint:\n  model: m\nloadgen:\n  concurency: 8\n",
			"c.yaml:4: loadgen.concurency: unknown key; did you mean concurrency?"},
		{"refused", "profile", "endpoint:\n  model: m\nservice:\n  api-port: 9000\n",
			"c.yaml:4: service.api-port: aiperf's --api-port is not supported: reprise serves no API"},
		{"replay typo", "replay", "modle: m\n", "c.yaml:1: modle: unknown key; did you mean model?"},
		{"sweep typo", "sweep", "concurency: 1,2\n", "c.yaml:1: concurency: unknown key; did you mean concurrency?"},
		{"switch", "profile", "endpoint:\n  model: m\n  streaming: maybe\n", "c.yaml:3: endpoint.streaming: --streaming is a switch: want true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeCfg(t, dir, "c.yaml", tc.file)
			code, _, stderr := runCLI(t, "", tc.cmd, "-f", p)
			if code != 2 || !strings.Contains(stderr, "reprise: "+filepath.Join(dir, tc.want)) {
				t.Fatalf("exit %d, want 2 with %q:\n%s", code, tc.want, stderr)
			}
		})
	}
	code, _, stderr := runCLI(t, "", "profile", "-f", filepath.Join(dir, "missing.yaml"))
	if code != 2 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d: %s", code, stderr)
	}
}

// TestExpandConfigArgs: the file's flags come before the command line's,
// a flag of the command line drops the file's values of it (switches and
// their inverses included), later files override earlier ones.
func TestExpandConfigArgs(t *testing.T) {
	dir := t.TempDir()
	a := writeCfg(t, dir, "a.yaml", "endpoint:\n  model: [x, y]\n  streaming: true\nloadgen:\n  concurrency: 4\nmulti_run:\n  set_consistent_seed: false\n")
	b := writeCfg(t, dir, "b.yaml", "loadgen:\n  concurrency: 8\n")
	root := newRoot(&app{})
	got, err := expandConfigArgs(root, []string{"reprise", "--log-level", "debug", "profile", "-f", a, "--config", b, "--model", "z", "--isl", "5"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reprise", "--log-level", "debug", "profile", "--streaming", "--no-set-consistent-seed", "--concurrency=8", "--model", "z", "--isl", "5"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	// Other commands, and command lines without -f, are left alone.
	for _, args := range [][]string{{"reprise", "adapters", "test", "-f", "x"}, {"reprise", "profile", "-m", "m"}} {
		got, err := expandConfigArgs(root, args)
		if err != nil || !slices.Equal(got, args) {
			t.Errorf("%v became %v, %v", args, got, err)
		}
	}
}

func TestConfigCommands(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "profile.yaml")
	if code, _, stderr := runCLI(t, "", "config", "init", p); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "config", "init", p); code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("init over a file: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "config", "validate", p)
	if code != 0 || !strings.Contains(stdout, "valid") || stderr != "" {
		t.Fatalf("validate the starting file: exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "config", "expand", p)
	want := "reprise profile --model=Qwen/Qwen3-0.6B --url=http://localhost:8000 --endpoint-type=chat --streaming --isl=550 --osl=128 --concurrency=8 --request-count=100 --tokenizer=builtin --out=artifacts/qwen3-chat\n"
	if code != 0 || stdout != want {
		t.Errorf("expand: exit %d: %q, want %q; %s", code, stdout, want, stderr)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"bad value", "loadgen:\n  concurrency: many\n", `--concurrency "many": "many" is not a number`},
		{"option check", "loadgen:\n  benchmark_grace_period: 5\n", "--benchmark-grace-period needs --benchmark-duration"},
		{"unknown key", "output:\n  artifact_dri: x\n", "output.artifact_dri: unknown key; did you mean artifact_dir?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", "config", "validate", writeCfg(t, dir, "bad.yaml", tc.file))
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tc.want, stderr)
			}
		})
	}
	code, _, stderr = runCLI(t, "", "config", "validate", writeCfg(t, dir, "warn.yaml", "endpoint:\n  model: m\n  url:\n"))
	if code != 0 || !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, "warn.yaml:3: endpoint.url: no value; ignored") {
		t.Errorf("warning: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "config", "expand", "--for", "replay", writeCfg(t, dir, "r.yaml", "trace: t.jsonl\nspeedup: 2\n"))
	if code != 0 || stdout != "reprise replay --speedup=2 t.jsonl\n" {
		t.Errorf("expand --for replay: exit %d: %q %s", code, stdout, stderr)
	}
}

// referenceFlags are the flag names in the AIPerf reference
// (testdata/aiperf-cli.reference, a copy: see its .source file): every
// `--name` and `-x/` in code spans, with {a,b} groups spelled out.
func referenceFlags(t *testing.T) []string {
	b, err := os.ReadFile("testdata/aiperf-cli.reference")
	if err != nil {
		t.Fatal(err)
	}
	spans := regexp.MustCompile("`[^`]*`").FindAllString(string(b), -1)
	long := regexp.MustCompile(`--((?:[a-z0-9-]|\{[a-z,]+\})+)([*…]?)`)
	short := regexp.MustCompile(`(?:^|[` + "`" + `/ ])-([a-zA-Z])(?:/|` + "`" + `|$)`)
	seen := map[string]bool{}
	for _, s := range spans {
		for _, m := range long.FindAllStringSubmatch(s, -1) {
			if m[2] != "" || strings.HasSuffix(m[1], "-") {
				continue // a family (--search-*, --no-…): the prefix tables answer those
			}
			for _, name := range braces(m[1]) {
				seen[name] = true
			}
		}
		for _, m := range short.FindAllStringSubmatch(s, -1) {
			seen[m[1]] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// braces spells out every {a,b} group of s.
func braces(s string) []string {
	i := strings.Index(s, "{")
	if i < 0 {
		return []string{s}
	}
	j := strings.Index(s, "}")
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, braces(s[:i]+alt+s[j+1:])...)
	}
	return out
}

// TestAIPerfReferenceFlags: every flag of AIPerf's reference is taken by
// profile or refused with a sentence, and is a key of the config file's
// sections (or of its sweep section).
func TestAIPerfReferenceFlags(t *testing.T) {
	names := referenceFlags(t)
	if len(names) < 240 {
		t.Fatalf("read %d flag names from the reference; want its ~250 (the families, --search-* and so on, are prefixes)", len(names))
	}
	root := newRoot(&app{})
	taken := map[string]bool{}
	for _, f := range append(root.Flags, root.Command("profile").Flags...) {
		for _, n := range f.Names() {
			taken[n] = true
		}
	}
	keys := map[string]bool{}
	for _, f := range config.AIPerfFlags() {
		keys[f] = true
	}
	s := config.AIPerf(nil, nil)
	for _, name := range names {
		if !taken[name] && aiperfWhy(name) == "" {
			t.Errorf("aiperf's %s is neither a profile flag nor refused with a sentence", dashed(name))
		}
		if len(name) == 1 || name == "config" || strings.HasPrefix(name, "no-") {
			continue // short names, the file itself, inverses (key: false)
		}
		file := sectionOf(name) + ":\n  " + name + ": 1\n"
		if _, _, err := config.Parse("f.yaml", []byte(file), s); err != nil && !sweepOrSearch(name) {
			t.Errorf("aiperf's %s is no key of the config file: %v", dashed(name), err)
		}
	}
}

// sectionOf returns the section a flag's key is in, by trying each.
func sectionOf(name string) string {
	s := config.AIPerf(nil, nil)
	for _, sec := range []string{"endpoint", "input", "loadgen", "output", "tokenizer", "telemetry", "multi_run", "service", "accuracy"} {
		if _, _, err := config.Parse("f.yaml", []byte(sec+":\n  "+name+": 1\n"), s); err == nil {
			return sec
		}
	}
	return "input"
}

// sweepOrSearch are the flags a file gives in its sweep section (or not
// at all: searches, recipes and scenarios are other issues').
func sweepOrSearch(name string) bool {
	for _, p := range []string{"search-", "optuna-", "bo-", "degradation-", "isl-m", "isl-steps", "osl-m", "osl-steps", "concurrency-m",
		"concurrency-steps", "isl-osl-pairs", "ttft-sla", "itl-sla", "e2e-sla", "tpot-sla", "error-rate-sla", "slo-attainment"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return slices.Contains([]string{"sweep-type", "variant", "sweep-variant", "scenario", "unsafe-override", "backend", "grpc-method",
		"checkpoint-dir", "enable-checkpointing", "generate-plots", "max-threads",
		"output-tokens-mean-deterministic", "session-concurrency", "sweep-list", "sweep-range"}, name)
}

// TestConfigExpandSweep checks that a YAML sweep section expands to the
// same runs as the flags it stands for: reprise config expand prints the
// profile command line, then each point of sweep.ExpandProfile over those
// flags, for grid and zip lists and a seeded Sobol design (profile reads
// its lists in a fixed order, --isl before --concurrency, whatever the
// order they are given in), variants, and a repeated sweep's trials.
func TestConfigExpandSweep(t *testing.T) {
	dir := t.TempDir()
	head := "endpoint:\n  model_names: [m]\n  url: http://localhost:1\nloadgen:\n  request_count: 10\ninput:\n  osl: 8\n"
	for _, tc := range []struct {
		name, sweep string
		ps          sweep.ProfileSweep
		points      int
	}{
		{"grid", "sweep:\n  concurrency: [10, 50]\n  isl: [128, 512]\n", sweep.ProfileSweep{Lists: []sweep.Axis{
			mustAxis(t, "isl", "128,512"), mustAxis(t, "concurrency", "10,50")}}, 4},
		{"zip", "sweep:\n  type: zip\n  concurrency: [10, 50]\n  isl: [128, 512]\n", sweep.ProfileSweep{Type: sweep.SweepZip, Lists: []sweep.Axis{
			mustAxis(t, "isl", "128,512"), mustAxis(t, "concurrency", "10,50")}}, 2},
		{"sobol", "reprise:\n  random_seed: 7\nsweep:\n  sampling: sobol\n  samples: 5\n  dimensions:\n    concurrency: [1, 64]\n",
			sweep.ProfileSweep{Sampling: "sobol", Samples: 5, Dimensions: []string{"concurrency:1,64"}, Seed: 7}, 5},
		// --num-profile-runs 2 in the default repeated mode: the whole
		// sweep twice, profile_runs/trial_000K/…, as profile runs it.
		{"repeated", "multi_run:\n  num_profile_runs: 2\nsweep:\n  concurrency: [10, 50]\n", sweep.ProfileSweep{Trials: 2, Lists: []sweep.Axis{
			mustAxis(t, "concurrency", "10,50")}}, 4},
		{"independent", "multi_run:\n  num_profile_runs: 2\n  parameter_sweep_mode: independent\nsweep:\n  concurrency: [10, 50]\n",
			sweep.ProfileSweep{Lists: []sweep.Axis{mustAxis(t, "concurrency", "10,50")}}, 2},
		// GenAI-Perf's form: the setting's list, as --concurrency 1,2,4,8.
		{"genai-perf range", "sweep:\n  type: concurrency\n  sweep_range: \"1:8\"\n", sweep.ProfileSweep{Lists: []sweep.Axis{
			mustAxis(t, "concurrency", "1,2,4,8")}}, 4},
		{"genai-perf list", "sweep:\n  type: request_rate\n  sweep_list: [2, 4]\n", sweep.ProfileSweep{Lists: []sweep.Axis{
			mustAxis(t, sweep.RequestRate, "2,4")}}, 2},
		{"variants", "sweep:\n  variants:\n    - name: small\n      concurrency: 8\n      isl: 512\n    - osl: 64\n      isl_stddev: 10\n",
			sweep.ProfileSweep{Variants: []string{"small: concurrency=8, isl=512", "osl=64, isl-stddev=10"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "config", "expand", writeCfg(t, dir, tc.name+".yaml", head+tc.sweep))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			ex, err := sweep.ExpandProfile(tc.ps)
			if err != nil {
				t.Fatal(err)
			}
			want := expansionPoints(ex)
			if len(want) != tc.points || len(lines) != 1+len(want) {
				t.Fatalf("%d points from the flags (want %d); config expand printed:\n%s", len(want), tc.points, stdout)
			}
			if diff := cmp.Diff(want, lines[1:]); diff != "" {
				t.Errorf("config expand's runs differ from the flags' (-flags +file):\n%s", diff)
			}
		})
	}
}

func mustAxis(t *testing.T, name, spec string) sweep.Axis {
	t.Helper()
	ax, err := sweep.ParseAxis(name, spec)
	if err != nil {
		t.Fatal(err)
	}
	return ax
}

// aiperfSearchFlags are AIPerf's search flags that its reference names
// only as families (--search-*, --optuna-*; the CLI options page of
// AIPerf's documentation, in the ai-dynamo/aiperf repository).
var aiperfSearchFlags = []string{"search-planner", "optuna-sampler", "optuna-acquisition", "optuna-terminator",
	"search-percentile-pooling", "bo-constraint-mode", "search-style", "tpot-sla-ms"}

// TestAIPerfSearchFlags: each of AIPerf's search flags is a profile flag
// and a key of the sweep section, and a file's search block expands to
// the command line of its flags; an Optuna choice that names another
// method is refused with its sentence (the rest: TestPlannerValidate).
func TestAIPerfSearchFlags(t *testing.T) {
	taken := map[string]bool{}
	for _, f := range newRoot(&app{}).Command("profile").Flags {
		for _, n := range f.Names() {
			taken[n] = true
		}
	}
	s := configSchema(newRoot(&app{}).Command("profile"))
	for _, name := range append(aiperfSearchFlags, "search-sla-tier") {
		if !taken[name] && aiperfWhy(name) == "" {
			t.Errorf("aiperf's %s is neither a profile flag nor refused with a sentence", dashed(name))
		}
		if !taken[name] {
			continue
		}
		key := strings.ReplaceAll(name, "-", "_")
		if _, _, err := config.Parse("f.yaml", []byte("sweep:\n  "+key+": x\n"), s); err != nil {
			t.Errorf("aiperf's %s is no key of the sweep section: %v", dashed(name), err)
		}
	}
	dir := t.TempDir()
	file := "endpoint:\n  model_names: [m]\n  url: http://localhost:1\n  streaming: true\nsweep:\n" +
		"  search_space: [\"concurrency:1,32\"]\n  search_metric: output_token_throughput\n  search_sla: [\"time_to_first_token:p99:<=:500\"]\n" +
		"  planner: optuna\n  optuna_sampler: gp\n  optuna_acquisition: qlognei\n  optuna_terminator: regret\n  n_initial_points: 3\n"
	code, stdout, stderr := runCLI(t, "", "config", "expand", writeCfg(t, dir, "search.yaml", file))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--search-space=concurrency:1,32", "--search-planner=optuna", "--optuna-sampler=gp",
		"--optuna-acquisition=qlognei", "--optuna-terminator=regret", "--search-initial-points=3"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config expand printed %q, without %q", stdout, want)
		}
	}
	code, _, stderr = runCLI(t, "", "profile", "-m", "m", "--url", "http://localhost:1", "--streaming", "--artifact-dir", filepath.Join(dir, "a"),
		"--search-space", "concurrency:1,8", "--optuna-sampler", "tpe")
	if code != 2 || !strings.Contains(stderr, "not a tree-structured Parzen estimator") {
		t.Errorf("--optuna-sampler tpe: exit %d, %s", code, stderr)
	}
}

// TestRefusalsHaveNoMeaningHere lists the refusal table, each row with why
// it has no meaning for a one-process Go client (issue 33's rule: what
// AIPerf does and reprise can do is taken, not refused). A new refusal
// fails here until it is given its reason; a row taken since fails as stale.
func TestRefusalsHaveNoMeaningHere(t *testing.T) {
	why := map[string]string{
		"workers-max": "process layout", "max-workers": "process layout", "max-threads": "process layout",
		"record-processor-service-count": "process layout", "record-processors": "process layout",
		"api-port": "process layout", "api-host": "process layout",
		"zmq-host": "process layout", "zmq-ipc-path": "process layout", "zmq-dual-bind": "process layout",
		"backend":                     "GenAI-Perf's Triton backends",
		"grpc-method":                 "GenAI-Perf's Triton backends",
		"tokenizer-trust-remote-code": "Python code from a repository",
		"checkpoint-dir":              "a sweep's checkpoint is its artifact directory",
		"scenario":                    "a leaderboard's submission lock",
		"unsafe-override":             "a leaderboard's submission lock",
		"wandb-":                      "W&B has no documented logging API outside its Python SDK",
	}
	rows := map[string]bool{}
	for name := range aiperfUnsupported {
		rows[name] = true
	}
	for _, f := range aiperfFamilies {
		rows[f.prefix] = true
	}
	for name := range rows {
		if why[name] == "" {
			t.Errorf("the refusal table refuses %s: take it, or say here why it has no meaning for reprise", dashed(name))
		}
	}
	for name := range why {
		if !rows[name] {
			t.Errorf("%s is taken now: drop it from this list", dashed(name))
		}
	}
}
