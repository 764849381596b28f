package prio

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSetNice runs in a child process (this test binary again), since a
// nice value, once raised, stays with the test process: every thread has
// the new value, including threads the runtime starts afterwards, and a
// real-time policy the process inherited is dropped.
func TestSetNice(t *testing.T) {
	if os.Getenv("PRIO_TEST_CHILD") == "1" {
		setNiceChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSetNice$", "-test.v")
	cmd.Env = append(os.Environ(), "PRIO_TEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "threads at nice 7") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func setNiceChild(t *testing.T) {
	if err := SetNice(7); err != nil {
		t.Fatal(err)
	}
	// Threads started after SetNice: goroutines locked to their threads
	// force the runtime to start new ones.
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			<-release
		}()
	}
	defer func() { close(release); wg.Wait() }()
	if n, err := Nice(); err != nil || n != 7 {
		t.Fatalf("Nice() = %d, %v; want 7", n, err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue
		}
		if attr.Nice != 7 || attr.Policy != unix.SCHED_NORMAL {
			t.Errorf("thread %d: policy %d nice %d; want normal at 7", tid, attr.Policy, attr.Nice)
		}
	}
	t.Logf("%d threads at nice 7", len(tasks))
}

func TestCheck(t *testing.T) {
	for _, n := range []int{-21, 20, 100} {
		if err := SetNice(n); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("SetNice(%d) = %v; want out of range", n, err)
		}
	}
	for _, n := range []int{-20, 0, 19} {
		if err := Check(n); err != nil {
			t.Errorf("Check(%d) = %v", n, err)
		}
	}
}
