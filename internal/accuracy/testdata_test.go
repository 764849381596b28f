package accuracy

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated test data")

// dataDir is the repository's shared accuracy test data.
const dataDir = "../../testdata/accuracy"

// TestTestdata checks that the benchmark files under testdata/accuracy are
// what genTestdata makes (they are generated, not copied from any
// benchmark: arithmetic questions in each benchmark's layout); -update
// rewrites them.
func TestTestdata(t *testing.T) {
	files := genTestdata()
	for name, want := range files {
		p := filepath.Join(dataDir, name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test -run TestTestdata -update ./internal/accuracy)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what genTestdata makes; run with -update and review the diff", p)
		}
	}
}

func jsonl(rows []map[string]any) []byte {
	var b bytes.Buffer
	for _, r := range rows {
		j, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// mcRow makes an MMLU row asking a op b, with the right choice at a
// random position and three near misses.
func mcRow(rng *rand.Rand, subject string, mul bool) (q string, choices []string, answer int) {
	a, b := rng.IntN(90)+10, rng.IntN(90)+10
	r, op := a+b, "+"
	if mul {
		a, b = rng.IntN(12)+2, rng.IntN(12)+2
		r, op = a*b, "×"
	}
	answer = rng.IntN(4)
	offs := []int{-10, -1, 1, 2, 10}
	rng.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
	k := 0
	for c := range 4 {
		if c == answer {
			choices = append(choices, strconv.Itoa(r))
			continue
		}
		choices = append(choices, strconv.Itoa(r+offs[k]))
		k++
	}
	return fmt.Sprintf("What is %d %s %d?", a, op, b), choices, answer
}

func genTestdata() map[string][]byte {
	rng := rand.New(rand.NewPCG(35, 2026))
	files := map[string][]byte{}
	subjects := []string{"elementary_addition", "elementary_multiplication"}
	var dev, test []map[string]any
	var csvDev, csvTest = map[string]*bytes.Buffer{}, map[string]*bytes.Buffer{}
	for si, s := range subjects {
		csvDev[s], csvTest[s] = &bytes.Buffer{}, &bytes.Buffer{}
		for i := range 5 + 50 {
			q, ch, a := mcRow(rng, s, si == 1)
			row := map[string]any{"question": q, "subject": s, "choices": ch, "answer": a}
			w := csv.NewWriter(csvTest[s])
			if i < 5 {
				dev = append(dev, row)
				w = csv.NewWriter(csvDev[s])
			} else {
				test = append(test, row)
			}
			if i < 5 || i < 5+8 {
				w.Write(append(append([]string{q}, ch...), string(rune('A'+a))))
				w.Flush()
			}
		}
	}
	files["mmlu/all/dev-00000-of-00001.jsonl"] = jsonl(dev)
	files["mmlu/all/test-00000-of-00001.jsonl"] = jsonl(test)
	for _, s := range subjects {
		files["mmlu-csv/dev/"+s+"_dev.csv"] = csvDev[s].Bytes()
		files["mmlu-csv/test/"+s+"_test.csv"] = csvTest[s].Bytes()
	}
	names := []string{"Tom", "Ana", "Wei", "Priya", "Kofi"}
	things := []string{"apples", "stamps", "marbles", "books"}
	var train, gtest []map[string]any
	for i := range 8 + 40 {
		n, th := names[rng.IntN(len(names))], things[rng.IntN(len(things))]
		a, b, c := rng.IntN(40)+2, rng.IntN(40)+2, rng.IntN(5)+2
		q := fmt.Sprintf("%s has %d %s and buys %d more, then gives away a 1/%d share of %d %s. How many %s does %s have?", n, a, th, b, c, c*10, th, th, n)
		sol := fmt.Sprintf("%s has %d + %d = <<%d+%d=%d>>%d %s.\nA 1/%d share of %d is %d/%d = <<%d/%d=%d>>%d.\n%d - %d = <<%d-%d=%d>>%d.\n#### %d",
			n, a, b, a, b, a+b, a+b, th, c, c*10, c*10, c, c*10, c, 10, 10, a+b, 10, a+b, 10, a+b-10, a+b-10, a+b-10)
		row := map[string]any{"question": q, "answer": sol}
		if i < 8 {
			train = append(train, row)
		} else {
			gtest = append(gtest, row)
		}
	}
	files["gsm8k/main/train-00000-of-00001.jsonl"] = jsonl(train)
	files["gsm8k/main/test-00000-of-00001.jsonl"] = jsonl(gtest)
	var aime []map[string]any
	for i := range 30 {
		a, b, m := rng.IntN(20)+2, rng.IntN(6)+2, []int{7, 11, 13, 1000}[rng.IntN(4)]
		r := 1
		for range b {
			r = r * a % m
		}
		aime = append(aime, map[string]any{"id": i, "problem": fmt.Sprintf("Find the remainder when $%d^{%d}$ is divided by $%d$.", a, b, m),
			"solution": "Reduce step by step modulo the divisor.", "answer": strconv.Itoa(r)})
	}
	files["aime/data/train-00000-of-00001.jsonl"] = jsonl(aime)
	items := []map[string]any{
		{"id": "capital-fr", "task": "capitals", "prompt": "What is the capital of France? Answer with the city's name only.", "answer": "Paris", "grader": "exact_match"},
		{"id": "capital-jp", "task": "capitals", "prompt": "What is the capital of Japan? Answer with the city's name only.", "answer": "Tokyo", "grader": "exact_match"},
		{"id": "sum-1", "task": "sums", "prompt": "What is 12 + 30? End with the number.", "answer": 42, "grader": "number"},
		{"id": "sum-2", "task": "sums", "prompt": "What is 7 + 8? End with the number.", "answer": "15", "grader": "number"},
		{"id": "mc-1", "task": "choice", "messages": []map[string]string{{"role": "user", "content": "Which is a prime?\nA. 4\nB. 6\nC. 7\nD. 9\nAnswer with the letter."}}, "answer": "C", "grader": "multiple_choice"},
		{"id": "frac-1", "task": "sums", "prompt": `What is 1/4 + 1/4? Put the answer in \boxed{}.`, "answer": `\frac{1}{2}`, "grader": "math"},
	}
	files["items.jsonl"] = jsonl(items)
	return files
}
