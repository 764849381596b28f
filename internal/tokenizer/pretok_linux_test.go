//go:build linux

package tokenizer

import (
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns a string whose first len(readable) bytes are readable
// and whose next page is not: reading past readable faults. The mapping
// lives until the test ends.
func guarded(t *testing.T, readable string) string {
	t.Helper()
	page := syscall.Getpagesize()
	pages := (len(readable)+page-1)/page + 1
	mem, err := syscall.Mmap(-1, 0, pages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	end := (pages - 1) * page
	if err := syscall.Mprotect(mem[end:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	start := end - len(readable)
	copy(mem[start:], readable)
	return unsafe.String(&mem[start], len(readable)+page)
}

// TestSplitterReadsOnlyItsMatch: on a run of digits, the pre-token
// matchers whose patterns take at most N digits read no further than
// those N. They used to scan the whole run for every pre-token, which made
// a response of one long number quadratic (256 KiB of digits: 14 s).
func TestSplitterReadsOnlyItsMatch(t *testing.T) {
	run := strings.Repeat("7", 3*1024)
	for _, c := range []struct {
		name string
		sp   splitter
		n    int // digits per pre-token
	}{
		{"o200k", asciiO200k{}, 3},
		{"cl100k", asciiCL100k{maxDigits: 3}, 3},
		{"qwen2", asciiCL100k{maxDigits: 1}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Per goroutine: a fault becomes a panic recover sees.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			s := guarded(t, run)
			for _, i := range []int{0, len(run) / 2, len(run) - c.n} {
				func() {
					defer func() {
						if recover() != nil {
							t.Errorf("next(s, %d) read past the %d digits it matches, to the end of the run", i, c.n)
						}
					}()
					if got := c.sp.next(s, i); got != i+c.n {
						t.Errorf("next(s, %d) = %d, want %d", i, got, i+c.n)
					}
				}()
			}
		})
	}
}
