package h1

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// decoder decodes one HTTP/1.1 response as its bytes arrive, in place:
// [decoder.decode] strips the status line, headers and chunk framing
// from a read and moves the body bytes to the front of the same buffer, so
// the sender stamps, frames and parses a read's body without a copy or a
// second buffer (see the package doc for why reprise has its own HTTP/1.1 client).
//
// It understands what servers send a POST: 1xx interim responses
// (skipped), Content-Length, chunked transfer coding (extensions and
// trailers ignored), and bodies delimited by the connection's close. Limits:
// maxHeaderBytes of status line and headers, maxChunkLine per chunk-size
// line. It is not safe for concurrent use; reset it between responses.
type decoder struct {
	state h1State
	// hdr accumulates the status line and headers until the blank line;
	// line accumulates a chunk-size line or trailer line split by reads.
	hdr  []byte
	line []byte

	// The final response's status line and the headers reprise uses.
	status      int
	minor       int // HTTP/1.<minor>
	contentType []byte
	closing     bool // Connection: close, or HTTP/1.0 without keep-alive
	framing     h1Framing
	remain      int64 // body bytes left (length framing, or the current chunk)
}

type h1State uint8

const (
	h1Head       h1State = iota // status line and headers
	h1Body                      // Content-Length bytes
	h1ChunkSize                 // a chunk-size line
	h1ChunkData                 // chunk data
	h1ChunkCRLF                 // the CRLF after chunk data
	h1Trailer                   // trailer lines until the blank one
	h1UntilClose                // everything until EOF
	h1Done                      // the response is complete
)

type h1Framing uint8

const (
	frameNone h1Framing = iota // no body (204, 304)
	frameLength
	frameChunked
	frameClose
)

const (
	maxHeaderBytes = 1 << 20
	maxChunkLine   = 4 << 10
)

// reset readies d for the next response, keeping its buffers.
func (d *decoder) reset() {
	*d = decoder{hdr: d.hdr[:0], line: d.line[:0], contentType: d.contentType[:0]}
}

// headersDone reports whether the final response's headers are complete.
func (d *decoder) headersDone() bool { return d.state != h1Head }

// done reports whether the response is complete (and nothing may follow
// it but the next response).
func (d *decoder) done() bool { return d.state == h1Done }

// reusable reports whether the connection can carry another request after
// this complete response.
func (d *decoder) reusable() bool {
	return d.state == h1Done && !d.closing && d.framing != frameClose
}

// eof tells the decoder the connection closed. It returns nil when that
// ends the response (a body delimited by the close), else the error.
func (d *decoder) eof() error {
	switch d.state {
	case h1UntilClose:
		d.state = h1Done
		return nil
	case h1Done:
		return nil
	case h1Head:
		return errEOFHead
	}
	return errEOFBody
}

var (
	// errEOFHead is the connection closing before a complete status
	// line and headers (a reused connection the server had closed, when
	// no byte came at all).
	errEOFHead = fmt.Errorf("%w: the server closed the connection before the response headers", errUnexpectedEOF)
	// errEOFBody is the connection closing inside the response body.
	errEOFBody = fmt.Errorf("%w: the server closed the connection inside the response body", errUnexpectedEOF)
)

var errUnexpectedEOF = errors.New("unexpected EOF")

// decode consumes p[:used]. Body bytes are moved to p[:n] (n ≤ used). It
// stops early, with used < len(p), right after the final headers (so the
// caller can look at them before any body) and at the end of the
// response; bytes after the end are the caller's to judge (HTTP/1.1
// without pipelining: there must be none).
func (d *decoder) decode(p []byte) (n, used int, err error) {
	i := 0
	for i < len(p) {
		switch d.state {
		case h1Head:
			k, err := d.head(p[i:])
			i += k
			if err != nil {
				return n, i, err
			}
			if d.state != h1Head {
				return n, i, nil
			}
		case h1Body, h1ChunkData:
			k := int(min(d.remain, int64(len(p)-i)))
			n += copy(p[n:], p[i:i+k])
			i += k
			if d.remain -= int64(k); d.remain == 0 {
				d.state = h1Done
				if d.framing == frameChunked {
					d.state = h1ChunkCRLF
				}
			}
		case h1UntilClose:
			n += copy(p[n:], p[i:])
			i = len(p)
		case h1ChunkSize, h1ChunkCRLF, h1Trailer:
			line, k, ok := d.nextLine(p[i:])
			i += k
			if !ok {
				if len(d.line) > maxChunkLine {
					return n, i, fmt.Errorf("%w: chunk line longer than %d bytes", ErrMalformed, maxChunkLine)
				}
				continue
			}
			if err := d.chunkLine(line); err != nil {
				return n, i, err
			}
		case h1Done:
			return n, i, nil
		}
		if d.state == h1Done {
			return n, i, nil
		}
	}
	return n, i, nil
}

// nextLine returns the next line of p (without its LF or CRLF) joined to
// what earlier reads left in d.line, how much of p it used, and whether
// the line is complete.
func (d *decoder) nextLine(p []byte) (line []byte, used int, ok bool) {
	j := bytes.IndexByte(p, '\n')
	if j < 0 {
		d.line = append(d.line, p...)
		return nil, len(p), false
	}
	line = p[:j]
	if len(d.line) > 0 {
		d.line = append(d.line, line...)
		line = d.line
	}
	d.line = d.line[:0] // line stays valid until the next append
	return bytes.TrimSuffix(line, []byte{'\r'}), j + 1, true
}

func (d *decoder) chunkLine(line []byte) error {
	switch d.state {
	case h1ChunkCRLF:
		if len(line) != 0 {
			return fmt.Errorf("%w: chunk data longer than its size", ErrMalformed)
		}
		d.state = h1ChunkSize
	case h1Trailer:
		if len(line) == 0 {
			d.state = h1Done
		}
	case h1ChunkSize:
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions: ignored
		}
		line = bytes.TrimRight(line, " \t")
		size, ok := parseHex(line)
		if !ok {
			return fmt.Errorf("%w: bad chunk size %q", ErrMalformed, truncate(string(line), 40))
		}
		if size == 0 {
			d.state = h1Trailer
		} else {
			d.remain = size
			d.state = h1ChunkData
		}
	}
	return nil
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | int64(c)
	}
	return v, true
}

// head accumulates the status line and headers and parses them at the
// blank line. It returns how much of p it used.
func (d *decoder) head(p []byte) (int, error) {
	// Look for the end of the header block in what is new, with up to 3
	// bytes of what came before (a CRLFCRLF split across reads).
	from := max(len(d.hdr)-3, 0)
	d.hdr = append(d.hdr, p...)
	end, sep := -1, 0
	if k := bytes.Index(d.hdr[from:], []byte("\r\n\r\n")); k >= 0 {
		end, sep = from+k, 4
	}
	if k := bytes.Index(d.hdr[from:], []byte("\n\n")); k >= 0 && (end < 0 || from+k < end) {
		end, sep = from+k, 2
	}
	if end < 0 {
		if len(d.hdr) > maxHeaderBytes {
			return len(p), fmt.Errorf("%w: headers longer than %d bytes", ErrMalformed, maxHeaderBytes)
		}
		return len(p), nil
	}
	used := len(p) - (len(d.hdr) - (end + sep))
	if err := d.parseHead(d.hdr[:end]); err != nil {
		return used, err
	}
	d.hdr = d.hdr[:0]
	return used, nil
}

// parseHead parses one status line and header block. After a 1xx it
// leaves the decoder waiting for the next response's head.
func (d *decoder) parseHead(b []byte) error {
	line, rest, _ := bytes.Cut(b, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	// HTTP/1.x SP 3DIGIT [SP reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		line[7] < '0' || line[7] > '9' || (len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("%w: status line %q", ErrMalformed, truncate(string(line), 80))
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil || code < 100 {
		return fmt.Errorf("%w: status line %q", ErrMalformed, truncate(string(line), 80))
	}
	d.minor = int(line[7] - '0')
	d.status = code
	d.contentType = d.contentType[:0]
	d.closing = d.minor == 0
	var cl int64 = -1
	chunked := false
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
			return fmt.Errorf("%w: header line %q", ErrMalformed, truncate(string(line), 80))
		}
		value = bytes.TrimSpace(value)
		switch {
		case equalFold(name, "content-length"):
			v, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || v < 0 || (cl >= 0 && v != cl) {
				return fmt.Errorf("%w: Content-Length %q", ErrMalformed, truncate(string(value), 40))
			}
			cl = v
		case equalFold(name, "transfer-encoding"):
			// The last coding must be chunked; reprise asks for no other.
			last := value
			if i := bytes.LastIndexByte(value, ','); i >= 0 {
				last = bytes.TrimSpace(value[i+1:])
			}
			if !equalFold(last, "chunked") {
				return fmt.Errorf("%w: Transfer-Encoding %q is not supported", ErrMalformed, truncate(string(value), 40))
			}
			chunked = true
		case equalFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte{','}) {
				tok = bytes.TrimSpace(tok)
				if equalFold(tok, "close") {
					d.closing = true
				} else if equalFold(tok, "keep-alive") && d.minor == 0 {
					d.closing = false
				}
			}
		case equalFold(name, "content-type"):
			d.contentType = append(d.contentType[:0], value...)
		}
	}
	switch {
	case code < 200:
		// Interim (100 Continue, 103 Early Hints): the real one follows.
		d.state = h1Head
		d.status = 0
		return nil
	case code == 204 || code == 304:
		d.framing, d.state = frameNone, h1Done
	case chunked:
		d.framing, d.state = frameChunked, h1ChunkSize
	case cl >= 0:
		d.framing, d.remain, d.state = frameLength, cl, h1Body
		if cl == 0 {
			d.state = h1Done
		}
	default:
		d.framing, d.state = frameClose, h1UntilClose
	}
	return nil
}

// contentLength returns the body's length when the response is framed by
// Content-Length (right after the headers: all of it), else -1.
func (d *decoder) contentLength() int64 {
	if d.framing != frameLength {
		return -1
	}
	return d.remain
}

// mediaType returns a Content-Type without parameters, lower-cased only
// as far as comparing needs (the caller compares case-insensitively).
func mediaType(ct []byte) []byte {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return bytes.TrimSpace(ct)
}

// equalFold is strings.EqualFold for ASCII, on bytes, without
// allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// truncate cuts s to at most n bytes at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
