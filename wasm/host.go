package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/reprise-bench/reprise/engine/adapter"
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

// Adapter is a compiled module and its description. It is safe for
// concurrent use; instances are not.
type Adapter struct {
	name      string // what Load was given
	source    string // file path or "shipped:NAME"
	sha       string
	desc      Description
	cfg       Config
	ctx       context.Context
	rt        wazero.Runtime
	compiled  wazero.CompiledModule
	interrupt bool
	hasGC     bool
	hasInit   bool
	imports   []string
	size      int
	log       *slog.Logger
	tokens    TokenCounter

	pool pool

	mu       sync.Mutex
	modules  []*module // for the watchdog
	accepted []byte    // a configuration rp_configure accepted
	seed     uint64    // and its seed
	stop     chan struct{}
	once     sync.Once
	closed   bool
}

// Load compiles the adapter named by spec: a path to a .wasm file, or the
// name of a shipped adapter (see [Shipped]). It validates the ABI version,
// exports and imports, then instantiates the module once to read its
// description and check the configuration. Load is slow (a Go guest
// compiles in about a second cold, tens of ms from the cache): call it
// before the run starts.
func Load(ctx context.Context, spec string, cfg Config) (*Adapter, error) {
	code, source, shipped, err := resolve(spec)
	if err != nil {
		return nil, &LoadError{Source: spec, Err: err}
	}
	return load(ctx, code, source, shipped, cfg)
}

// LoadBytes is [Load] for a module already in memory; name is used in
// messages.
func LoadBytes(ctx context.Context, name string, code []byte, cfg Config) (*Adapter, error) {
	return load(ctx, code, name, false, cfg)
}

// resolve reads spec as a file when it looks like a path, else as a
// shipped name.
func resolve(spec string) (code []byte, source string, shipped bool, err error) {
	if strings.HasSuffix(spec, ".wasm") || strings.ContainsRune(spec, os.PathSeparator) {
		code, err = os.ReadFile(spec)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", false, errors.New("no such file")
		} else if pe, ok := errors.AsType[*fs.PathError](err); ok {
			return nil, "", false, fmt.Errorf("read: %w", pe.Err)
		} else if err != nil {
			return nil, "", false, err
		}
		return code, spec, false, nil
	}
	if code, err = Shipped(spec); err != nil {
		return nil, "", false, fmt.Errorf("%w: want a .wasm file or a shipped adapter (%s)", ErrUnknownAdapter, strings.Join(ShippedNames(), ", "))
	}
	return code, "shipped:" + spec, true, nil
}

func cacheDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "reprise", "wazero"), nil
}

// load compiles code (from source; shipped if it is one of the shipped
// adapters) into an Adapter with one described probe module in its pool.
// Its error is a *LoadError.
func load(ctx context.Context, code []byte, source string, shipped bool, cfg Config) (_ *Adapter, err error) {
	defer func() {
		if err != nil {
			err = &LoadError{Source: source, Err: err}
		}
	}()
	cfg = withLoadDefaults(cfg)
	sha, perInstance, err := checkLoad(code, cfg)
	if err != nil {
		return nil, err
	}
	interrupt := cfg.Interrupt == InterruptAlways || cfg.Interrupt == InterruptAuto && !shipped
	rt := newRuntime(ctx, cfg, interrupt)
	a := &Adapter{
		name: source, source: source, sha: sha, size: len(code), cfg: cfg, ctx: context.WithoutCancel(ctx), rt: rt,
		interrupt: interrupt, log: cfg.Log, tokens: cfg.Tokenizer, stop: make(chan struct{}),
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.pool.init(int(min(cfg.MemoryBudget/perInstance, 1<<20)))
	ok := false
	defer func() {
		if !ok {
			rt.Close(ctx)
		}
	}()
	if err := a.compile(ctx, code); err != nil {
		return nil, err
	}
	in, err := a.probe(ctx)
	if err != nil {
		return nil, err
	}
	// Keep the probe, unconfigured, in the pool: instantiating a Go guest
	// costs 6-10 ms.
	if a.interrupt {
		in.watched = true
		a.watch(in)
	}
	a.pool.idle = append(a.pool.idle, in)
	a.pool.peak = 1
	ok = true
	return a, nil
}

// withLoadDefaults returns cfg with its zero memory limit, timeout and
// memory budget replaced by the defaults.
func withLoadDefaults(cfg Config) Config {
	if cfg.MemoryLimitPages == 0 {
		cfg.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MemoryBudget == 0 {
		cfg.MemoryBudget = DefaultMemoryBudget
	}
	return cfg
}

// checkLoad checks code against the pinned digest and cfg (with its
// defaults applied) for a memory budget that holds one instance and an
// adapter configuration that is a JSON object. It returns the code's
// hex SHA-256 and the bytes one instance may use.
func checkLoad(code []byte, cfg Config) (sha string, perInstance int64, err error) {
	sum := sha256.Sum256(code)
	sha = hex.EncodeToString(sum[:])
	if cfg.SHA256 != "" && !strings.EqualFold(cfg.SHA256, sha) {
		return "", 0, fmt.Errorf("sha256 %s, pinned %s", sha, cfg.SHA256)
	}
	perInstance = int64(cfg.MemoryLimitPages) << 16
	if cfg.MemoryBudget < perInstance {
		return "", 0, fmt.Errorf("%w: %d MiB is smaller than one instance's %d MiB limit", ErrMemoryBudget, cfg.MemoryBudget>>20, perInstance>>20)
	}
	if ac := bytes.TrimSpace(cfg.AdapterConfig); len(ac) > 0 && (ac[0] != '{' || !json.Valid(ac)) {
		return "", 0, fmt.Errorf("adapter configuration %s: want a JSON object", truncate(ac, 80))
	}
	return sha, perInstance, nil
}

// newRuntime returns a compiling runtime with cfg's memory limit, closing
// modules when their context ends if interrupt is set, and the
// compilation cache of cfg.CacheDir unless it is "off" or cannot be
// opened (a warning then, when cfg has a logger).
func newRuntime(ctx context.Context, cfg Config, interrupt bool) wazero.Runtime {
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(cfg.MemoryLimitPages).
		WithCloseOnContextDone(interrupt)
	if cfg.CacheDir != "off" {
		dir, err := cacheDir(cfg.CacheDir)
		if err == nil {
			cache, err := wazero.NewCompilationCacheWithDir(dir)
			if err == nil {
				rc = rc.WithCompilationCache(cache)
			} else if cfg.Log != nil {
				cfg.Log.Warn("wasm compilation cache disabled", "dir", dir, "err", err)
			}
		}
	}
	return wazero.NewRuntimeWithConfig(ctx, rc)
}

// compile compiles code in a's runtime, checks the module's imports and
// exports, and instantiates WASI and the host module beside it.
func (a *Adapter) compile(ctx context.Context, code []byte) error {
	if !bytes.HasPrefix(code, []byte("\x00asm")) {
		return errors.New(`not a WebAssembly module (the file does not start with "\0asm")`)
	}
	compiled, err := a.rt.CompileModule(ctx, code)
	if err != nil {
		return fmt.Errorf("invalid WebAssembly module: %w", err)
	}
	a.compiled = compiled
	if err := a.checkModule(); err != nil {
		return err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, a.rt); err != nil {
		return fmt.Errorf("instantiate wasi: %w", err)
	}
	return a.instantiateHost(ctx)
}

// probe instantiates the first module, has it describe the adapter, and
// checks the export set and the tokenizer against the description. It
// returns the module, still unconfigured; on an error it drops it.
func (a *Adapter) probe(ctx context.Context) (_ *module, err error) {
	a.pool.live = 1
	in, err := a.newModule(ctx, false)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			in.drop()
		}
	}()
	out, err := in.callControl("rp_describe", in.fn.describe, nil)
	if err != nil {
		return nil, err
	}
	desc, err := parseDescription(out)
	if err != nil {
		return nil, err
	}
	a.desc = desc
	a.name = desc.Name
	in.adapterName = desc.Name
	var missing []string
	if desc.Builds && in.fn.build == nil {
		missing = append(missing, "rp_build")
	}
	if desc.Parses {
		for n, f := range map[string]api.Function{"rp_open": in.fn.open, "rp_parse": in.fn.parse, "rp_close": in.fn.close} {
			if f == nil {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("rp_describe promises exports the module lacks: %s", strings.Join(missing, ", "))
	}
	if desc.NeedsTokenizer && a.cfg.Tokenizer == nil {
		return nil, fmt.Errorf("adapter %s needs a tokenizer and the run has none", desc.Name)
	}
	return in, nil
}

// requiredExports are checked on every module; role exports after describe.
var requiredExports = []string{"rp_scratch", "rp_describe", "rp_configure"}

var hostImports = map[string]bool{"log_enabled": true, "log": true, "token_count": true, "random_u64": true}

// checkModule validates version marker, exports and imports before any
// guest code runs.
func (a *Adapter) checkModule() error {
	exports := a.compiled.ExportedFunctions()
	version := -1
	for name := range exports {
		if v, ok := strings.CutPrefix(name, "reprise_abi_v"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				version = n
			}
		}
	}
	switch {
	case version == -1:
		return ErrNotAdapter
	case version != ABIVersion:
		hint := ""
		if version > ABIVersion {
			hint = "; upgrade reprise"
		} else {
			hint = "; rebuild the adapter with a current SDK"
		}
		return fmt.Errorf("%w: the adapter speaks ABI v%d, this reprise speaks ABI v%d%s", ErrABIVersion, version, ABIVersion, hint)
	}
	var errs []error
	var missing []string
	for _, n := range requiredExports {
		if _, ok := exports[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("missing required exports: %s", strings.Join(missing, ", ")))
	}
	if _, ok := a.compiled.ExportedMemories()["memory"]; !ok {
		errs = append(errs, errors.New("missing required export: memory"))
	}
	_, a.hasGC = exports["rp_gc"]
	_, a.hasInit = exports["_initialize"]
	var bad []string
	for _, f := range a.compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		a.imports = append(a.imports, mod+"."+name)
		switch {
		case mod == "reprise" && hostImports[name]:
		case mod == wasi_snapshot_preview1.ModuleName:
		default:
			bad = append(bad, mod+"."+name)
		}
	}
	for _, m := range a.compiled.ImportedMemories() {
		mod, name, _ := m.Import()
		bad = append(bad, mod+"."+name+" (memory)")
	}
	if len(bad) > 0 {
		errs = append(errs, fmt.Errorf("imports functions reprise does not provide: %s (allowed: reprise.{log_enabled,log,token_count,random_u64} and wasi_snapshot_preview1)", strings.Join(bad, ", ")))
	}
	return errors.Join(errs...)
}

// Name returns the adapter's described name.
func (a *Adapter) Name() string { return a.desc.Name }

// Source returns the file path, or "shipped:NAME" for an embedded adapter.
func (a *Adapter) Source() string { return a.source }

// SHA256 returns the module's sha256 in hex (for the run manifest).
func (a *Adapter) SHA256() string { return a.sha }

// Describe returns the module's description.
func (a *Adapter) Describe() Description { return a.desc }

var _ adapter.Adapter = (*Adapter)(nil)

// Info implements adapter.Adapter. Wasm adapters always parse deferred:
// the engine hands over a stream's events in batches after it ended, so
// guest speed never touches the read path.
func (a *Adapter) Info() adapter.Info {
	return adapter.Info{Name: a.desc.Name, Version: a.desc.Version, Path: a.desc.Path,
		Framing: framings[a.desc.Framing], Deferred: true, MaxEventsPerCall: a.desc.MaxEventsPerCall}
}

// Imports lists the functions the module imports, as module.name.
func (a *Adapter) Imports() []string { return slices.Clone(a.imports) }

// Size returns the module's size in bytes.
func (a *Adapter) Size() int { return a.size }

// Interruptible reports whether calls are interrupted at the deadline.
func (a *Adapter) Interruptible() bool { return a.interrupt }

// NewInstance implements adapter.Adapter: it returns a handle for one
// worker goroutine, configured with cfg (rp_configure), which borrows the
// adapter's pooled modules (see [Instance]). The instance is not safe for
// concurrent use. The first instance with a given configuration configures
// a module, so a rejected configuration fails here.
func (a *Adapter) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	return a.Instantiate(cfg)
}

// Instantiate is NewInstance returning the concrete type.
func (a *Adapter) Instantiate(cfg *adapter.Config) (*Instance, error) {
	conf, err := marshalConfig(cfg, a.cfg.AdapterConfig)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", a.desc.Name, err)
	}
	in := &Instance{a: a, conf: conf, seed: cfg.Seed, open: make(map[uint32]*stream)}
	a.mu.Lock()
	known := a.seed == cfg.Seed && a.accepted != nil && bytes.Equal(a.accepted, conf)
	a.mu.Unlock()
	if !known {
		if _, err := in.lease(); err != nil {
			return nil, err
		}
		in.unlease()
		a.mu.Lock()
		a.accepted, a.seed = conf, cfg.Seed
		a.mu.Unlock()
	}
	return in, nil
}

// MaxInstances returns how many modules the memory budget allows: the
// most the adapter ever holds at once.
func (a *Adapter) MaxInstances() int { return a.pool.max }

// Stats returns the adapter's module pool counters.
func (a *Adapter) Stats() PoolStats { return a.pool.stats() }

// Close releases the runtime and every module. Calls waiting for a module
// fail with [ErrClosed].
func (a *Adapter) Close(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	close(a.stop)
	a.mu.Unlock()
	for _, m := range a.pool.close() {
		m.drop()
	}
	return a.rt.Close(ctx)
}

// watch registers m with the watchdog, starting it on first use.
func (a *Adapter) watch(m *module) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.modules = append(a.modules, m)
	a.once.Do(func() { go a.watchdog() })
}

func (a *Adapter) unwatch(m *module) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := slices.Index(a.modules, m); i >= 0 {
		a.modules = slices.Delete(a.modules, i, i+1)
	}
}

// watchdog cancels calls that run past the deadline. One goroutine per
// adapter polls every Timeout/4 (at least 1 ms), so a runaway call ends
// within 1.25 × Timeout without a timer per call.
func (a *Adapter) watchdog() {
	tick := max(a.cfg.Timeout/4, time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		now := time.Since(epoch).Nanoseconds()
		a.mu.Lock()
		for _, in := range a.modules {
			// Claim the overrunning call before cancelling (see beginCall).
			if s := in.callStart.Load(); s > 0 && now-s > int64(a.cfg.Timeout) && in.callStart.CompareAndSwap(s, -1) {
				in.timedOut.Store(true)
				in.cancelMu.Lock()
				in.cancel()
				in.cancelMu.Unlock()
			}
		}
		a.mu.Unlock()
	}
}

var epoch = time.Now()
