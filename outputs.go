package reprise

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/secret"
)

// Bounds of the texts kept for outputs.json: a long run's answers would
// otherwise all be held until it ends. Past either, a request's
// response_text is null and the run's log says how many.
const (
	maxAIPerfOutputs     = 100_000
	maxAIPerfOutputBytes = 256 << 20
)

// outputsLog keeps the response texts of a run for outputs.json
// (Output.ExportOutputs), by request id, redacted as inputs.json is: a
// text that is a JSON document has the value of every secret-looking key
// replaced (a model answering with a JSON object may echo one), and the
// run's --api-key and secret header values are replaced wherever they
// appear. Senders call add concurrently. A nil *outputsLog keeps nothing.
type outputsLog struct {
	secrets []string
	mu      sync.Mutex
	texts   map[uint64]string
	bytes   int
	dropped int
}

// newOutputsLog returns the log o asks for, or nil.
func newOutputsLog(o *Options) *outputsLog {
	if !o.Output.ExportOutputs {
		return nil
	}
	l := &outputsLog{texts: map[uint64]string{}}
	if len(o.APIKey) >= 4 {
		l.secrets = append(l.secrets, o.APIKey)
	}
	for _, h := range o.Headers {
		k, v, _ := strings.Cut(h, ":")
		if v = strings.TrimSpace(v); !allowedHeaders[strings.ToLower(strings.TrimSpace(k))] && len(v) >= 4 {
			l.secrets = append(l.secrets, v)
		}
	}
	return l
}

// add keeps the text of r's response (target 0's with fan-out). text is
// copied: the sender owns it.
func (l *outputsLog) add(r *record.Request, text []byte) {
	if l == nil || r.Target != 0 {
		return
	}
	s := l.redact(text)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.texts) >= maxAIPerfOutputs || l.bytes+len(s) > maxAIPerfOutputBytes {
		l.dropped++
		return
	}
	l.bytes += len(s)
	l.texts[r.RequestID] = s
}

// redact returns text as outputs.json may hold it.
func (l *outputsLog) redact(text []byte) string {
	t := bytes.TrimSpace(text)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) && hasSecretKey(t) {
		text = secret.Body(t)
	}
	s := string(text)
	for _, k := range l.secrets {
		s = strings.ReplaceAll(s, k, secret.Redacted)
	}
	return s
}

// hasSecretKey reports whether the JSON document b has a secret-looking
// key (secret.Key) at any depth.
func hasSecretKey(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		// Object keys and string values both come as strings; a key that
		// looks secret as a value is redacted too (harmless: the text is
		// re-encoded with the keys' values replaced, never the values).
		if k, ok := tok.(string); ok && secret.Key(k) {
			return true
		}
	}
}

// export writes outputs.json to the run directory dir, each request's
// metrics computed with s's options, unless the run failed or was
// aborted (skip: it reads every record back), which the log says.
func (l *outputsLog) export(dir string, s *summary.Summary, log *slog.Logger, skip bool) error {
	if l == nil {
		return nil
	}
	if skip {
		log.Warn("outputs.json not written: the run did not complete")
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped > 0 {
		log.Warn("outputs.json: response texts left out (null) past the bounds", slog.Int("requests", l.dropped),
			slog.Int("max_requests", maxAIPerfOutputs), slog.Int("max_bytes", maxAIPerfOutputBytes))
	}
	if err := arrowio.WriteAIPerfOutputs(dir, s.Options, l.texts); err != nil {
		return fieldError("Output.ExportOutputs", "{Output.ExportOutputs}: %w", err)
	}
	return nil
}
