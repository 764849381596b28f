package accuracy

import "testing"

func TestExtractLetter(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"C", "C", true},
		{" B", "B", true},
		{"(D)", "D", true},
		{"A.", "A", true},
		{"C. Paris", "C", true},
		{"B) 42", "B", true},
		{"The answer is (C).", "C", true},
		{"the answer is b", "B", true},
		{"Answer: D", "D", true},
		{"The correct answer is **A**.", "A", true},
		{"Let's see. (A) is wrong because x. (B) is wrong too. So the answer is (C)", "C", true},
		// The last "answer is" wins over earlier mentions.
		{"I first thought the answer is A, but the answer is D.", "D", true},
		// Only a parenthesised letter left.
		{"Options (A) and (B) fail; (C) holds", "C", true},
		{"<think>the answer is A</think>\nThe answer is (B).", "B", false /* via Grade */},
		{"Paris is the capital", "", false},
		{"", "", false},
		{"I think so.", "", false},
	}
	for _, tc := range tests {
		if tc.in == "<think>the answer is A</think>\nThe answer is (B)." {
			continue // Grade's FinalPart case, below
		}
		got, ok := ExtractLetter(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ExtractLetter(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestExtractNumber(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"42", "42", true},
		{"She has 3 apples and buys 5, so 8.", "8", true},
		{"Total: 1,234 dollars", "1234", true},
		{"It is -7.", "-7", true},
		{"a loss of −12", "-12", true},
		{"The answer is 3/4 of the cake, i.e. 75 percent", "3/4", true},
		{"0.50", "1/2", true},
		{"Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72", "72", true},
		{"#### 1,000", "1000", true},
		{"so 10 + 5 = 15. The answer is 15. Check: 15 - 5 = 10", "15", true},
		{"+8", "8", true},
		{"no digits here", "", false},
	}
	for _, tc := range tests {
		got, ok := ExtractNumber(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ExtractNumber(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNormalizeMath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"042", "42"},
		{"$42$", "42"},
		{`\frac{1}{2}`, "1/2"},
		{`\dfrac{2}{4}`, "1/2"},
		{"0.5", "1/2"},
		{`90^\circ`, "90"},
		{`\text{ 17 }`, "17"},
		{"x = 5", "5"},
		{`\sqrt{2}`, `\sqrt{2}`},
		{"12.", "12"},
	}
	for _, tc := range tests {
		if got := NormalizeMath(tc.in); got != tc.want {
			t.Errorf("NormalizeMath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGrade(t *testing.T) {
	tests := []struct {
		g                  Grader
		response, expected string
		answer             string
		correct            bool
	}{
		{GraderMultipleChoice, "C", "C", "C", true},
		{GraderMultipleChoice, "The answer is (B).", "C", "B", false},
		// Chain of thought: graded on what follows the reasoning.
		{GraderMultipleChoice, "<think>the answer is A</think>\nThe answer is (B).", "B", "B", true},
		{GraderMultipleChoice, "no idea", "A", "", false},
		{GraderNumber, "#### 1,000", "1000", "1000", true},
		{GraderNumber, "The answer is 2000/2.", "1000", "1000", true},
		{GraderNumber, "Step 1: 3+4=7. Step 2: 7*2=14.", "14", "14", true},
		{GraderNumber, "14", "Janet has #### 15", "14", false},
		{GraderMath, `so the total is \boxed{\frac{6}{8}}`, "3/4", "3/4", true},
		{GraderMath, `\boxed{042}`, "42", "42", true},
		{GraderMath, "The answer is 17.", "17", "17", true},
		{GraderMath, `\boxed{18}`, "17", "18", false},
		{GraderExact, "  The Paris. ", "paris", "paris", true},
		{GraderExact, "Lyon", "Paris", "lyon", false},
		{GraderExact, "", "Paris", "", false},
	}
	for _, tc := range tests {
		got := Grade(tc.g, tc.response, tc.expected)
		if got.Answer != tc.answer || got.Correct != tc.correct {
			t.Errorf("Grade(%s, %q, %q) = %+v, want answer %q correct %v", tc.g, tc.response, tc.expected, got, tc.answer, tc.correct)
		}
	}
}

func TestParseGrader(t *testing.T) {
	for _, g := range Graders {
		if got, ok := ParseGrader(string(g)); !ok || got != g {
			t.Errorf("ParseGrader(%q) = %q, %v", g, got, ok)
		}
	}
	if _, ok := ParseGrader("vibes"); ok {
		t.Error("ParseGrader(vibes) ok")
	}
}
