// Command testsummary reads the JSON event streams of go test -json (one
// file a pass of make test) and prints, for each pass, how many tests
// passed, failed and skipped, then every skipped test with its reason and
// every failed one, and last one closing line over all passes:
//
//	tests: 4120 passed, 0 failed, 35 skipped
//
// A subtest counts as a test of its own. A skip's reason is the last line
// its test printed before it was skipped (the t.Skip message). It exits 1
// when a file cannot be read or holds a failed test or package, else 0.
//
//	go run ./internal/testsummary NAME=FILE.json ...
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// counts is what one pass of the suite did.
type counts struct {
	passed, failed, skipped int
	skips                   []string // "pkg TestX: reason"
	failures                []string // "pkg TestX", or "pkg" for a package that failed outside its tests
}

// tally reads one go test -json stream.
func tally(r io.Reader) (counts, error) {
	var c counts
	last := map[string]string{}     // package + test → last output line
	testFailed := map[string]bool{} // packages with a failed test
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // a build error or other text go test printed
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return c, fmt.Errorf("%w in %.80q", err, line)
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if out := strings.TrimSpace(e.Output); out != "" && !strings.HasPrefix(out, "=== ") && !strings.HasPrefix(out, "--- ") {
				last[key] = out
			}
		case "pass":
			if e.Test != "" {
				c.passed++
			}
		case "skip":
			if e.Test != "" {
				c.skipped++
				c.skips = append(c.skips, key+": "+reason(last[key]))
			}
		case "fail":
			if e.Test != "" {
				c.failed++
				c.failures = append(c.failures, key)
				testFailed[e.Package] = true
			} else if !testFailed[e.Package] {
				// A build failure, a panic outside a test, a timeout.
				c.failures = append(c.failures, e.Package+" (package)")
			}
		}
	}
	return c, sc.Err()
}

// reason drops the "file_test.go:12: " position that testing puts before a
// skip message.
func reason(out string) string {
	if out == "" {
		return "(no reason given)"
	}
	if i := strings.Index(out, ": "); i > 0 && strings.Contains(out[:i], ".go:") {
		return out[i+2:]
	}
	return out
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testsummary NAME=FILE.json ...")
		os.Exit(2)
	}
	code := 0
	var total counts
	for _, arg := range os.Args[1:] {
		name, path, ok := strings.Cut(arg, "=")
		if !ok {
			name, path = arg, arg
		}
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
			code = 1
			continue
		}
		c, err := tally(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsummary: %s: %v\n", path, err)
			code = 1
		}
		fmt.Printf("%-10s %d passed, %d failed, %d skipped\n", name+":", c.passed, c.failed, c.skipped)
		total.passed += c.passed
		total.failed += c.failed
		total.skipped += c.skipped
		for _, s := range c.skips {
			total.skips = append(total.skips, name+": "+s)
		}
		for _, s := range c.failures {
			total.failures = append(total.failures, name+": "+s)
		}
	}
	sort.Strings(total.skips)
	if len(total.skips) > 0 {
		fmt.Printf("skipped (%d):\n", len(total.skips))
		for _, s := range total.skips {
			fmt.Println("  " + s)
		}
	}
	if len(total.failures) > 0 {
		code = 1
		fmt.Printf("failed (%d):\n", len(total.failures))
		for _, s := range total.failures {
			fmt.Println("  " + s)
		}
	}
	fmt.Printf("tests: %d passed, %d failed, %d skipped\n", total.passed, total.failed, total.skipped)
	os.Exit(code)
}
