package wasm

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// Defaults for [Config].
const (
	DefaultMemoryLimitPages = 1024 // 64 MiB of linear memory per instance
	// DefaultMemoryBudget bounds the linear memory of all of an adapter's
	// instances together: 16 instances of 64 MiB. Guest calls are
	// CPU-bound and short (parsing is deferred to the end of a response),
	// so a few instances serve many senders.
	DefaultMemoryBudget = 1 << 30
	DefaultTimeout      = time.Second
	// DefaultOutputBuffer is the output buffer every instance starts with.
	DefaultOutputBuffer = 64 << 10
)

// Interrupt selects whether calls into a module can be interrupted at
// their deadline.
type Interrupt uint8

// The interrupt policies.
const (
	// InterruptAuto interrupts modules loaded from files and trusts the
	// shipped (embedded) adapters.
	InterruptAuto Interrupt = iota
	// InterruptAlways compiles every module interruptible (1-2 µs per call).
	InterruptAlways
	// InterruptNever never interrupts: a guest that loops forever hangs
	// its worker. For modules you built and tested yourself.
	InterruptNever
)

// ParseInterrupt parses "auto", "always" or "never".
func ParseInterrupt(s string) (Interrupt, error) {
	switch s {
	case "", "auto":
		return InterruptAuto, nil
	case "always", "strict":
		return InterruptAlways, nil
	case "never", "trusted":
		return InterruptNever, nil
	}
	return 0, fmt.Errorf("adapter sandbox %q: want auto, always or never", s)
}

// TokenCounter counts tokens with the run's tokenizer
// (internal/tokenizer.Tokenizer satisfies it).
type TokenCounter interface {
	Count(text string) int
}

// Config configures [Load]. The zero value works: defaults apply to zero
// fields.
type Config struct {
	// AdapterConfig is the --adapter-config JSON object, passed to the
	// module's rp_configure as "options" (the engine's --adapter-opt
	// strings are merged over it).
	AdapterConfig json.RawMessage
	// MemoryLimitPages caps each instance's linear memory in 64 KiB pages
	// (0 = DefaultMemoryLimitPages).
	MemoryLimitPages uint32
	// MemoryBudget caps the linear memory of all instances together, in
	// bytes (0 = DefaultMemoryBudget): the adapter keeps at most
	// MemoryBudget / (MemoryLimitPages × 64 KiB) instances, and a call
	// waits while all of them are busy. It must hold one instance.
	MemoryBudget int64
	// Timeout is the wall-time limit of one call into an interruptible
	// module (0 = DefaultTimeout).
	Timeout time.Duration
	// Interrupt picks which modules are interruptible.
	Interrupt Interrupt
	// CacheDir holds wazero's compilation cache; "" = the user cache dir
	// (reprise/wazero below os.UserCacheDir), "off" = no disk cache.
	CacheDir string
	// Tokenizer backs the token_count import; nil makes it return -1.
	Tokenizer TokenCounter
	// Log receives guest log messages; nil discards them.
	Log *slog.Logger
	// SHA256, when set, pins the module: a different hash fails Load.
	SHA256 string
}
