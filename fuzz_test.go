package reprise

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzServerAnswer: what a server sends to a control request or a
// readiness poll (any bytes) is described without a panic, starting with
// its status, in at most one line; a model list decodes to its ids or is
// refused, and decoding what it encoded gives the same ids. The seeds are
// the bodies the real servers sent (testdata/servercontrol).
func FuzzServerAnswer(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "servercontrol", "*.http"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if _, body, ok := strings.Cut(string(b), "\n\n"); ok {
			f.Add(503, []byte(body))
		}
	}
	f.Add(404, []byte(`{"error":"not here"}`))
	f.Add(200, []byte(`{"data":[{"id":"a"},{"id":"b"}]}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		status = 100 + (status%500+500)%500
		a := answer(status, body)
		if !strings.HasPrefix(a, strconv.Itoa(status)+" ") || strings.Contains(a, "\n") {
			t.Fatalf("answer(%d, %q) = %q", status, body, a)
		}
		ids, ok := modelIDs(body)
		if !ok {
			return
		}
		var sb strings.Builder
		sb.WriteString(`{"data":[`)
		for i, id := range ids {
			if !utf8.ValidString(id) {
				return // JSON would replace it: no round trip
			}
			if i > 0 {
				sb.WriteByte(',')
			}
			q, _ := json.Marshal(id)
			sb.WriteString(`{"id":` + string(q) + `}`)
		}
		sb.WriteString(`]}`)
		again, ok := modelIDs([]byte(sb.String()))
		if !ok || strings.Join(again, "\x00") != strings.Join(ids, "\x00") {
			t.Fatalf("ids %q re-decoded as %q (%v)", ids, again, ok)
		}
	})
}
