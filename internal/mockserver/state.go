// The server's state and each request's pooled working memory.

package mockserver

import (
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running mock server. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	ln      net.Listener
	srv     *http.Server
	url     string
	start   time.Time // carries the monotonic reading all times derive from
	startNS int64     // start as Unix ns

	seq     atomic.Uint64
	running atomic.Int64
	adm     *admission
	cache   *prefixCache
	met     *metrics
	oracle  *oracle
	ctl     controls
	tok     Tokenizer
	timing  timing
	states  sync.Pool
	jobs    jobs // video jobs (jobs.go)
	log     *slog.Logger

	mu       sync.Mutex // guards closing, inflight, idle and wg.Add
	closing  bool
	inflight int
	idle     chan struct{}  // closed while inflight == 0
	wg       sync.WaitGroup // in-flight completion handlers
	done     chan struct{}  // closed by Close
	served   chan error     // the result of http.Server.Serve
	closeMu  sync.Once
	closeEr  error
}

// mono returns the monotonic time since start in ns.
func (s *Server) mono() int64 { return int64(time.Since(s.start)) }

// wall converts a mono time to Unix ns.
func (s *Server) wall(mono int64) int64 { return s.startNS + mono }

// reqState is the pooled per-request working memory.
type reqState struct {
	body        []byte
	ids         []int
	buf         []byte
	lens        []int
	finish      []string
	rd          renderer
	timer       *time.Timer
	pcg         rand.PCG
	rng         *rand.Rand
	log         RequestLog
	faults      faultSet
	prev        []time.Duration // per choice: schedule offset of the previous token
	choices     []choiceText
	headersSent bool
	h2          bool   // HTTP/2 (h2c): no hijacking
	pending     []byte // coalesced events not yet written
	stamped     int    // log.Events before this index have their write time
	due         int64  // mono deadline of the events being written; 0 = as soon as possible
	writeStart  int64  // mono time the write being recorded began; 0 = no write
	raw         rawSink
	hs          httpSink
}

func newReqState() *reqState {
	st := &reqState{buf: make([]byte, 0, 1024), body: make([]byte, 0, 1024)}
	st.rng = rand.New(&st.pcg)
	return st
}

type runInfo struct {
	req                              *request
	chat, llama                      bool
	model                            string
	created                          int64
	prompt, cached, reasoning, total int
	admitted                         int64
	first                            time.Duration
}
