package wasm

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/reprise-bench/reprise/engine/adapter"
)

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

// module is one instantiated wazero module, leased by one Instance at a
// time (or idle in the adapter's pool).
type module struct {
	a           *Adapter
	adapterName string
	mod         api.Module
	mem         api.Memory
	fn          exports
	stack       []uint64
	owner       *Instance // the lease holder, whose Spent grows

	ctx      context.Context
	cancelMu sync.Mutex // guards cancel against the watchdog
	cancel   context.CancelFunc
	// callStart is the start of the running call (ns since epoch), 0 when
	// idle; read by the watchdog.
	callStart atomic.Int64
	timedOut  atomic.Bool
	watched   bool

	inPtr, inCap   uint32
	outPtr, outCap uint32
	buf            []byte // host-side encoding buffer, reused

	conf       []byte // the configuration rp_configure got (or gets)
	seed       uint64
	configured bool
	rng        uint64
	calls      int
	stderr     tail
	gen        uint64 // module generation, bumped on replacement
	dead       bool
	memSize    int64 // linear memory counted in the pool's total

	msgBuf, extBuf []byte

	logWindow int64 // second (since epoch) of the log budget
	logCount  int
	logDrop   int
}

type exports struct {
	scratch, describe, configure, build, open, parse, close, gc api.Function
}

type instanceKey struct{}

// stream is the host-side state of one open context.
type stream struct {
	m               *module // the module rp_open reached; nil before
	gen             uint64  // m's generation then
	openErr         error   // rp_open failed
	flags           adapter.OpenFlags
	capture         bool
	text, reasoning []byte
	other           []byte // choices ≥ 1 (adapter.Final.Other)
}

// tail keeps the last bytes a guest wrote to stdout/stderr.
type tail struct {
	b []byte
}

const tailMax = 512

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > tailMax {
		p = p[len(p)-tailMax:]
	}
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return n, nil
}

func (t *tail) String() string { return strings.TrimSpace(string(t.b)) }

func (t *tail) Reset() { t.b = t.b[:0] }

// pool holds an adapter's modules. At most max exist at once (idle,
// leased or being instantiated), so the guests' linear memory stays within
// max × the per-instance limit, which Load keeps within
// Config.MemoryBudget. Instances lease a module per call sequence
// (Instance.lease) and wait while all max are leased.
type pool struct {
	mu     sync.Mutex
	cond   sync.Cond // signalled when a module is returned or given up
	idle   []*module
	live   int // modules that exist or are being instantiated
	max    int
	peak   int
	leases int64
	waits  int64
	closed bool

	memory, peakMemory atomic.Int64 // committed linear memory, bytes
}

// Instance is one worker goroutine's handle on an adapter. It is not safe
// for concurrent use.
//
// An Instance owns no module. Each [Instance.Build], and each response
// context from its first [Instance.Parse] (or its [Instance.Close]) to its
// Close, runs on a module leased from the adapter's pool, whose size
// [Config.MemoryBudget] bounds; when every module is leased, the call waits
// for one. rp_open reaches the guest when the context's events do (the
// engine parses Wasm adapters deferred), so a context holds a module only
// while its events are parsed, never while its response is read. After a
// trap or a deadline the module is replaced before its next call; contexts
// opened on the old module then fail with an [*AdapterError].
type Instance struct {
	a     *Adapter
	conf  []byte // rp_configure input
	seed  uint64 // run seed
	m     *module
	held  int // contexts opened on m; m returns to the pool at 0
	open  map[uint32]*stream
	free  []*stream
	spent time.Duration
}

var epoch = time.Now()
