package engine

// The Sender's state: its struct and the types of its fields that hold
// one response's handling (tokens.go's records and rows, h1.go's
// handler).

import (
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/engine/record"
)

// Sender sends requests one at a time with its own adapter instance and
// buffers. It is not safe for concurrent use: each long-lived sender
// goroutine owns one.
type Sender struct {
	e      *Engine
	inst   adapter.Instance
	buf    []byte // HTTP/2's read buffer (the h1 Caller has its own)
	framer sseFramer
	recs   []adapter.Record
	batch  adapter.Batch
	fin    adapter.Final
	ctxID  uint32

	// Per-response event table (index = event index).
	evTime  []int64
	evBytes []int32
	evRead  []int32 // events completed by the read that completed it
	evKind  []record.EventKind
	// Client token counting and exported rows (tokens.go): the
	// text-captured records, each event's first row's choice, kind and
	// tokens (grown as records arrive, with Config.Events), the rows of
	// further choices, and scratch space.
	texts     []textRec
	evChoice  []int32
	evRowKind []record.EventKind
	evTokens  []int32
	xrows     []xrow
	order     []int32
	seg       []byte
	ids       []int
	// Deferred parsing keeps every event's bytes until the end.
	defArena []byte
	defRefs  []frameRef

	// Events of the last request (when Config.Events), owned by the sender
	// until the next Do.
	events []record.Event

	// Body consumption (beginBody … endBody).
	stream    bool
	parseErr  error // also a cap's *limitError: reading stops either way
	over      bool  // the response went over a cap (parseErr says which)
	bodyBytes int64
	adapterT  int64
	whole     []byte // a non-streaming body
	// deadline is when --timeout ends the request being read (HTTP/1.1;
	// zero: none, or HTTP/2, whose ctx carries it).
	deadline time.Time

	// reprise's HTTP/1.1 client (h1.go): this sender's caller, the
	// request and its stamps, the response handler, the request head
	// buffer and a non-2xx body. Fields, so that Do allocates none of
	// them.
	call    *h1.Caller
	req     h1.Request
	st      h1.Stamps
	rsp     h1Handler
	head    []byte
	errBody []byte
	// errType is the Content-Type of the non-2xx response being read.
	errType string

	// cancel is the planned cancellation of the request being sent (nil
	// when none).
	cancel *cancelPlan

	// jb renders the follow-up requests of a job (job.go), lazily.
	jb *Builder
	// firstTok is told of the first token of the request being read
	// (NotifyFirstToken); nil once told, or when none was given.
	firstTok FirstTokenNotifier

	// pt is the httptrace state of the current attempt (HTTP/2). net/http may run
	// a dial started for one attempt after that attempt ended (and hand
	// the connection to another), so every attempt gets a fresh one and
	// its fields are atomics.
	pt *phaseTrace
}

// textRec is one text-captured record of the current response: choice,
// kind and length of its text, where that text sits in the adapter's
// Final (Text, Reasoning or Other, see [adapter.Final]), and the client
// tokens given to it.
type textRec struct {
	ev     int32
	choice uint16
	reason bool
	bytes  uint32
	off    uint32
	tokens int32
}

// xrow is an exported event row of a choice other than the event's first
// (an event carrying several choices has one row per choice).
type xrow struct {
	ev     int32
	choice int32
	kind   record.EventKind
	tokens int32
}

// h1Handler consumes an HTTP/1.1 response for its sender (h1.Handler):
// a 2xx body is framed, stamped and parsed as it arrives (beginBody,
// feedBody), another status's body is kept for the error message.
type h1Handler struct {
	s *Sender
	p *Prepared
	r *record.Request
	// What Header saw: headers arrived (head), a 2xx body is being
	// consumed (began), a non-2xx body is being collected (errBody) with
	// its status.
	head, began, errBody bool
	status               int
	// limit is the body cap a non-2xx body went over.
	limit error
}

// FirstTokenNotifier is told once when a streamed response's first
// token arrived ([replay.Job] is one: its prefill slot is then freed).
type FirstTokenNotifier interface {
	FirstToken()
}
