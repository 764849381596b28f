package wasm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// Recording is a recorded HTTP response: the .http fixture format (status
// line and headers verbatim, a blank line, then the de-chunked body) or a
// raw SSE body.
type Recording struct {
	Status      int
	ContentType string
	Body        []byte
}

// Stream reports whether the body is an event stream.
func (r *Recording) Stream() bool {
	return strings.HasPrefix(strings.ToLower(r.ContentType), "text/event-stream")
}

// ReadRecording reads a recorded response. A file that starts with
// "HTTP/" is an .http fixture; anything else is taken as a raw 200
// text/event-stream body.
func ReadRecording(path string) (*Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rec, err := ParseRecording(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// ParseRecording parses the contents of a recording (see [ReadRecording]).
func ParseRecording(b []byte) (*Recording, error) {
	if !bytes.HasPrefix(b, []byte("HTTP/")) {
		return &Recording{Status: 200, ContentType: "text/event-stream", Body: b}, nil
	}
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	if !ok {
		return nil, errors.New("line 1: HTTP recording without the blank line (CRLF CRLF) that ends the headers")
	}
	lines := strings.Split(string(head), "\r\n")
	f := strings.Fields(lines[0])
	if len(f) < 2 {
		return nil, fmt.Errorf("line 1: status line %q: want HTTP/1.1 CODE REASON", lines[0])
	}
	status, err := strconv.Atoi(f[1])
	if err != nil || status < 100 || status > 999 {
		return nil, fmt.Errorf("line 1: status code %q: want a 3-digit number", f[1])
	}
	r := &Recording{Status: status, Body: body}
	for _, l := range lines[1:] {
		name, val, _ := strings.Cut(l, ":")
		if strings.EqualFold(strings.TrimSpace(name), "Content-Type") {
			r.ContentType = strings.TrimSpace(val)
		}
	}
	return r, nil
}

// Events frames the recording the way the engine does: SSE events (with
// comment blocks and the [DONE] sentinel flagged) for a 2xx event stream,
// NDJSON lines for framing ndjson, else one whole-body event (flagged
// non-OK for a non-2xx status). It returns the events, the batch flags and
// the open flags for the response.
func (r *Recording) Events(framing adapter.Framing) ([]adapter.Event, adapter.BatchFlags, adapter.OpenFlags) {
	ok := r.Status >= 200 && r.Status < 300
	switch {
	case !ok:
		return []adapter.Event{{Data: r.Body, Flags: adapter.EventWholeBody | adapter.EventNonOK}},
			adapter.BatchWholeBody | adapter.BatchEndOfStream, 0
	case framing == adapter.FramingNDJSON && (r.Stream() || strings.Contains(r.ContentType, "ndjson")):
		var evs []adapter.Event
		for _, l := range bytes.Split(r.Body, []byte("\n")) {
			if l = bytes.TrimRight(l, "\r"); len(l) > 0 {
				evs = append(evs, adapter.Event{Data: l})
			}
		}
		return evs, adapter.BatchEndOfStream, adapter.OpenStream
	case r.Stream():
		return FrameSSE(r.Body), adapter.BatchEndOfStream, adapter.OpenStream
	}
	return []adapter.Event{{Data: r.Body, Flags: adapter.EventWholeBody}}, adapter.BatchWholeBody | adapter.BatchEndOfStream, 0
}

// FrameSSE splits an event-stream body into events (WHATWG rules: data
// lines joined with "\n", "event:" names, comment blocks as EventComment,
// a trailing event without its blank line completed at the end).
func FrameSSE(body []byte) []adapter.Event {
	var (
		evs           []adapter.Event
		name, data    []byte
		cmt           []byte
		hasData, hasC bool
	)
	dispatch := func() {
		switch {
		case hasData:
			var fl adapter.EventFlags
			if string(data) == "[DONE]" {
				fl = adapter.EventDone
			}
			evs = append(evs, adapter.Event{Name: bytes.Clone(name), Data: bytes.Clone(data), Flags: fl})
		case hasC:
			evs = append(evs, adapter.Event{Data: bytes.Clone(cmt), Flags: adapter.EventComment})
		}
		name, data, cmt = name[:0], data[:0], cmt[:0]
		hasData, hasC = false, false
	}
	for len(body) > 0 {
		var line []byte
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			line, body = body, nil
		} else {
			line = body[:i]
			if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			body = body[i+1:]
		}
		switch {
		case len(line) == 0:
			dispatch()
		case line[0] == ':':
			if hasC {
				cmt = append(cmt, '\n')
			}
			cmt = append(cmt, line[1:]...)
			hasC = true
		default:
			field, value := line, []byte(nil)
			if j := bytes.IndexByte(line, ':'); j >= 0 {
				field, value = line[:j], line[j+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
			}
			switch string(field) {
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data = append(data, value...)
				hasData = true
			case "event":
				name = append(name[:0], value...)
			}
		}
	}
	dispatch()
	return evs
}

// Classified is the outcome of running one recording through an adapter.
type Classified struct {
	Events  []adapter.Event
	Records []adapter.Record
	Final   adapter.Final
}

// Classify runs one recording through an instance, the way the engine
// does at the end of a stream (open, parse in batches, close), with text
// capture on. A parse error still closes the context and is returned.
func Classify(in adapter.Instance, ctx uint32, rec *Recording, framing adapter.Framing, batch int) (*Classified, error) {
	evs, bflags, oflags := rec.Events(framing)
	c := &Classified{Events: evs}
	if err := in.Open(ctx, oflags|adapter.OpenCaptureText); err != nil {
		return c, err
	}
	if batch <= 0 {
		batch = len(evs)
	}
	var perr error
	for i := 0; i < len(evs) && perr == nil; i += batch {
		j := min(i+batch, len(evs))
		b := adapter.Batch{First: uint32(i), Events: evs[i:j], Flags: bflags}
		if j < len(evs) {
			b.Flags &^= adapter.BatchEndOfStream
		}
		c.Records, perr = in.Parse(ctx, &b, c.Records)
	}
	var fin adapter.Final
	cerr := in.Close(ctx, &fin)
	c.Final = fin
	c.Final.Text = bytes.Clone(fin.Text)
	c.Final.Reasoning = bytes.Clone(fin.Reasoning)
	c.Final.ErrorMessage = bytes.Clone(fin.ErrorMessage)
	c.Final.Extras = bytes.Clone(fin.Extras)
	return c, errors.Join(perr, cerr)
}
