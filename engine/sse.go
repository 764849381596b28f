package engine

// Hot path: SSE framing of response reads. Allocation budget:
// TestSSEAllocs (0 per read once buffers have grown).

import (
	"bytes"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// sseFramer cuts a text/event-stream body into events, following the
// WHATWG rules: lines end at CRLF, LF or CR; a blank line ends an event;
// "data" lines are joined with "\n"; one space after the colon is dropped;
// lines starting with ":" are comments. Events with only comment lines are
// reported as comment events (keep-alives), events with neither data nor
// comments are dropped. A line, or an event's joined data or comment
// lines, longer than max bytes stops it: over is set and feed returns
// without going on. It is not safe for concurrent use.
type sseFramer struct {
	max     int    // bytes of one line or event; set before reset
	over    bool   // a line or event went over max
	line    []byte // partial line carried across reads
	data    []byte // data of the event being assembled
	name    []byte
	comment []byte
	hasData bool
	hasCmt  bool
	lastCR  bool // the previous read ended with CR: skip a leading LF

	// Completed events of the current feed, their bytes in arena.
	arena  []byte
	events []frameRef
}

// frameRef locates one completed event in the arena.
type frameRef struct {
	nameOff, nameLen int32
	dataOff, dataLen int32
	flags            adapter.EventFlags
}

func (f *sseFramer) reset() {
	f.line = f.line[:0]
	f.data = f.data[:0]
	f.name = f.name[:0]
	f.comment = f.comment[:0]
	f.hasData, f.hasCmt, f.lastCR, f.over = false, false, false, false
	f.arena = f.arena[:0]
	f.events = f.events[:0]
}

// clearCompleted forgets the completed events (after they were parsed).
func (f *sseFramer) clearCompleted() {
	f.arena = f.arena[:0]
	f.events = f.events[:0]
}

// feed frames the bytes of one read and returns how many events it
// completed. It does nothing once over is set.
func (f *sseFramer) feed(p []byte) int {
	before := len(f.events)
	if f.lastCR && len(p) > 0 && p[0] == '\n' {
		p = p[1:]
	}
	f.lastCR = false
	for len(p) > 0 && !f.over {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		// A CR inside the segment ends the line earlier.
		if j := bytes.IndexByte(seg, '\r'); j >= 0 {
			f.endLine(p[:j])
			if j+1 < len(p) {
				if p[j+1] == '\n' {
					p = p[j+2:]
				} else {
					p = p[j+1:]
				}
			} else {
				f.lastCR = true
				p = p[:0]
			}
			continue
		}
		if i < 0 {
			f.carry(p)
			break
		}
		f.endLine(seg)
		p = p[i+1:]
	}
	return len(f.events) - before
}

// carry keeps the start of a line that the next read goes on with, unless
// the line is then over max.
func (f *sseFramer) carry(p []byte) {
	if len(f.line)+len(p) > f.max {
		f.over = true
		return
	}
	f.line = append(f.line, p...)
}

// endLine processes one complete line (seg, plus any carried prefix).
func (f *sseFramer) endLine(seg []byte) {
	line := seg
	if len(f.line) > 0 {
		if f.carry(seg); f.over {
			return
		}
		line = f.line
	} else if len(seg) > f.max {
		f.over = true
		return
	}
	f.processLine(line)
	f.line = f.line[:0]
}

func (f *sseFramer) processLine(line []byte) {
	if len(line) == 0 {
		f.dispatch()
		return
	}
	if line[0] == ':' {
		if n := len(line) - 1 + joined(f.hasCmt, f.comment); n > f.max {
			f.over = true
			return
		}
		if f.hasCmt {
			f.comment = append(f.comment, '\n')
		}
		f.comment = append(f.comment, line[1:]...)
		f.hasCmt = true
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if n := len(value) + joined(f.hasData, f.data); n > f.max {
			f.over = true
			return
		}
		if f.hasData {
			f.data = append(f.data, '\n')
		}
		f.data = append(f.data, value...)
		f.hasData = true
	case "event":
		f.name = append(f.name[:0], value...)
	}
	// id, retry and unknown fields are ignored.
}

// joined is how many bytes a line's value adds to has's lines b before
// it: b and the "\n" between them.
func joined(has bool, b []byte) int {
	if has {
		return len(b) + 1
	}
	return 0
}

// dispatch completes the event being assembled, if any.
func (f *sseFramer) dispatch() {
	switch {
	case f.hasData:
		var flags adapter.EventFlags
		if string(f.data) == "[DONE]" {
			flags = adapter.EventDone
		}
		f.push(f.name, f.data, flags)
	case f.hasCmt:
		f.push(nil, f.comment, adapter.EventComment)
	}
	f.data = f.data[:0]
	f.name = f.name[:0]
	f.comment = f.comment[:0]
	f.hasData, f.hasCmt = false, false
}

// flush completes a trailing event not followed by a blank line (a body
// that ended without the final blank line). It reports whether it did.
func (f *sseFramer) flush() bool {
	if len(f.line) > 0 {
		f.processLine(f.line)
		f.line = f.line[:0]
	}
	n := len(f.events)
	f.dispatch()
	return len(f.events) > n
}

func (f *sseFramer) push(name, data []byte, flags adapter.EventFlags) {
	r := frameRef{nameOff: int32(len(f.arena)), nameLen: int32(len(name))}
	f.arena = append(f.arena, name...)
	r.dataOff = int32(len(f.arena))
	r.dataLen = int32(len(data))
	f.arena = append(f.arena, data...)
	r.flags = flags
	f.events = append(f.events, r)
}

// event returns completed event i as an adapter.Event referencing the arena.
func (f *sseFramer) event(i int) adapter.Event {
	r := f.events[i]
	return adapter.Event{
		Name:  f.arena[r.nameOff : r.nameOff+r.nameLen : r.nameOff+r.nameLen],
		Data:  f.arena[r.dataOff : r.dataOff+r.dataLen : r.dataOff+r.dataLen],
		Flags: r.flags,
	}
}
