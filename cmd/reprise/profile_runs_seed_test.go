package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// inputPrompts reads the prompts of a run directory's inputs.json, in order.
func inputPrompts(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Data []struct {
			Payloads []struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range in.Data {
		for _, p := range d.Payloads {
			for _, m := range p.Messages {
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// manifestSeed reads the replay seed of a run directory's manifest.
func manifestSeed(t *testing.T, dir string) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Replay struct {
			Seed uint64 `json:"seed"`
		} `json:"replay"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Replay.Seed
}

// TestProfileRunsSeed: with --num-profile-runs, every run sends the same
// prompts (AIPerf's --set-consistent-seed, the default), so the mock's
// prefix cache serves the second run's prompts whole, and draws the same
// arrivals; --vary-seed-per-trial gives each run its own prompts, which
// the cache has never seen, and --random-seed + k − 1.
func TestProfileRunsSeed(t *testing.T) {
	for _, vary := range []bool{false, true} {
		t.Run(fmt.Sprintf("vary=%v", vary), func(t *testing.T) {
			srv := startMockServer(t, nil)
			out := filepath.Join(t.TempDir(), "artifacts")
			args := []string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--num-profile-runs", "2",
				"--request-count", "3", "--isl", "64", "--osl", "2", "--random-seed", "7", "--artifact-dir", out, "--quiet"}
			if vary {
				args = append(args, "--vary-seed-per-trial")
			}
			if code, _, stderr := runCLI(t, "", args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			p1, p2 := inputPrompts(t, filepath.Join(out, "run-1")), inputPrompts(t, filepath.Join(out, "run-2"))
			if len(p1) != 3 || len(p2) != 3 {
				t.Fatalf("inputs.json: %d and %d prompts, want 3 each", len(p1), len(p2))
			}
			slices.Sort(p1) // built concurrently: in any order
			slices.Sort(p2)
			if same := slices.Equal(p1, p2); same == vary {
				t.Errorf("runs send the same prompts: %v, want %v\nrun-1 %q\nrun-2 %q", same, !vary, p1, p2)
			}
			// The arrivals follow the seed alike: AIPerf's one seed.
			for k := 1; k <= 2; k++ {
				want := uint64(7)
				if vary {
					want += uint64(k - 1)
				}
				if got := manifestSeed(t, filepath.Join(out, fmt.Sprintf("run-%d", k))); got != want {
					t.Errorf("run %d: replay seed %d, want %d", k, got, want)
				}
			}
			log := srv.Log()
			if len(log) != 6 {
				t.Fatalf("mock saw %d requests, want 6", len(log))
			}
			for i, l := range log {
				want := 0 // the first run's prompts are new, and with vary so are the second's
				if i >= 3 && !vary {
					want = 64 // the second run repeats the first's: every block is cached
				}
				if l.PromptTokens != 64 || l.CachedTokens != want {
					t.Errorf("request %d at the mock: %d prompt tokens, %d cached, want 64 and %d", i, l.PromptTokens, l.CachedTokens, want)
				}
			}
		})
	}
}

// TestProfileInputsSent: inputs.json holds exactly the requests sent, not
// those built ahead of the senders: --num-dataset-entries 2 with
// --request-count 3 sends 3 requests, drawn from the entries' 2 prompts.
func TestProfileInputsSent(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "artifacts")
	if code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--num-dataset-entries", "2",
		"--request-count", "3", "--isl", "16", "--osl", "2", "--artifact-dir", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := inputPrompts(t, out)
	if n := len(srv.Log()); n != 3 || len(got) != n {
		t.Fatalf("inputs.json holds %d requests, the mock saw %d, want 3 and 3", len(got), n)
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(got)))
	if len(distinct) != 2 {
		t.Errorf("prompts %q: want the two entries' prompts, one of them twice", got)
	}
}
