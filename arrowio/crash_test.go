package arrowio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
)

const crashEnv = "ARROWIO_CRASH_CHILD_DIR"

// crashCfg is the child's config: small parts so several complete quickly.
var crashCfg = Config{RowGroupRows: 256, PartRows: 512}

// TestCrashChild is the child process of TestCrashSafety: it writes
// requests forever until it is killed. It does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("child process of TestCrashSafety")
	}
	w, err := NewRunWriter(dir, crashCfg)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := genRequests(1000, 21)
	for id := uint64(0); ; {
		batch := make([]record.Request, 100)
		for i := range batch {
			batch[i] = tmpl[id%uint64(len(tmpl))]
			batch[i].RequestID = id
			id++
		}
		if err := w.WriteRequests(batch); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashSafety kills (SIGKILL) a process in the middle of writing and
// checks that every complete part it left is a valid file with exactly the
// rows written to it, in order, and that only the part being written is
// lost (as a ".tmp" file that readers skip).
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for at least 5 complete parts, then kill -9.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		files, _ := TableFiles(dir, RecordsTable)
		if len(files) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("child wrote %d complete parts in 2 minutes", len(files))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child exit: %v, want killed", err)
	}

	files, err := TableFiles(dir, RecordsTable)
	if err != nil {
		t.Fatal(err)
	}
	// Every complete part holds PartRows rows with consecutive ids.
	tmpl := genRequests(1000, 21)
	next := uint64(0)
	for i, f := range files {
		if want := filepath.Join(dir, RecordsTable, partName(i, FormatParquet)); f != want {
			t.Fatalf("part %d is %s, want %s (no gaps)", i, f, want)
		}
		var got []record.Request
		err := ReadFile(f, func(rec arrow.Record) error {
			var err error
			got, err = appendRequests(got, rec)
			return err
		})
		if err != nil {
			t.Fatalf("complete part %s is not readable: %v", f, err)
		}
		if len(got) != crashCfg.PartRows {
			t.Errorf("%s: %d rows, want %d", f, len(got), crashCfg.PartRows)
		}
		for j := range got {
			want := tmpl[next%uint64(len(tmpl))]
			want.RequestID = next
			if diff := cmp.Diff(want, got[j]); diff != "" {
				t.Fatalf("%s row %d (-want +got):\n%s", f, j, diff)
			}
			next++
		}
	}
	// The part in progress is a .tmp file (or, if the kill hit between
	// parts, absent); the reader saw only complete parts.
	all, err := ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(all)) != next {
		t.Errorf("ReadRequests = %d rows, complete parts hold %d", len(all), next)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, RecordsTable))
	var tmp int
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), tmpSuffix) {
			tmp++
		}
	}
	if tmp > 1 {
		t.Errorf("%d .tmp files, want at most 1", tmp)
	}
	t.Logf("killed after %d complete parts (%d rows); %d part in progress lost", len(files), next, tmp)
}

const durabilityEnv = "ARROWIO_DURABILITY_CHILD"

// TestDurabilityChild is the child process of TestDurabilityKill9: with the
// default durability settings (and the format in durabilityEnv,
// "dir:format") it hands
// the writer 50 requests every 20 ms, each stamped with the wall-clock time
// of the hand-over in EndNS and numbered from 0, until it is killed. It does
// nothing in a normal run.
func TestDurabilityChild(t *testing.T) {
	dir, format, ok := strings.Cut(os.Getenv(durabilityEnv), ":")
	if !ok {
		t.Skip("child process of TestDurabilityKill9")
	}
	// A queue of one batch: a hand-over waits for the writer, so the
	// rows' stamps are when the writer took them (on a loaded machine a
	// long queue would make the test measure the writer's lag instead).
	w, err := NewRunWriter(dir, Config{Format: Format(format)})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := genRequests(1000, 5)
	for id := uint64(0); ; {
		batch := make([]record.Request, 50)
		now := time.Now().UnixNano()
		for i := range batch {
			batch[i] = tmpl[id%uint64(len(tmpl))]
			batch[i].RequestID = id
			batch[i].EndNS = now
			id++
		}
		if err := w.WriteRequests(batch); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDurabilityKill9 checks the writer's durability promise with the
// defaults: a row is readable from disk within DefaultPartInterval of
// being handed over. A child process writes rows, stamped with the time it
// handed them over, for two intervals and a bit; it is killed with SIGKILL;
// then every row handed over more than DefaultPartInterval (plus a margin
// for a loaded machine) before the kill must be in the files the reader
// finds, and the rows found are exactly the first n, in order.
func TestDurabilityKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two child processes for 12 s")
	}
	const margin = 2 * time.Second
	for _, f := range []Format{FormatParquet, FormatJSONL} {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), durabilityEnv+"="+dir+":"+string(f))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2*DefaultPartInterval + 2*time.Second)
			killed := time.Now()
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("child exit: %v, want killed", err)
			}
			got, err := ReadRequests(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i].RequestID != uint64(i) {
					t.Fatalf("row %d has request_id %d: rows are missing or out of order", i, got[i].RequestID)
				}
			}
			// The child hands over 50 rows per batch: the first batch the
			// files lack was handed over at its rows' EndNS, which the last
			// row read tells within one batch; the missing rows must all be
			// younger than the promise.
			if len(got) == 0 {
				t.Fatalf("no row on disk %v after the first was handed over", 2*DefaultPartInterval+2*time.Second)
			}
			last := time.Unix(0, got[len(got)-1].EndNS)
			if lost := killed.Sub(last); lost > DefaultPartInterval+margin {
				t.Errorf("the newest row on disk was handed over %v before the kill: rows older than %v (+%v margin) were lost",
					lost.Round(time.Millisecond), DefaultPartInterval, margin)
			}
			t.Logf("%s: %d rows on disk; the newest was handed over %v before kill -9", f, len(got), killed.Sub(last).Round(time.Millisecond))
		})
	}
}
