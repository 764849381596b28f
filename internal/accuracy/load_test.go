package accuracy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, o LoadOptions) *Set {
	t.Helper()
	s, err := Load(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadMMLU(t *testing.T) {
	s := load(t, LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu", Shots: 5})
	if len(s.Items) != 100 || s.MaxTokens != 16 {
		t.Fatalf("%d items, max tokens %d; want 100, 16", len(s.Items), s.MaxTokens)
	}
	if got := s.Tasks(); len(got) != 2 || got[0] != "elementary_addition" {
		t.Fatalf("tasks %v", got)
	}
	p := s.Prompt(0)
	if !strings.HasPrefix(p, "The following are multiple choice questions (with answers) about elementary addition.\n\n") ||
		strings.Count(p, "\nAnswer:") != 6 || !strings.HasSuffix(p, "D. 186\nAnswer:") {
		t.Errorf("prompt:\n%s", p)
	}
	if s.Items[0].Answer != "A" || s.Items[0].ID != "mmlu/elementary_addition/0" {
		t.Errorf("item 0: %+v", s.Items[0])
	}
	// The CSV layout reads the same questions.
	c := load(t, LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu-csv", Shots: 5, Tasks: []string{"elementary_addition"}})
	if len(c.Items) != 8 || c.Prompt(0) != p {
		t.Errorf("CSV: %d items; prompt 0 differs: %v", len(c.Items), c.Prompt(0) != p)
	}
	cot := load(t, LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu", CoT: true, SystemPrompt: "Be brief."})
	m := cot.Messages(0)
	if len(m) != 2 || m[0].Role != "system" || !strings.HasSuffix(m[1].Content, "Answer: Let's think step by step.") || cot.MaxTokens != 512 {
		t.Errorf("CoT messages %+v (max tokens %d)", m, cot.MaxTokens)
	}
}

func TestLoadOthers(t *testing.T) {
	g := load(t, LoadOptions{Benchmark: GSM8K, Data: dataDir + "/gsm8k", Shots: 8})
	if len(g.Items) != 40 || strings.Count(g.Prompt(0), "Question: ") != 9 || g.Items[0].Answer != "57" {
		t.Errorf("gsm8k: %d items, answer %q, prompt:\n%s", len(g.Items), g.Items[0].Answer, g.Prompt(0))
	}
	a := load(t, LoadOptions{Benchmark: AIME, Data: dataDir + "/aime"})
	if len(a.Items) != 30 || !strings.HasSuffix(a.Prompt(0), `\boxed{}.`) || a.Items[0].Grader != GraderMath {
		t.Errorf("aime: %d items, %q", len(a.Items), a.Prompt(0))
	}
	f := load(t, LoadOptions{File: dataDir + "/items.jsonl"})
	if len(f.Items) != 6 || f.Items[2].Answer != "42" || f.Items[4].Grader != GraderMultipleChoice || len(f.Messages(4)) != 1 {
		t.Errorf("file: %+v", f.Items)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"prompt":"x","answer":"1","grader":"number"}`+"\n"+`{"prompt":"y"}`+"\n"), 0o644)
	tests := []struct {
		o    LoadOptions
		want string
	}{
		{LoadOptions{File: bad}, `bad.jsonl:2: field "answer": missing`},
		{LoadOptions{Benchmark: "hellaswag", Data: dir}, `want one of aime, file, gsm8k, mmlu`},
		{LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu", Shots: 6}, "has 5 examples"},
		{LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu", Tasks: []string{"astronomy"}}, "tasks astronomy: not in mmlu"},
		{LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu/all/test-00000-of-00001.jsonl", Shots: 1}, "needs the examples' split"},
		{LoadOptions{Benchmark: AIME, Data: dataDir + "/aime", Shots: 2}, "no split to take examples from"},
		{LoadOptions{Benchmark: MMLU}, "no way to download"},
		{LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu", Shots: 33}, "want 0 to 32"},
	}
	for _, tc := range tests {
		_, err := Load(context.Background(), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%+v) = %v, want an error with %q", tc.o, err, tc.want)
		}
	}
	_, err := Load(context.Background(), LoadOptions{File: bad})
	if pe, ok := errors.AsType[*ParseError](err); !ok || pe.Line != 2 {
		t.Errorf("error %v is not a ParseError of line 2", err)
	}
}

func TestLoadDownload(t *testing.T) {
	var asked []string
	dl := func(_ context.Context, repo, rev, file string) (string, error) {
		asked = append(asked, repo+"@"+rev+":"+file)
		return filepath.Join(dataDir, "mmlu", strings.TrimSuffix(file, ".parquet")+".jsonl"), nil
	}
	s := load(t, LoadOptions{Benchmark: MMLU, Download: dl, Revision: "abc", Shots: 1})
	if len(s.Items) != 100 || len(asked) != 2 || asked[0] != "cais/mmlu@abc:all/test-00000-of-00001.parquet" {
		t.Errorf("%d items, asked %v", len(s.Items), asked)
	}
}

func TestKey(t *testing.T) {
	s := load(t, LoadOptions{Benchmark: MMLU, Data: dataDir + "/mmlu", Shots: 5})
	k := NewKey(s)
	for i := range s.Items {
		j, ok := k.Lookup(s.Prompt(i))
		if !ok || j != i {
			// Two items may be the same question (the data is random
			// arithmetic); they must then have the same answer.
			if !ok || s.Items[j].Answer != s.Items[i].Answer || probe(&s.Items[j]) != probe(&s.Items[i]) {
				t.Fatalf("Lookup(prompt %d) = %d, %v", i, j, ok)
			}
		}
		for _, correct := range []bool{true, false} {
			r := Grade(s.Items[i].Grader, k.Answer(i, correct), s.Items[i].Answer)
			if r.Correct != correct {
				t.Fatalf("item %d: Answer(%v) = %q graded %v", i, correct, k.Answer(i, correct), r.Correct)
			}
		}
	}
	if _, ok := k.Lookup("Tell me a story."); ok {
		t.Error("Lookup found an item in an unrelated prompt")
	}
	for _, name := range []string{GSM8K, AIME} {
		o := LoadOptions{Benchmark: name, Data: dataDir + "/" + name}
		s := load(t, o)
		k := NewKey(s)
		for i := range s.Items {
			for _, correct := range []bool{true, false} {
				if r := Grade(s.Items[i].Grader, k.Answer(i, correct), s.Items[i].Answer); r.Correct != correct {
					t.Fatalf("%s item %d: Answer(%v) = %q graded %+v", name, i, correct, k.Answer(i, correct), r)
				}
			}
		}
	}
}
