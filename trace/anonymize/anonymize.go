package anonymize

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// KeySize is the length of a key in bytes.
const KeySize = 32

// ErrText is wrapped by [Anonymizer.Row] for a row whose prompt exists only
// as text (messages, text_input, payload) and has no input length: without
// the text it would be an empty request.
var ErrText = errors.New("the row's prompt is text without an input_length")

// Config configures an [Anonymizer].
type Config struct {
	// Key keys every mapping; it must be KeySize bytes. Use [NewKey] for a
	// fresh one, or [ParseKey] to reuse one.
	Key []byte
	// Jitter moves each timestamp by a uniform draw in [−Jitter, +Jitter]
	// (never before 0), drawn from the key, so one key gives one output.
	// 0 keeps the timestamps. Delays and tool times are kept.
	Jitter time.Duration
}

// NewKey returns a fresh random key.
func NewKey() []byte {
	k := make([]byte, KeySize)
	rand.Read(k) // never fails (crypto/rand)
	return k
}

// ParseKey decodes a key written as 64 hexadecimal digits.
func ParseKey(s string) ([]byte, error) {
	k, err := hex.DecodeString(s)
	if err != nil || len(k) != KeySize {
		return nil, fmt.Errorf("want %d hexadecimal digits (%d bytes), e.g. from `openssl rand -hex %d`", 2*KeySize, KeySize, KeySize)
	}
	return k, nil
}

// Anonymizer rewrites rows. It is not safe for concurrent use.
type Anonymizer struct {
	mac    hash.Hash
	jitter time.Duration
	buf    [8]byte
	sum    []byte
	n      uint64 // rows jittered, the jitter stream's counter
}

// New returns an Anonymizer for cfg.
func New(cfg Config) (*Anonymizer, error) {
	if len(cfg.Key) != KeySize {
		return nil, fmt.Errorf("anonymize: key of %d bytes, want %d", len(cfg.Key), KeySize)
	}
	if cfg.Jitter < 0 {
		return nil, fmt.Errorf("anonymize: jitter %v: want a duration ≥ 0", cfg.Jitter)
	}
	return &Anonymizer{mac: hmac.New(sha256.New, cfg.Key), jitter: cfg.Jitter}, nil
}

// prf returns the first 8 bytes of HMAC(key, domain ‖ b) as a uint64.
func (a *Anonymizer) prf(domain byte, b []byte) uint64 {
	a.mac.Reset()
	a.mac.Write([]byte{domain})
	a.mac.Write(b)
	a.sum = a.mac.Sum(a.sum[:0])
	return binary.LittleEndian.Uint64(a.sum)
}

// ID maps one hash id: the keyed function's value below 2^63 (so it fits
// a signed 64-bit integer in any reader). Two distinct ids collide with
// probability 2^−63 per pair.
func (a *Anonymizer) ID(id uint64) uint64 {
	binary.LittleEndian.PutUint64(a.buf[:], id)
	return a.prf('h', a.buf[:]) >> 1
}

// Session maps a session id to its pseudonym ("" stays "").
func (a *Anonymizer) Session(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("s%016x", a.prf('s', []byte(s)))
}

// Request maps a request id (Bailian chat_id, agentic request_id; also
// parents and dependencies) into [0, 2^62); −1 (none) stays −1.
func (a *Anonymizer) Request(id int64) int64 {
	if id < 0 {
		return id
	}
	binary.LittleEndian.PutUint64(a.buf[:], uint64(id))
	return int64(a.prf('r', a.buf[:]) >> 2)
}

// Row rewrites r in place: hash ids and request ids re-mapped (into new
// slices: r's may belong to a reader), the session pseudonymized, the text (Raw) dropped,
// the kind (a model or request type name) dropped, and the timestamp
// jittered. A row with only text fails with [ErrText].
func (a *Anonymizer) Row(r *trace.Row) error {
	if r.InputTokens <= 0 && len(r.Raw) > 0 {
		return fmt.Errorf("line %d: %w; anonymize keeps lengths and hash ids, never text: give the trace input_length (and hash_ids) per row", r.Line, ErrText)
	}
	if r.HashIDs != nil {
		ids := make([]uint64, len(r.HashIDs))
		for i, id := range r.HashIDs {
			ids[i] = a.ID(id)
		}
		r.HashIDs = ids
	}
	r.SessionID = a.Session(r.SessionID)
	r.RequestID, r.ParentID = a.Request(r.RequestID), a.Request(r.ParentID)
	if r.WaitFor != nil {
		w := make([]int64, len(r.WaitFor))
		for i, id := range r.WaitFor {
			w[i] = a.Request(id)
		}
		r.WaitFor = w
	}
	r.Raw = nil
	r.Kind = ""
	if a.jitter > 0 && r.HasOffset {
		binary.LittleEndian.PutUint64(a.buf[:], a.n)
		a.n++
		u := float64(a.prf('j', a.buf[:])>>11) / (1 << 53) // uniform in [0, 1)
		d := time.Duration(math.Round((2*u - 1) * float64(a.jitter)))
		r.Offset = max(r.Offset+d, 0)
	}
	return nil
}
