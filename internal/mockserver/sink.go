// Where a response is written: through net/http or, for llama.cpp's SSE, the
// hijacked connection.

package mockserver

import (
	"io"
	"net"
	"net/http"
	"strconv"
)

// httpSink writes events through net/http: one Write and one flush each.
type httpSink struct {
	w     http.ResponseWriter
	abort bool // reset requested on a connection that cannot be hijacked
}

func (h *httpSink) write(p []byte) error {
	if _, err := h.w.Write(p); err != nil {
		return err
	}
	return h.flush()
}

func (h *httpSink) flush() error {
	if f, ok := h.w.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	return http.NewResponseController(h.w).Flush()
}

// reset hijacks the connection and closes it with an RST. On HTTP/2 it
// marks the handler for abort instead, which resets the stream.
func (h *httpSink) reset() {
	conn, _, err := http.NewResponseController(h.w).Hijack()
	if err != nil {
		h.abort = true
		return
	}
	resetConn(conn)
}

func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// rawSink writes a llama.cpp stream on the hijacked connection, framing
// chunks itself, and closes the connection after the response, as
// llama-server does (net/http cannot close after a response without
// announcing it in a Connection header).
type rawSink struct {
	w    http.ResponseWriter
	conn net.Conn
	buf  []byte
	sent bool // headers written
}

const llamaSSEHeaders = "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Type: text/event-stream\r\n" +
	"Server: llama.cpp\r\nTransfer-Encoding: chunked\r\nAccess-Control-Allow-Origin: \r\n\r\n"

func (r *rawSink) hijack() error {
	if r.conn != nil {
		return nil
	}
	conn, _, err := http.NewResponseController(r.w).Hijack()
	if err != nil {
		return err
	}
	r.conn = conn
	return nil
}

// headers writes the header block alone (slow-headers).
func (r *rawSink) headers() error {
	if err := r.hijack(); err != nil {
		return err
	}
	r.sent = true
	_, err := io.WriteString(r.conn, llamaSSEHeaders)
	return err
}

func (r *rawSink) write(p []byte) error {
	if err := r.hijack(); err != nil {
		return err
	}
	b := r.buf[:0]
	if !r.sent {
		b = append(b, llamaSSEHeaders...)
		r.sent = true
	}
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	b = append(b, "\r\n"...)
	r.buf = b
	_, err := r.conn.Write(b)
	return err
}

// end writes the last chunk and closes the connection (FIN).
func (r *rawSink) end() {
	if r.conn == nil {
		return
	}
	_, _ = io.WriteString(r.conn, "0\r\n\r\n")
	_ = r.conn.Close()
	r.conn = nil
}

func (r *rawSink) reset() {
	if r.hijack() != nil {
		return
	}
	resetConn(r.conn)
	r.conn = nil
}

func (r *rawSink) abort() {
	if r.conn != nil {
		_ = r.conn.Close()
		r.conn = nil
	}
}

// sink is where a stream's events go: net/http's writer, or the hijacked
// connection of a llama.cpp stream.
type sink interface {
	write(p []byte) error // one event, flushed to the socket
	reset()               // RST the connection
}
