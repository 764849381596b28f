package wasm

import (
	"errors"
)

// Errors returned by Load (inside a [*LoadError]) and by calls.
var (
	// ErrUnknownAdapter: the spec is neither a path to a file nor the name
	// of a shipped adapter.
	ErrUnknownAdapter = errors.New("unknown adapter")
	// ErrNotAdapter: the module has no reprise_abi_vN export.
	ErrNotAdapter = errors.New("not a reprise adapter (no reprise_abi_v1 export)")
	// ErrABIVersion: the module speaks another ABI version.
	ErrABIVersion = errors.New("ABI version mismatch")
	// ErrMemoryBudget: Config.MemoryBudget cannot hold one instance.
	ErrMemoryBudget = errors.New("adapter memory budget too small")
	// ErrClosed: a call after [Adapter.Close].
	ErrClosed = errors.New("adapter closed")
)

// AdapterError is a per-request adapter failure: a trap, a deadline, a
// non-OK status or malformed output. The engine records it as
// adapter_error and continues.
type AdapterError struct {
	Adapter string // adapter name
	Call    string // export, e.g. rp_parse
	Msg     string
	// Replaced is true when the instance was discarded (trap, deadline).
	Replaced bool
}

func (e *AdapterError) Error() string {
	return "adapter " + e.Adapter + ": " + e.Call + ": " + e.Msg
}

// LoadError is a module that [Load] rejected: Err says what failed
// (the file is missing, not a WebAssembly module, not an adapter, speaks
// another ABI version, lacks an export, imports something reprise does not
// provide, describes itself badly, ...).
type LoadError struct {
	Source string // the file path, the name given, or "shipped:NAME"
	Err    error
}

func (e *LoadError) Error() string { return "adapter " + e.Source + ": " + e.Reason() }

// Unwrap returns Err.
func (e *LoadError) Unwrap() error { return e.Err }

// Reason is the message without the "adapter SOURCE: " prefix, for
// callers that name the source themselves.
func (e *LoadError) Reason() string {
	if ae, ok := e.Err.(*AdapterError); ok { // a probe call: its adapter is Source
		return ae.Call + ": " + ae.Msg
	}
	return e.Err.Error()
}

// ConfigError is an adapter's rejection of its run configuration
// (rp_configure failed). [Adapter.NewInstance] returns it for the first
// instance with a configuration.
type ConfigError struct {
	Adapter string        // the adapter's name
	Err     *AdapterError // the failed rp_configure call
}

func (e *ConfigError) Error() string {
	return "adapter " + e.Adapter + " rejected its configuration (rp_configure): " + e.Err.Msg
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }
