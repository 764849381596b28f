package wasm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
)

// TestMemoryBudget runs many workers at once against the hostile
// allocating guest, each with its own Instance as the engine gives one to
// every sender: every bad request grows the guest's memory to its limit
// and traps. However many workers there are, the adapter never holds more
// modules than the budget allows, and the guests' committed linear memory
// stays within the budget.
func TestMemoryBudget(t *testing.T) {
	const (
		pages   = 256         // 16 MiB per module: alloc.wat grows by 64 pages, to 194 pages
		perMod  = pages << 16 // bytes
		budget  = 3 * perMod  // three modules
		workers = 24
		rounds  = 3
	)
	a, err := wasm.Load(context.Background(), hostile("alloc"), wasm.Config{
		MemoryLimitPages: pages, MemoryBudget: budget, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if got := a.MaxInstances(); got != 3 {
		t.Fatalf("MaxInstances() = %d, want 3 (budget %d / %d per module)", got, budget, perMod)
	}
	var ins []*wasm.Instance
	for range workers {
		in, err := a.Instantiate(&adapter.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Release()
		ins = append(ins, in)
	}
	run := func(in *wasm.Instance, ctx uint32, data string) error {
		if err := in.Open(ctx, adapter.OpenStream); err != nil {
			return err
		}
		_, perr := in.Parse(ctx, &adapter.Batch{Events: []adapter.Event{{Data: []byte(data)}}, Flags: adapter.BatchEndOfStream}, nil)
		var fin adapter.Final
		cerr := in.Close(ctx, &fin)
		return errors.Join(perr, cerr)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, workers*rounds*2)
	for _, in := range ins {
		wg.Go(func() {
			<-start
			for r := range rounds {
				err := run(in, uint32(2*r+1), "!grow")
				if ae, ok := errors.AsType[*wasm.AdapterError](err); !ok || !strings.Contains(ae.Error(), "trap: ") {
					errs <- err
				}
				if err := run(in, uint32(2*r+2), `{"ok":true}`); err != nil {
					errs <- err
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request: %v", err)
	}
	st := a.Stats()
	t.Logf("%+v", st)
	if st.PeakInstances > st.MaxInstances || st.MaxInstances != 3 {
		t.Errorf("peak %d modules, max %d: want at most 3", st.PeakInstances, st.MaxInstances)
	}
	if st.PeakMemory > budget {
		t.Errorf("peak guest memory %d bytes, over the %d-byte budget", st.PeakMemory, budget)
	}
	// The guests did allocate: one grown module alone is over 12 MiB.
	if st.PeakMemory < 194<<16 {
		t.Errorf("peak guest memory %d bytes: the allocating guest never grew (the test tests nothing)", st.PeakMemory)
	}
	if st.Instances > st.MaxInstances || st.Memory > budget {
		t.Errorf("after the run: %d modules, %d bytes", st.Instances, st.Memory)
	}
	if st.Leased != 0 {
		t.Errorf("%d modules still leased after every context closed", st.Leased)
	}
}

// TestPoolSharesOneModule checks that workers share a budget of one module:
// one Instance holds it across several open contexts, the others wait, and
// everything completes (no deadlock).
func TestPoolSharesOneModule(t *testing.T) {
	a, err := wasm.Load(context.Background(), hostile("ok"), wasm.Config{MemoryBudget: wasm.DefaultMemoryLimitPages << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		in, err := a.Instantiate(&adapter.Config{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Release()
		wg.Go(func() {
			for range 20 {
				// Two contexts open at once on one instance.
				for _, c := range []uint32{1, 2} {
					if err := in.Open(c, adapter.OpenStream); err != nil {
						errs <- err
						return
					}
				}
				for _, c := range []uint32{2, 1} {
					if _, err := in.Parse(c, &adapter.Batch{Events: []adapter.Event{{Data: []byte("{}")}}}, nil); err != nil {
						errs <- err
						return
					}
				}
				var fin adapter.Final
				for _, c := range []uint32{1, 2} {
					if err := in.Close(c, &fin); err != nil {
						errs <- err
						return
					}
				}
				var r adapter.HTTPRequest
				if err := in.Build(&adapter.BuildInput{Seed: uint64(w)}, &r); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := a.Stats(); st.PeakInstances != 1 || st.Leased != 0 {
		t.Errorf("stats %+v: want one module, returned", st)
	}
}
