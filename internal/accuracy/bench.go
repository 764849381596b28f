package accuracy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// The benchmarks [Load] knows, by name.
const (
	MMLU  = "mmlu"
	GSM8K = "gsm8k"
	AIME  = "aime"
	// File is a user's own JSON Lines file (LoadOptions.File).
	File = "file"
)

// Benchmark describes one benchmark: where the Hub keeps it, its grader
// and its output budget.
type Benchmark struct {
	Name string
	// Repo is the Hugging Face dataset repository; Test and Shots the
	// files of the graded split and of the split n-shot examples come
	// from ("" for none).
	Repo, Test, Shots string
	Grader            Grader
	// MaxTokens and CoTMaxTokens are the default output budgets without
	// and with chain of thought.
	MaxTokens, CoTMaxTokens int
}

// Benchmarks are the named benchmarks.
var Benchmarks = map[string]Benchmark{
	MMLU: {Name: MMLU, Repo: "cais/mmlu", Test: "all/test-00000-of-00001.parquet", Shots: "all/dev-00000-of-00001.parquet",
		Grader: GraderMultipleChoice, MaxTokens: 16, CoTMaxTokens: 512},
	GSM8K: {Name: GSM8K, Repo: "openai/gsm8k", Test: "main/test-00000-of-00001.parquet", Shots: "main/train-00000-of-00001.parquet",
		Grader: GraderNumber, MaxTokens: 384, CoTMaxTokens: 512},
	AIME: {Name: AIME, Repo: "AI-MO/aimo-validation-aime", Test: "data/train-00000-of-00001.parquet",
		Grader: GraderMath, MaxTokens: 2048, CoTMaxTokens: 2048},
}

// Names returns the benchmark names, sorted.
func Names() []string {
	n := []string{File}
	for k := range Benchmarks {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// MaxShots is the most n-shot examples taken (AIPerf's bound).
const MaxShots = 32

// LoadOptions say which benchmark to load and how its prompts are made.
type LoadOptions struct {
	// Benchmark is a name of [Benchmarks], or "" with File.
	Benchmark string
	// Data is a local copy of the benchmark: a directory laid out as the
	// Hub repository (Parquet, or JSON Lines under the same names with
	// .jsonl), for MMLU also the original CSV layout (dev/ and test/
	// holding SUBJECT_dev.csv and SUBJECT_test.csv), or a file holding
	// the test split alone (then Shots must be 0). "" downloads it with
	// Download.
	Data string
	// File is a JSON Lines file of the user's own items (prompt or
	// messages, answer, grader, optional task and id); exclusive with
	// Benchmark.
	File string
	// Download fetches file of a dataset repository at revision and
	// returns its local path (the Hugging Face cache); nil when
	// downloading is not possible.
	Download func(ctx context.Context, repo, revision, file string) (string, error)
	// Revision pins the Hub revision ("" = main).
	Revision string
	// Tasks keeps the items of these tasks only (MMLU subjects, a file's
	// task values); nil keeps all.
	Tasks []string
	// Shots is the number of examples before the question (0–32).
	Shots int
	// CoT asks for reasoning before the answer.
	CoT bool
	// SystemPrompt, when set, is sent as a system message first.
	SystemPrompt string
	// Grader overrides the benchmark's grader ("" keeps it).
	Grader Grader
	// MaxTokens overrides the output budget (0 keeps the benchmark's).
	MaxTokens int
	// Limit keeps the first Limit items (0 = all).
	Limit int
}

// Item is one graded question.
type Item struct {
	// ID is stable across runs over the same data: benchmark/task/index
	// (the index within its task), or a file's own id. It pairs the items
	// of two runs.
	ID   string
	Task string
	// Question and Choices are the item's text (Choices for multiple
	// choice only). Prompt or Messages are a file item's own prompt.
	Question string
	Choices  []string
	Solution string // a worked answer (GSM8K), used in n-shot examples
	Prompt   string
	Messages []Message
	// Answer is the expected answer: a letter, a number, a text.
	Answer string
	Grader Grader
}

// Message is one chat message of a prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Set is a loaded benchmark: its items, the examples n-shot prompts take,
// and how prompts are made. It is immutable.
type Set struct {
	Benchmark string
	// Revision is the Hub commit the files came from ("" for local data).
	Revision  string
	Items     []Item
	MaxTokens int
	opts      LoadOptions
	shots     map[string][]Item // by task
}

// Tasks returns the set's task names, sorted.
func (s *Set) Tasks() []string {
	var ts []string
	seen := map[string]bool{}
	for i := range s.Items {
		if t := s.Items[i].Task; !seen[t] {
			seen[t] = true
			ts = append(ts, t)
		}
	}
	sort.Strings(ts)
	return ts
}

// Options returns the options the set was loaded with.
func (s *Set) Options() LoadOptions { return s.opts }

// Load reads a benchmark. Every problem names the file, the line and what
// to do.
func Load(ctx context.Context, o LoadOptions) (*Set, error) {
	if o.Shots < 0 || o.Shots > MaxShots {
		return nil, fmt.Errorf("n-shots %d: want 0 to %d", o.Shots, MaxShots)
	}
	if o.Grader != "" {
		if _, ok := ParseGrader(string(o.Grader)); !ok {
			return nil, fmt.Errorf("grader %q: want one of %s", o.Grader, graderList())
		}
		o.Grader, _ = ParseGrader(string(o.Grader))
	}
	s := &Set{opts: o, shots: map[string][]Item{}}
	if o.File != "" {
		if o.Benchmark != "" && o.Benchmark != File {
			return nil, fmt.Errorf("benchmark %q and a file %s: give one", o.Benchmark, o.File)
		}
		if o.Shots > 0 {
			return nil, fmt.Errorf("n-shots %d with a file of items: a file's prompts are sent as written; give 0", o.Shots)
		}
		s.Benchmark = File
		items, err := readFileItems(ctx, o.File, o.Grader)
		if err != nil {
			return nil, err
		}
		s.Items = items
		s.MaxTokens = 256
		if o.CoT {
			s.MaxTokens = 1024
		}
		return s.finish()
	}
	b, ok := Benchmarks[strings.ToLower(o.Benchmark)]
	if !ok {
		return nil, fmt.Errorf("benchmark %q: want one of %s (or a file of items)", o.Benchmark, strings.Join(Names(), ", "))
	}
	s.Benchmark = b.Name
	s.MaxTokens = b.MaxTokens
	if o.CoT {
		s.MaxTokens = b.CoTMaxTokens
	}
	if o.Shots > 0 && b.Shots == "" {
		return nil, fmt.Errorf("n-shots %d: %s has no split to take examples from; give 0", o.Shots, b.Name)
	}
	test, shots, err := s.locate(ctx, b)
	if err != nil {
		return nil, err
	}
	if s.Items, err = readSplit(ctx, b, test); err != nil {
		return nil, err
	}
	if o.Shots > 0 {
		sh, err := readSplit(ctx, b, shots)
		if err != nil {
			return nil, err
		}
		for _, it := range sh {
			s.shots[it.Task] = append(s.shots[it.Task], it)
		}
	}
	if o.Grader != "" {
		for i := range s.Items {
			s.Items[i].Grader = o.Grader
		}
	}
	return s.finish()
}

// finish applies Tasks, Limit and MaxTokens and checks the set is not empty.
func (s *Set) finish() (*Set, error) {
	o := s.opts
	if len(o.Tasks) > 0 {
		have := map[string]bool{}
		for i := range s.Items {
			have[s.Items[i].Task] = true
		}
		var missing []string
		for _, t := range o.Tasks {
			if !have[t] {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("tasks %s: not in %s (its tasks: %s)", strings.Join(missing, ", "), s.Benchmark, clipList(s.Tasks(), 20))
		}
		s.Items = slices.DeleteFunc(s.Items, func(it Item) bool { return !slices.Contains(o.Tasks, it.Task) })
	}
	if o.Shots > 0 {
		for i := range s.Items {
			if t := s.Items[i].Task; len(s.shots[t]) < o.Shots {
				return nil, fmt.Errorf("n-shots %d: task %s has %d examples in its dev split; give at most that", o.Shots, t, len(s.shots[t]))
			}
		}
	}
	if o.Limit > 0 && len(s.Items) > o.Limit {
		s.Items = s.Items[:o.Limit]
	}
	if len(s.Items) == 0 {
		return nil, fmt.Errorf("%s: no items to grade", s.Benchmark)
	}
	if o.MaxTokens > 0 {
		s.MaxTokens = o.MaxTokens
	}
	return s, nil
}

func clipList(s []string, n int) string {
	if len(s) > n {
		return strings.Join(s[:n], ", ") + fmt.Sprintf(", … (%d in all)", len(s))
	}
	return strings.Join(s, ", ")
}

func graderList() string {
	var g []string
	for _, x := range Graders {
		g = append(g, string(x))
	}
	return strings.Join(g, ", ")
}

// locate returns the local paths of the test and shot splits ("" when not
// needed), from Data or downloaded.
func (s *Set) locate(ctx context.Context, b Benchmark) (test, shots string, err error) {
	o := s.opts
	if o.Data != "" {
		st, err := os.Stat(o.Data)
		if err != nil {
			return "", "", fmt.Errorf("%s data %s: %w", b.Name, o.Data, err)
		}
		if !st.IsDir() {
			if o.Shots > 0 {
				return "", "", fmt.Errorf("%s data %s is one file (the test split): n-shots %d needs the examples' split too; give the directory laid out as %s on the Hub (%s and %s)",
					b.Name, o.Data, o.Shots, b.Repo, b.Test, b.Shots)
			}
			return o.Data, "", nil
		}
		if test, err = findLocal(o.Data, b.Test, "test"); err != nil {
			return "", "", fmt.Errorf("%s data: %w", b.Name, err)
		}
		if o.Shots > 0 {
			kind := "dev"
			if b.Name == GSM8K {
				kind = "train"
			}
			if shots, err = findLocal(o.Data, b.Shots, kind); err != nil {
				return "", "", fmt.Errorf("%s data: %w", b.Name, err)
			}
		}
		return test, shots, nil
	}
	if o.Download == nil {
		return "", "", fmt.Errorf("%s: no local data and no way to download it; give the data directory", b.Name)
	}
	if test, err = o.Download(ctx, b.Repo, o.Revision, b.Test); err != nil {
		return "", "", err
	}
	if o.Shots > 0 {
		if shots, err = o.Download(ctx, b.Repo, o.Revision, b.Shots); err != nil {
			return "", "", err
		}
	}
	return test, shots, nil
}

// findLocal finds a split in dir: the Hub's relative path, the same with
// .jsonl, or (MMLU's original CSV layout) the directory dir/kind of
// SUBJECT_kind.csv files.
func findLocal(dir, rel, kind string) (string, error) {
	for _, p := range []string{filepath.Join(dir, rel), filepath.Join(dir, strings.TrimSuffix(rel, ".parquet")+".jsonl")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if st, err := os.Stat(filepath.Join(dir, kind)); err == nil && st.IsDir() {
		return filepath.Join(dir, kind), nil
	}
	return "", fmt.Errorf("%s: no %s, %s nor %s/ (CSV files); lay the directory out as the Hub repository", dir, rel,
		strings.TrimSuffix(rel, ".parquet")+".jsonl", kind)
}

// readSplit reads the items of one split file (or CSV directory).
func readSplit(ctx context.Context, b Benchmark, path string) ([]Item, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return readCSVDir(b, path)
	}
	var items []Item
	perTask := map[string]int{}
	err := eachObject(ctx, path, func(line int, obj map[string]json.RawMessage) error {
		it, err := decodeItem(b, obj)
		if err != nil {
			return &ParseError{Path: path, Line: line, Err: err}
		}
		it.ID = fmt.Sprintf("%s/%s/%d", b.Name, it.Task, perTask[it.Task])
		perTask[it.Task]++
		items = append(items, it)
		return nil
	})
	return items, err
}

// ParseError is a line of a benchmark file that could not be read.
type ParseError struct {
	Path string
	Line int // 1-based line (JSON Lines, CSV) or row (Parquet)
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

func str(obj map[string]json.RawMessage, keys ...string) (string, string, bool) {
	for _, k := range keys {
		v, ok := obj[k]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, k, true
		}
		var n json.Number
		if json.Unmarshal(v, &n) == nil {
			return n.String(), k, true
		}
	}
	return "", "", false
}

// decodeItem reads one row of a named benchmark.
func decodeItem(b Benchmark, obj map[string]json.RawMessage) (Item, error) {
	it := Item{Grader: b.Grader, Task: b.Name}
	switch b.Name {
	case MMLU:
		q, _, ok := str(obj, "question")
		if !ok {
			return it, errors.New(`field "question": missing or not a string`)
		}
		it.Question = q
		if s, _, ok := str(obj, "subject"); ok && s != "" {
			it.Task = s
		}
		if err := json.Unmarshal(obj["choices"], &it.Choices); err != nil || len(it.Choices) < 2 {
			return it, errors.New(`field "choices": want a list of at least 2 strings`)
		}
		a, _, ok := str(obj, "answer")
		i, ok2 := letterIndex(a, len(it.Choices))
		if !ok || !ok2 {
			return it, fmt.Errorf(`field "answer" %q: want a choice index from 0 or a letter A–%s`, a, letterOf(len(it.Choices)-1))
		}
		it.Answer = letterOf(i)
	case GSM8K:
		q, _, ok := str(obj, "question")
		a, _, ok2 := str(obj, "answer")
		if !ok || !ok2 {
			return it, errors.New(`want string fields "question" and "answer" (the solution ending "#### N")`)
		}
		it.Question, it.Solution = q, a
		i := strings.LastIndex(a, "####")
		if i < 0 {
			return it, errors.New(`field "answer": no "#### N" final answer`)
		}
		n, ok := CanonicalNumber(strings.TrimSpace(a[i+4:]))
		if !ok {
			return it, fmt.Errorf(`field "answer": final answer %q is not a number`, strings.TrimSpace(a[i+4:]))
		}
		it.Answer = n
	case AIME:
		q, _, ok := str(obj, "problem", "question", "Problem")
		a, _, ok2 := str(obj, "answer", "Answer")
		if !ok || !ok2 {
			return it, errors.New(`want fields "problem" and "answer"`)
		}
		it.Question, it.Answer = q, NormalizeMath(a)
		if s, _, ok := str(obj, "solution", "Solution"); ok {
			it.Solution = s
		}
	}
	return it, nil
}

// readCSVDir reads MMLU's original layout: one SUBJECT_kind.csv per
// subject, rows question,A,B,C,D,answer without a header.
func readCSVDir(b Benchmark, dir string) ([]Item, error) {
	if b.Name != MMLU {
		return nil, fmt.Errorf("%s: CSV directories are MMLU's layout only", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no SUBJECT_%s.csv files", dir, filepath.Base(dir))
	}
	sort.Strings(files)
	var items []Item
	for _, f := range files {
		subject := strings.TrimSuffix(filepath.Base(f), "_"+filepath.Base(dir)+".csv")
		subject = strings.TrimSuffix(subject, ".csv")
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		r := csv.NewReader(fh)
		r.FieldsPerRecord = -1
		n := 0
		for line := 1; ; line++ {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				fh.Close()
				return nil, &ParseError{Path: f, Line: line, Err: err}
			}
			if len(rec) < 4 {
				fh.Close()
				return nil, &ParseError{Path: f, Line: line, Err: fmt.Errorf("%d fields: want question, the choices, answer", len(rec))}
			}
			choices := rec[1 : len(rec)-1]
			i, ok := letterIndex(rec[len(rec)-1], len(choices))
			if !ok {
				fh.Close()
				return nil, &ParseError{Path: f, Line: line, Err: fmt.Errorf("answer %q: want a letter A–%s", rec[len(rec)-1], letterOf(len(choices)-1))}
			}
			items = append(items, Item{ID: fmt.Sprintf("%s/%s/%d", b.Name, subject, n), Task: subject, Question: rec[0],
				Choices: slices.Clone(choices), Answer: letterOf(i), Grader: b.Grader})
			n++
		}
		fh.Close()
	}
	return items, nil
}

// readFileItems reads a user's JSON Lines file of items.
func readFileItems(ctx context.Context, path string, override Grader) ([]Item, error) {
	var items []Item
	ids := map[string]int{}
	err := eachObject(ctx, path, func(line int, obj map[string]json.RawMessage) error {
		it, err := decodeFileItem(obj, override)
		if err != nil {
			return &ParseError{Path: path, Line: line, Err: err}
		}
		if it.ID == "" {
			it.ID = fmt.Sprintf("file/%s/%d", it.Task, line)
		}
		if prev, dup := ids[it.ID]; dup {
			return &ParseError{Path: path, Line: line, Err: fmt.Errorf(`field "id" %q: also on line %d; ids must be unique`, it.ID, prev)}
		}
		ids[it.ID] = line
		items = append(items, it)
		return nil
	})
	return items, err
}

// decodeFileItem reads one line of an items file.
func decodeFileItem(obj map[string]json.RawMessage, override Grader) (Item, error) {
	var it Item
	it.Task = File
	if t, _, ok := str(obj, "task"); ok && t != "" {
		it.Task = t
	}
	if id, _, ok := str(obj, "id"); ok {
		it.ID = id
	}
	if m, ok := obj["messages"]; ok {
		if err := json.Unmarshal(m, &it.Messages); err != nil || len(it.Messages) == 0 {
			return it, errors.New(`field "messages": want a list of {"role","content"} objects`)
		}
	} else if p, _, ok := str(obj, "prompt"); ok && p != "" {
		it.Prompt = p
	} else {
		return it, errors.New(`want a "prompt" string or a "messages" list`)
	}
	a, _, ok := str(obj, "answer", "expected")
	if !ok {
		return it, errors.New(`field "answer": missing (a string or number)`)
	}
	it.Answer = a
	g, _, ok := str(obj, "grader")
	switch {
	case override != "":
		it.Grader = override
	case ok:
		gr, known := ParseGrader(g)
		if !known {
			return it, fmt.Errorf(`field "grader" %q: want one of %s`, g, graderList())
		}
		it.Grader = gr
	default:
		it.Grader = GraderExact
	}
	return it, nil
}

// eachObject calls fn with every JSON object of a JSON Lines or Parquet
// file, numbered from 1.
func eachObject(ctx context.Context, path string, fn func(line int, obj map[string]json.RawMessage) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if n == 4 && string(head) == "PAR1" {
		return eachParquet(ctx, path, f, fn)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return &ParseError{Path: path, Line: line, Err: fmt.Errorf("not a JSON object: %w", err)}
		}
		if err := fn(line, obj); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// eachParquet reads a Parquet file's rows as JSON objects (Arrow's JSON
// of each record batch).
func eachParquet(ctx context.Context, path string, f *os.File, fn func(line int, obj map[string]json.RawMessage) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt Parquet file: %v", path, p)
		}
	}()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	row := 0
	var buf bytes.Buffer
	for rr.Next() {
		buf.Reset()
		if err := array.RecordToJSON(rr.Record(), &buf); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		dec := json.NewDecoder(&buf)
		for dec.More() {
			row++
			var obj map[string]json.RawMessage
			if err := dec.Decode(&obj); err != nil {
				return &ParseError{Path: path, Line: row, Err: err}
			}
			if err := fn(row, obj); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
