// Package wasm runs endpoint adapters: sandboxed WebAssembly modules that
// build requests for, and classify the response events of, servers reprise
// does not speak natively (Anthropic Messages, HF TGI, KServe generate, ...).
// The guest ABI is specified in docs/format/adapter-abi.md (version 1).
//
// [Load] compiles a module once per run (with wazero's on-disk compilation
// cache), checks its ABI version, imports and exports, and calls its
// describe export. [Adapter.NewInstance] gives each worker goroutine an
// [Instance], which is reused for every request that worker handles and is
// not safe for concurrent use.
//
// # Memory
//
// Instances do not own a module. The adapter keeps a pool of at most
// [Config.MemoryBudget] / (64 KiB × [Config.MemoryLimitPages]) modules (16
// by default), each configured with the run's configuration; an Instance
// leases one for each Build, and for each response context from its first
// Parse (or its Close) to its Close, and waits while every module is
// leased. So the guests' linear memory stays within the budget whatever
// the number of workers. [Adapter.Stats] reports the pool's counters.
//
// # Failure model
//
// A trap, a call past its deadline, a non-OK status or output that breaks
// the ABI fails only the request being served: the method returns an
// [*AdapterError] (which the engine records as adapter_error) and, after a
// trap or a deadline, the instance replaces its wazero module before the
// next call. Loading errors (not a module, wrong ABI version, missing
// exports, unknown imports) are [*LoadError]s returned by Load, and a
// configuration the module rejects is a [*ConfigError] returned by the
// first NewInstance with it, both before anything is sent.
//
// # Deadlines
//
// wazero can only interrupt a running guest when the runtime is compiled
// with CloseOnContextDone, which costs 1-2 µs per call and slows guest loops
// several times (docs/reference/platform.md §5). Modules loaded from files are
// untrusted and run interruptible by default, with one watchdog goroutine
// per adapter cancelling a call that exceeds [Config.Timeout] (no timer or
// context is allocated per call). Shipped adapters, which are tested here,
// run without the flag. [Config.Interrupt] overrides either choice.
//
// # Performance considerations
//
// Calls use [api.Function.CallWithStack] with stacks reused per instance,
// inputs are written into guest-owned scratch buffers, and outputs are
// decoded from fixed little-endian structs; the parse path allocates
// nothing per event. Host functions are [api.GoModuleFunc]s.
package wasm
