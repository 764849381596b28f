package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTally reads a go test -json stream of four tests (one passed, one
// skipped after logging, a subtest skipped under a passing parent, one
// failed) and checks the counts and the skip reasons.
func TestTally(t *testing.T) {
	f, err := os.Open("testdata/mixed.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := tally(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.passed != 2 || c.failed != 1 || c.skipped != 2 {
		t.Errorf("passed %d, failed %d, skipped %d; want 2, 1, 2", c.passed, c.failed, c.skipped)
	}
	want := []string{"example.com/tj TestB: SKIP: no toolchain", "example.com/tj TestC/sub: needs X"}
	if diff := cmp.Diff(want, c.skips); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
	// The package's own fail event follows its failed test: one failure.
	if diff := cmp.Diff([]string{"example.com/tj TestD"}, c.failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

// TestTallyBuildFailure counts a package that failed without a failed
// test (it did not build) as a failure.
func TestTallyBuildFailure(t *testing.T) {
	in := "# example.com/x\nx.go:1: syntax error\n" +
		`{"Action":"start","Package":"example.com/x"}` + "\n" +
		`{"Action":"output","Package":"example.com/x","Output":"FAIL\texample.com/x [build failed]\n"}` + "\n" +
		`{"Action":"fail","Package":"example.com/x"}` + "\n"
	c, err := tally(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"example.com/x (package)"}, c.failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}
