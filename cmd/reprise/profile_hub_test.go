package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/hfhub/hfhubtest"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// convertCommit is the commit of the fake Hub's Parquet conversions.
const convertCommit = "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"

// addConversion serves the testdata/hub Parquet files as the Hub's
// Parquet conversion (refs/convert/parquet, LFS files behind a CDN
// redirect) of the datasets AIPerf's names map to.
func addConversion(t *testing.T, hub *hfhubtest.Server) {
	t.Helper()
	for _, f := range []struct{ repo, name, file string }{
		{"HuggingFaceH4/MATH-500", "default/test/0000.parquet", "math500-0000.parquet"},
		{"HuggingFaceH4/MATH-500", "default/test/0001.parquet", "math500-0001.parquet"},
		{"openai/gsm8k", "main/test/0000.parquet", "gsm8k-main.parquet"},
		{"openai/gsm8k", "socratic/test/0000.parquet", "gsm8k-socratic.parquet"},
		{"vdaita/edit_5k_char", "default/train/0000.parquet", "edit5k.parquet"},
		{"HuggingFaceH4/mt_bench_prompts", "default/train/0000.parquet", "mtbench.parquet"},
		{"likaixin/InstructCoder", "default/train/0000.parquet", "edit5k.parquet"},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "hub", f.file))
		if err != nil {
			t.Fatal(err)
		}
		hub.AddLFSFileAt("datasets/"+f.repo, "refs/convert/parquet", convertCommit, f.name, string(b))
	}
	hub.Denied("datasets/likaixin/InstructCoder", http.StatusUnauthorized, "GatedRepo")
}

// userTexts returns the distinct user messages of inputs.json of a run
// directory.
func userTexts(t *testing.T, dir string) []string {
	t.Helper()
	var inputs struct {
		Data []struct {
			Payloads []struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &inputs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range inputs.Data {
		for _, p := range d.Payloads {
			for _, m := range p.Messages {
				if m.Role == "user" && !slices.Contains(out, m.Content) {
					out = append(out, m.Content)
				}
			}
		}
	}
	return out
}

// TestProfileHubDatasets: --public-dataset of each kind (a prompt column
// with --dataset-filter, a subset with --hf-subset, a prompt template, a
// list column of turns, and the same flags in AIPerf's config file) downloads the Hub's Parquet conversion from
// HF_ENDPOINT into the Hugging Face cache and sends the rows' prompts: the
// mock's oracle log counts exactly their tokens, and inputs.json holds
// their texts. A second run asks the Hub nothing.
func TestProfileHubDatasets(t *testing.T) {
	hub, cache := fakeHubEnv(t)
	addConversion(t, hub)
	srv := startMockServer(t, nil)
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	blazedit := func(code, change string) string {
		return "Given a code file, please apply the change requests and generate the new file.\n\nOriginal file:\n```python\n" + code +
			"\n```\n\nChange request:\n" + change + "\n\nPlease generate the new code file in the \"New file\" section below."
	}
	// AIPerf's config file spells the same flags in its input section.
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("input:\n  public_dataset: spec_al_gsm8k\n  hf_subset: socratic\n  dataset_filter:\n    answer: \"Pages per week? ** 70\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  []string // the prompts
		first []string // the prompts the oracle counts alone (every one, but for turns the first of a session)
		reqs  int
		warm  bool // an earlier case downloaded its shards: no run asks the Hub
	}{
		{"column and filters", []string{"--public-dataset", "spec_al_math500", "--dataset-filter", "subject=Algebra", "--dataset-filter", "level=2"},
			[]string{"Factor x squared minus one.", "Simplify two x plus three x, then say what the coefficient of the result is."}, nil, 2, false},
		{"subset", []string{"--public-dataset", "spec_al_gsm8k", "--hf-subset", "socratic"},
			[]string{"A train travels sixty miles in one hour. How far does it go in three hours?", "Sara reads ten pages a day. How many pages in a week?"}, nil, 2, false},
		{"config file", []string{"-f", config}, []string{"Sara reads ten pages a day. How many pages in a week?"}, nil, 1, true},
		{"template", []string{"--public-dataset", "blazedit_5k"},
			[]string{blazedit("def add(a, b):\n    return a + b", "Rename add to plus."), blazedit("print('hi')", "Print hello instead.")}, nil, 2, false},
		{"turns", []string{"--public-dataset", "spec_al_mtbench", "--dataset-filter", "category=math"},
			[]string{"Name three prime numbers.", "Which is the largest?"}, []string{"Name three prime numbers."}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for run := range 2 {
				srv.ResetLog()
				hub.Requests()
				out := filepath.Join(t.TempDir(), "run")
				code, _, stderr := runCLI(t, "", append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--artifact-dir", out, "--format", "jsonl"}, tc.args...)...)
				if code != 0 {
					t.Fatalf("run %d: exit %d: %s", run, code, stderr)
				}
				reqs := hub.Requests()
				if run == 0 && !tc.warm && !slices.ContainsFunc(reqs, func(r string) bool { return strings.HasPrefix(r, "CDN GET /blobs/") }) {
					t.Errorf("first run: no download through the CDN: %q", reqs)
				}
				if (run == 1 || tc.warm) && len(reqs) != 0 {
					t.Errorf("second run asked the Hub %q", reqs)
				}
				// inputs.json lists the bodies as they were built, which
				// the senders may do out of the rows' order.
				sent := userTexts(t, out)
				slices.Sort(sent)
				if diff := cmp.Diff(slices.Sorted(slices.Values(tc.want)), sent); diff != "" {
					t.Errorf("run %d: prompts sent (-want +got):\n%s", run, diff)
				}
				logs := srv.Log()
				if len(logs) != tc.reqs {
					t.Fatalf("run %d: the mock saw %d requests, want %d", run, len(logs), tc.reqs)
				}
				first := tc.first
				if first == nil {
					first = tc.want
				}
				var got, want []int
				for _, l := range logs {
					got = append(got, l.PromptTokens)
				}
				for _, p := range first {
					want = append(want, tok.Count(p))
				}
				slices.Sort(got)
				for _, n := range want {
					if i := slices.Index(got, n); i >= 0 {
						got = slices.Delete(got, i, i+1)
					} else {
						t.Errorf("run %d: no request of %d prompt tokens (the mock saw %v)", run, n, got)
					}
				}
				if tc.first != nil && (len(got) != 1 || got[0] <= tok.Count(tc.want[1])) {
					t.Errorf("run %d: the second turn's prompt tokens %v: want more than its own %d (the first turn and its reply are its history)", run, got, tok.Count(tc.want[1]))
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(cache, "datasets--HuggingFaceH4--MATH-500", "refs", "refs", "convert", "parquet")); err != nil {
		t.Errorf("the conversion's ref is not in the cache: %v", err)
	}
}

// TestProfileHubDatasetErrors: what the Hub or the dataset lacks exits 2
// naming the flag and what exists, and HF_HUB_OFFLINE with a cold cache
// says to unset it.
func TestProfileHubDatasetErrors(t *testing.T) {
	hub, _ := fakeHubEnv(t)
	addConversion(t, hub)
	run := func(args ...string) (int, string) {
		code, _, stderr := runCLI(t, "", append([]string{"profile", "-m", "reprise-mock", "--url", "http://127.0.0.1:1", "--artifact-dir", t.TempDir()}, args...)...)
		return code, stderr
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown subset", []string{"--public-dataset", "spec_al_gsm8k", "--hf-subset", "nope"},
			[]string{`--public-dataset spec_al_gsm8k: dataset openai/gsm8k has no subset "nope"`, "its subsets in the Hub's Parquet conversion: main, socratic", "give one with --hf-subset"}},
		{"unknown filter key", []string{"--public-dataset", "spec_al_math500", "--dataset-filter", "difficulty=3"},
			[]string{`--dataset-filter of spec_al_math500:`, `dataset filter key "difficulty": no such column in HuggingFaceH4/MATH-500; its columns: problem, subject, level`}},
		{"no row kept", []string{"--public-dataset", "spec_al_math500", "--dataset-filter", "subject=Topology"},
			[]string{"none of its 5 rows is kept (by --dataset-filter subject=Topology"}},
		{"bad filter", []string{"--public-dataset", "spec_al_math500", "--dataset-filter", "level"}, []string{"want KEY=VALUE"}},
		{"gated", []string{"--public-dataset", "instruct_coder"},
			[]string{"gated repository", "HTTP 401", "ask for access on " + hub.URL + "/datasets/likaixin/InstructCoder", "hf auth login"}},
		{"missing repository", []string{"--public-dataset", "aimo"}, []string{"repository not found", "check the name AI-MO/NuminaMath-TIR"}},
		{"subset of sharegpt", []string{"--public-dataset", "sharegpt", "--hf-subset", "x"}, []string{"sharegpt is one JSON file"}},
		{"filter without a dataset", []string{"--dataset-filter", "a=b"}, []string{"--dataset-filter needs --public-dataset"}},
		{"unknown name", []string{"--public-dataset", "mmstar"}, []string{"reprise reads aimo, aimo_aime,", "sharegpt, spec_al_gsm8k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := run(tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	hub.Requests()
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_HUB_CACHE", filepath.Join(t.TempDir(), "cold"))
	code, stderr := run("--public-dataset", "spec_al_math500")
	if code != 2 || !strings.Contains(stderr, "not in the local cache and HF_HUB_OFFLINE is set") || !strings.Contains(stderr, "unset HF_HUB_OFFLINE") {
		t.Errorf("offline with a cold cache: exit %d:\n%s", code, stderr)
	}
	if r := hub.Requests(); len(r) != 0 {
		t.Errorf("offline asked the Hub %q", r)
	}
}
