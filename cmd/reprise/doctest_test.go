package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/hfhub/hfhubtest"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// The doc-test runs every shell example of the documentation and of every
// command's --help "Examples:", as a reader would paste them, and checks
// that each does what its text says.
//
// What runs: the ```sh (or bash, shell) blocks of README.md, every .md below
// docs/, traces/README.md and the sdk-wasm READMEs, and the example lines
// of each command's Description. A document's blocks run in order, each in
// its own bash -e process but in one session directory, so a file written
// by one block is there for the next (background jobs are stopped when the
// document is done).
//
// Where it runs: a temporary directory laid out like a clone: traces/ (the
// bundled traces), bin/reprise and `reprise` on PATH (this test binary
// running the CLI, as TestCLIChild does), and the files the examples
// assume the reader has (docFixtures: their own trace, a dataset, earlier
// run directories, a recording). HOME is the session's, so nothing of the
// user's is read or written (the calibration and the tokenizer cache).
//
// What is changed, so that each example runs in seconds against a server
// that is there (the rewritten block is printed when it fails):
//   - every server URL (http://HOST:PORT, or localhost:PORT and
//     127.0.0.1:PORT without a scheme) points at a mock server the test
//     started, serving every model the examples name, unless the same block
//     starts a server on that address itself (mock-server --addr, record
//     --listen: it gets a free port, and the block waits for it to listen
//     after starting it with &); a server started in the foreground is
//     started, checked to listen, and stopped with Ctrl-C (SIGINT);
//   - REPRISE_URL and URL name the mock, so the default URL reaches it;
//   - replays are bounded: REPRISE_REQUEST_COUNT=10 and REPRISE_DURATION=1s
//     where the example gives no count or duration, --request-count above
//     docMaxRequests and --duration above docMaxDuration are lowered (in
//     replay, sweep and profile), selftest steps are short and its
//     --streams at most 16, and `date -d +20sec` start times are 3 s ahead;
//   - `make build` is the binary the test already built.
//
// Annotations, an HTML comment on the line before the fence:
//
//	<!-- doctest: exit=2 -->                    the block's exit status (default 0)
//	<!-- doctest: creates=runs/*/summary.json --> a file (glob) the text says is written
//	<!-- doctest: needs=zstd -->                 skip, saying so, without this program
//	<!-- doctest: skip: REASON -->               not run; the test prints REASON
func TestDoc(t *testing.T) {
	if raceEnabled {
		t.Skip("runs in make test's pass without -race: the examples' replays would be ten times slower")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	docs := docFiles(t)
	var blocks [][]docBlock
	models := []string{mockserver.DefaultModel}
	for _, f := range docs {
		bs := docBlocks(t, f)
		if len(bs) > 0 {
			blocks = append(blocks, bs)
		}
	}
	blocks = append(blocks, helpBlocks(t)...)
	for _, bs := range blocks {
		for _, b := range bs {
			models = append(models, docModels(b.text)...)
		}
	}
	slices.Sort(models)
	models = slices.Compact(models)

	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Models = models
	cfg.TTFT = time.Millisecond
	cfg.ITL = 100 * time.Microsecond
	cfg.KeepLog = false
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, err := mockserver.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	// A fake Hugging Face Hub (HF_ENDPOINT) serves a tokenizer.json for
	// every documented model id, so examples naming one download it as
	// they would from the Hub, without the network.
	hub := hfhubtest.New()
	defer hub.Close()
	tokJSON, err := tokenizertest.Llama3Style(4096)
	if err != nil {
		t.Fatal(err)
	}
	hubIDs := slices.Clone(models)
	for _, bs := range blocks {
		for _, b := range bs {
			for _, m := range docTokenizerFlag.FindAllStringSubmatch(b.text, -1) {
				hubIDs = append(hubIDs, m[1])
			}
		}
	}
	for _, m := range hubIDs {
		if tokenizer.IsModelID(m) {
			hub.AddFile(m, "tokenizer.json", string(tokJSON))
		}
	}

	fixtures := docFixtures(t, mock.URL())
	for _, bs := range blocks {
		t.Run(bs[0].file, func(t *testing.T) {
			s := newDocSession(t, fixtures, mock.Addr(), hub.URL)
			defer s.stop()
			for _, b := range bs {
				s.run(t, b)
			}
		})
	}
}

// docMaxRequests and docMaxDuration bound a documented replay's
// --request-count and --duration.
const (
	docMaxRequests = 10
	docMaxDuration = time.Second
	// docBlockTimeout is the most one block may take; past it the block
	// is killed and fails.
	docBlockTimeout = 90 * time.Second
)

// docBlock is one example: a fenced shell block of a document, or one
// command's --help examples.
type docBlock struct {
	file    string // repository-relative path, or "reprise CMD --help"
	line    int    // of the opening fence (or the example's source line)
	text    string
	exit    int
	creates []string
	needs   []string
	skip    string
}

func (b docBlock) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docFiles lists the documents whose shell blocks run, repository-relative.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "traces/README.md"}
	root := "../.."
	for _, dir := range []string{"docs", "sdk-wasm"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "target") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, _ := filepath.Rel(root, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

var (
	docFence      = regexp.MustCompile("^\\s*```\\s*([A-Za-z]*)")
	docAnnotation = regexp.MustCompile(`^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$`)
)

// docBlocks returns the shell blocks of the Markdown file, with their
// annotations. An unclosed fence, or an untagged block of reprise
// commands that is not a synopsis (no [ or |), fails the test: the first
// renders the rest of the document as code, the second is an example that
// would never run.
func docBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		m := docFence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		start := i
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				end = j
				break
			}
		}
		if end < 0 {
			t.Errorf("%s:%d: code block never closed: the rest of the document renders as code", file, start+1)
			break
		}
		if m2 := strings.TrimSpace(lines[end]); m2 != "```" {
			t.Errorf("%s:%d: code block opened at line %d is closed by %q, which opens another", file, end+1, start+1, m2)
		}
		body := strings.Join(lines[start+1:end], "\n")
		i = end
		switch m[1] {
		case "sh", "bash", "shell":
		case "":
			if cmds := strings.TrimSpace(body); strings.HasPrefix(cmds, "reprise ") && !strings.ContainsAny(cmds, "[|") {
				t.Errorf("%s:%d: a block of reprise commands without a language: tag it ```sh so that it runs here", file, start+1)
			}
			continue
		default:
			continue
		}
		b := docBlock{file: file, line: start + 1, text: body}
		for k := start - 1; k >= 0 && k >= start-3; k-- {
			a := docAnnotation.FindStringSubmatch(lines[k])
			if a == nil {
				if strings.TrimSpace(lines[k]) == "" {
					continue
				}
				break
			}
			if err := b.annotate(a[1]); err != nil {
				t.Errorf("%s:%d: %v", file, k+1, err)
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// annotate applies one doctest annotation.
func (b *docBlock) annotate(a string) error {
	if reason, ok := strings.CutPrefix(a, "skip:"); ok {
		b.skip = strings.TrimSpace(reason)
		if b.skip == "" {
			return fmt.Errorf("doctest skip without a reason")
		}
		return nil
	}
	for _, f := range strings.Fields(a) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "exit":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("doctest exit=%q: want a number", v)
			}
			b.exit = n
		case "creates":
			b.creates = append(b.creates, v)
		case "needs":
			b.needs = append(b.needs, v)
		default:
			return fmt.Errorf("doctest annotation %q: want exit=N, creates=PATH, needs=PROGRAM or skip: REASON", f)
		}
	}
	return nil
}

// helpBlocks returns each command's --help examples as one block each,
// all in one session ("reprise --help"), in the order of the command tree.
func helpBlocks(t *testing.T) [][]docBlock {
	t.Helper()
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, abort: context.Background()}
	root := newRoot(a)
	if err := root.Run(context.Background(), []string{"reprise", "--help"}); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			data, _ := os.ReadFile(f)
			sources[f] = string(data)
		}
	}
	var blocks []docBlock
	var walk func(cmd *cli.Command)
	walk = func(cmd *cli.Command) {
		if _, ex, ok := strings.Cut(cmd.Description, "Examples:\n"); ok {
			var lines []string
			for _, l := range strings.Split(ex, "\n") {
				if !strings.HasPrefix(l, "  ") {
					break
				}
				lines = append(lines, strings.TrimSpace(l))
			}
			b := docBlock{file: cmd.FullName() + " --help", text: strings.Join(lines, "\n")}
			// Name the source line of the first example.
			for f, src := range sources {
				q := strconv.Quote(lines[0])
				if i := strings.Index(src, `"  `+q[1:len(q)-1]); i >= 0 {
					b.file, b.line = "cmd/reprise/"+f+" ("+cmd.FullName()+" --help)", strings.Count(src[:i], "\n")+1
				}
			}
			blocks = append(blocks, b)
		}
		for _, sub := range cmd.Commands {
			walk(sub)
		}
	}
	walk(root)
	// report's example draws the sweep directory sweep's example writes.
	slices.SortStableFunc(blocks, func(a, b docBlock) int {
		return cmpBool(!strings.Contains(a.file, "(reprise sweep "), !strings.Contains(b.file, "(reprise sweep "))
	})
	if len(blocks) < 5 {
		t.Fatalf("found the examples of %d commands; the command tree is not the binary's", len(blocks))
	}
	return [][]docBlock{blocks}
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

var docModelFlag = regexp.MustCompile(`(?:--model|-m)[ =]([A-Za-z0-9][\w./:-]*)`)

// docModels returns the model names the examples of text send.
// docTokenizerFlag finds the tokenizers examples name (a model id among
// them is served by the fake Hub).
var docTokenizerFlag = regexp.MustCompile(`--tokenizer[ =]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)`)

func docModels(text string) []string {
	var ms []string
	for _, m := range docModelFlag.FindAllStringSubmatch(text, -1) {
		ms = append(ms, m[1])
	}
	return ms
}

// docFixtures writes, into a directory that each session copies, the files
// the examples assume the reader has, and returns that directory.
func docFixtures(t *testing.T, mockURL string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, f := range []string{"mooncake-sample.jsonl", "bailian-sample.jsonl", "burstgpt-sample.csv", "README.md"} {
		write("traces/"+f, read("traces/"+f))
	}
	// The accuracy examples' generated benchmark data.
	for _, f := range []string{"mmlu/all/test-00000-of-00001.jsonl", "mmlu/all/dev-00000-of-00001.jsonl", "items.jsonl"} {
		write("testdata/accuracy/"+f, read("testdata/accuracy/"+f))
	}
	// The reader's own trace: the first 30 rows of the Mooncake sample,
	// 20 times faster (0 to 0.9 s).
	var own strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(read("traces/mooncake-sample.jsonl"))))
	sc.Buffer(nil, 1<<20)
	for n := 0; n < 30 && sc.Scan(); n++ {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		row["timestamp"] = row["timestamp"].(float64) / 20
		line, _ := json.Marshal(row)
		own.Write(append(line, '\n'))
	}
	for _, name := range []string{"conversation_trace.jsonl", "trace.jsonl", "my-trace.jsonl", "prod.jsonl", "a-raw.jsonl"} {
		write(name, []byte(own.String()))
	}
	var zst strings.Builder
	zw, _ := zstd.NewWriter(&zst)
	zw.Write(read("traces/bailian-sample.jsonl"))
	zw.Close()
	write("big.jsonl.zst", []byte(zst.String()))
	write("ShareGPT_V3_unfiltered_cleaned_split.json", []byte(testShareGPT))
	write("train.parquet", docParquet(t))
	write("team.key", []byte(strings.Repeat("0123456789abcdef", 4)+"\n"))
	write("my.wasm", read("wasm/adapters/anthropic-messages.wasm"))
	write("recorded.http", read("wasm/testdata/recordings/anthropic-stream-tool-use.http"))
	write("rec.http", read("engine/adapter/openai/testdata/responses/nonstream.http"))
	if err := os.MkdirAll(filepath.Join(dir, "home/.config/fish/completions"), 0o755); err != nil {
		t.Fatal(err)
	}

	// Earlier runs the examples compare, summarize and report on.
	base := filepath.Join(dir, "runs/baseline")
	if code, _, stderr := runCLI(t, "", "replay", "--url", mockURL, "--model", "M", "--isl", "64", "--osl", "8",
		"--request-count", "12", "--concurrency", "2", "--out", base, "-q", "--no-server-metrics"); code != 0 {
		t.Fatalf("fixture run: exit %d\n%s", code, stderr)
	}
	for _, name := range []string{"candidate", "old", "new", "old-1", "old-2", "old-3", "new-1", "new-2", "new-3", "20261121T185234Z-reprise-mock-fixed", "2026-11-25T120000"} {
		if out, err := exec.Command("cp", "-r", base, filepath.Join(dir, "runs", name)).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
	}
	return dir
}

// docParquet is a dataset of the README's Hugging Face example: columns
// question and max_tokens.
func docParquet(t *testing.T) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "question", Type: arrow.BinaryTypes.String},
		{Name: "max_tokens", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"What is a KV cache?", "Why batch requests?", "Name a prime.", "What is 2+2?"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{16, 12, 4, 2}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	var buf strings.Builder
	w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

// docSession is one document's run: its directory, environment and the
// process groups of its blocks, stopped at the end.
type docSession struct {
	dir    string
	env    []string
	mock   string // host:port of the test's mock server
	groups []int
}

func newDocSession(t *testing.T, fixtures, mock, hub string) *docSession {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", fixtures+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\n" +
		"export " + cliChildEnv + "=" + cliChildArgv + " " + cliChildEnv + "_SETUP=doctest\n" +
		"exec " + strconv.Quote(exe) + " -test.run='^TestCLIChild$' -test.count=1 -- \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "reprise"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	url := "http://" + mock
	env := []string{
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "home/.cache"),
		"PATH=" + bin + ":" + os.Getenv("PATH"),
		"TMPDIR=" + dir,
		"URL=" + url,
		"REPRISE_URL=" + url,
		"REPRISE_REQUEST_COUNT=" + strconv.Itoa(docMaxRequests),
		"REPRISE_DURATION=" + docMaxDuration.String(),
		"REPRISE_MOCK_TTFT=1ms",
		"REPRISE_MOCK_ITL=100us",
		"REPRISE_CALIBRATION=off",
		"REPRISE_STEP_DURATION=300ms",
		"REPRISE_NO_CO_LOCATED=true",
		"REPRISE_STREAMS=16",
		"HF_ENDPOINT=" + hub,
		"HF_HOME=" + filepath.Join(dir, "home/.cache/huggingface"),
		"HF_HUB_CACHE=", "HUGGINGFACE_HUB_CACHE=", "HF_TOKEN=", "HF_TOKEN_PATH=", "HF_HUB_OFFLINE=", "TRANSFORMERS_OFFLINE=",
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "REPRISE_") && !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			env = append(env, kv)
		}
	}
	return &docSession{dir: dir, env: env, mock: mock}
}

// stop ends every process the session's blocks left running: SIGTERM to
// each block's process group, then SIGKILL to what is left.
func (s *docSession) stop() {
	for _, g := range s.groups {
		syscall.Kill(-g, syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, g := range s.groups {
		for syscall.Kill(-g, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(-g, syscall.SIGKILL)
	}
}

// docPrelude is bash run before every block: waiting for a server the
// block started, starting and stopping one it runs in the foreground, and
// make build.
const docPrelude = `set -e
__doctest_wait() { # HOST:PORT: wait up to 15 s for a listener
  local i
  for i in $(seq 150); do (exec 3<>/dev/tcp/${1%:*}/${1##*:}) 2>/dev/null && return 0; sleep 0.1; done
  echo "doctest: nothing listens on $1 after 15 s" >&2; return 1
}
__doctest_serve() { # HOST:PORT COMMAND...: start a server, check it listens, stop it with Ctrl-C
  local addr=$1; shift
  "$@" & local pid=$!
  __doctest_wait "$addr" || { kill $pid; return 1; }
  kill -INT $pid; wait $pid
}
make() { if [ "$*" = build ]; then test -x bin/reprise; else command make "$@"; fi; }
`

// run runs one block and checks what its annotations promise.
func (s *docSession) run(t *testing.T, b docBlock) {
	t.Helper()
	if b.skip != "" {
		t.Logf("%s: SKIP: %s", b.where(), b.skip)
		return
	}
	for _, p := range b.needs {
		if _, err := exec.LookPath(p); err != nil {
			t.Logf("%s: SKIP: needs %s, which is not on PATH", b.where(), p)
			return
		}
	}
	script, err := s.rewrite(b.text)
	if err != nil {
		t.Errorf("%s: %v", b.where(), err)
		return
	}
	out, err := os.Create(filepath.Join(s.dir, fmt.Sprintf(".doctest-%d.out", b.line)))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), docBlockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", docPrelude+script)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.dir, s.env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err = cmd.Start()
	if err == nil {
		s.groups = append(s.groups, cmd.Process.Pid)
		err = cmd.Wait()
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	took := time.Since(start).Round(time.Millisecond)
	var problems []string
	if ctx.Err() != nil {
		problems = append(problems, fmt.Sprintf("did not end within %v", docBlockTimeout))
	} else if code != b.exit {
		problems = append(problems, fmt.Sprintf("exit %d, want %d", code, b.exit))
	}
	for _, c := range b.creates {
		if m, _ := filepath.Glob(filepath.Join(s.dir, c)); len(m) == 0 {
			problems = append(problems, "wrote no "+c)
		}
	}
	if len(problems) == 0 {
		t.Logf("%s: ok (%v)", b.where(), took)
		return
	}
	tail, _ := os.ReadFile(out.Name())
	if len(tail) > 3000 {
		tail = append([]byte("…"), tail[len(tail)-3000:]...)
	}
	t.Errorf("%s: %s (after %v)\nran:\n%s\noutput (tail):\n%s", b.where(), strings.Join(problems, "; "), took,
		indent(script), indent(string(tail)))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

var (
	docURL       = regexp.MustCompile(`https?://[A-Za-z0-9.-]+:\d+|\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):\d+\b`)
	docListen    = regexp.MustCompile(`--(?:addr|listen)[ =](\S+)`)
	docServer    = regexp.MustCompile(`^\s*(?:bin/)?reprise (mock-server|record)\b`)
	docCount     = regexp.MustCompile(`(--request-count|--streams)([ =])(\d+)`)
	docDuration  = regexp.MustCompile(`(--duration)([ =])(\d+[a-zµ]+)`)
	docLoad      = regexp.MustCompile(`\breprise (replay|sweep|profile|selftest)\b`)
	docStartTime = regexp.MustCompile(`date -u -d \+\d+sec`)
	// docBackground matches a command line that starts a job with &.
	docBackground = regexp.MustCompile(`[^&>]&(\s|$)`)
)

// rewrite makes a block's text the script that runs: continuation lines
// joined, servers on free ports (waited for, or started and stopped),
// other URLs at the test's mock, loads bounded.
func (s *docSession) rewrite(text string) (string, error) {
	text = strings.ReplaceAll(text, "\\\n", " ")
	lines := strings.Split(text, "\n")
	// Addresses this block listens on get free ports.
	ports := map[string]string{}
	key := func(hostport string) string {
		hostport = strings.TrimPrefix(strings.TrimPrefix(hostport, "http://"), "https://")
		return strings.Replace(hostport, "localhost:", "127.0.0.1:", 1)
	}
	for i, l := range lines {
		m := docServer.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		addr := ""
		if a := docListen.FindStringSubmatch(l); a != nil {
			addr = a[1]
		} else {
			// The command's default address, made explicit.
			addr, flag := "127.0.0.1:8000", "--addr"
			if m[1] == "record" {
				addr, flag = "127.0.0.1:8001", "--listen"
			}
			lines[i] = strings.Replace(l, m[1], m[1]+" "+flag+" "+addr, 1)
			ports[key(addr)] = ""
			continue
		}
		ports[key(addr)] = ""
	}
	for a := range ports {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		ports[a] = "127.0.0.1:" + port
	}
	var script []string
	for _, l := range lines {
		server := ""
		if docServer.MatchString(l) {
			server = ports[key(docListen.FindStringSubmatch(l)[1])]
		}
		l = docURL.ReplaceAllStringFunc(l, func(u string) string {
			scheme := ""
			if i := strings.Index(u, "://"); i >= 0 {
				scheme = u[:i+3]
			}
			if p, ok := ports[key(u)]; ok {
				return scheme + p
			}
			return scheme + s.mock
		})
		segs := strings.Split(l, "|")
		for i, seg := range segs {
			if docLoad.MatchString(seg) {
				segs[i] = bound(seg)
			}
		}
		l = strings.Join(segs, "|")
		l = docStartTime.ReplaceAllString(l, "date -u -d +3sec")
		if server != "" {
			code, _, _ := strings.Cut(l, " #")
			if docBackground.MatchString(code) {
				script = append(script, l, "__doctest_wait "+server)
			} else {
				script = append(script, "__doctest_serve "+server+" "+l)
			}
			continue
		}
		script = append(script, l)
	}
	return strings.Join(script, "\n") + "\n", nil
}

// bound lowers the --request-count, --streams and --duration of one
// command of a load (replay, sweep, profile, selftest).
func bound(l string) string {
	l = docCount.ReplaceAllStringFunc(l, func(f string) string {
		m := docCount.FindStringSubmatch(f)
		n, _ := strconv.Atoi(m[3])
		limit := docMaxRequests
		if m[1] == "--streams" {
			limit = 16
		}
		return m[1] + m[2] + strconv.Itoa(min(n, limit))
	})
	return docDuration.ReplaceAllStringFunc(l, func(f string) string {
		m := docDuration.FindStringSubmatch(f)
		if d, err := time.ParseDuration(m[3]); err == nil && d > docMaxDuration {
			return m[1] + m[2] + docMaxDuration.String()
		}
		return f
	})
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

func init() {
	// The doc-test's `reprise` is this test binary: selftest's mock
	// server must be its child process of the same kind.
	childSetup["doctest"] = func(*testing.T) {
		selfServer = func() ([]string, error) { return cliChildCommand("mock-server"), nil }
	}
}
