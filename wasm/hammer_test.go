package wasm_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
)

// TestHammerInstances runs P goroutines, each with its own instance of an
// interruptible adapter (so the watchdog scans them concurrently), parsing
// N streams each, released together; under -race this checks that
// instances share nothing unsynchronised.
func TestHammerInstances(t *testing.T) {
	const P, N = 4, 50
	a, err := wasm.Load(context.Background(), filepath.Join("adapters", "tgi-generate.wasm"),
		wasm.Config{Interrupt: wasm.InterruptAlways, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	events := workloads()[3].events
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, P)
	for p := range P {
		in, err := a.Instantiate(&adapter.Config{Seed: uint64(p)})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Release()
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s := newScratch(events)
			for range N {
				if err := parseStream(in, s); err != nil {
					errs <- err
					return
				}
				if len(s.recs) != benchEvents {
					errs <- err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
