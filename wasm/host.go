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

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/reprise-bench/reprise/engine/adapter"
)

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
