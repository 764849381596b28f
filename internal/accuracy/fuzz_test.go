package accuracy

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzGrade checks the graders on any response: they never panic, an
// extracted answer graded against itself is right, and a response that
// is only "The answer is (X)." / "#### N" is read back exactly.
func FuzzGrade(f *testing.F) {
	for _, s := range []string{"C", "The answer is (B).", "#### 1,234", "-3/4", `\boxed{\frac{1}{2}}`, "<think>A</think>D", "answer is", "((((", "\\boxed{"} {
		f.Add(s, "A")
	}
	f.Fuzz(func(t *testing.T, response, expected string) {
		for _, g := range Graders {
			r := Grade(g, response, expected)
			if r.Correct && r.Answer == "" {
				t.Fatalf("%s: correct without an answer", g)
			}
			// An extracted answer expected as such is right.
			if r.Answer != "" && !Grade(g, response, r.Answer).Correct {
				t.Fatalf("%s: %q graded against its own answer %q is wrong", g, response, r.Answer)
			}
		}
		if n, ok := CanonicalNumber(expected); ok {
			if got, _ := ExtractNumber("#### " + expected); got != n {
				t.Fatalf("ExtractNumber(#### %q) = %q, want %q", expected, got, n)
			}
		}
		if len(expected) == 1 && expected[0] >= 'A' && expected[0] <= 'J' {
			if got, _ := ExtractLetter(response + "\nThe answer is (" + expected + ")."); got != expected && !strings.Contains(response, "nswer") {
				t.Fatalf("ExtractLetter after %q = %q, want %q", response, got, expected)
			}
		}
	})
}

// FuzzFileItem reads any line of an items file: no panic, and an item it
// accepts has a prompt, an answer and a known grader.
func FuzzFileItem(f *testing.F) {
	f.Add(`{"prompt":"x","answer":1,"grader":"number"}`)
	f.Add(`{"messages":[{"role":"user","content":"q"}],"answer":"C","grader":"multiple_choice","task":"t","id":"a"}`)
	f.Add(`{"prompt":"","answer":null}`)
	f.Fuzz(func(t *testing.T, line string) {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &obj) != nil {
			return
		}
		it, err := decodeFileItem(obj, "")
		if err != nil {
			return
		}
		if it.Prompt == "" && len(it.Messages) == 0 {
			t.Fatal("accepted an item without a prompt")
		}
		if _, ok := ParseGrader(string(it.Grader)); !ok {
			t.Fatalf("accepted grader %q", it.Grader)
		}
	})
}
