package mockserver

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestEventLogLine pins the JSONL format (docs/format/mock-server.md) with a
// golden file and checks that every line is valid JSON that decodes back
// to the same record, including strings that need escaping.
func TestEventLogLine(t *testing.T) {
	logs := []RequestLog{
		{Seq: 7, ClientRequestID: "req-\"7\"\n\x01é\xff", ResponseID: "chatcmpl-x", Endpoint: "/v1/chat/completions",
			Stream: true, Status: 200, Fault: "stall=2s,malformed-sse", FinishReason: "length",
			ReceivedNS: 1795285491628262189, AdmittedNS: 1795285491628452470, EndNS: 1795285491637461996,
			PromptTokens: 8, CachedTokens: 0, OutputTokens: 2, ReasoningTokens: 1,
			Events: []Event{{Kind: EventRole, StartNS: 10, TimeNS: 10, DueNS: 9}, {Kind: EventReasoning, StartNS: 10, TimeNS: 11, DueNS: 9},
				{Kind: EventContent, Choice: 1, StartNS: 11, TimeNS: 12, DueNS: 12}, {Kind: EventDone, StartNS: 12, TimeNS: 13, DueNS: 12}}},
		{Seq: 8, Endpoint: "/v1/completions", Error: "The model `x` does not exist.", Status: 404, ReceivedNS: 5, EndNS: 6,
			Events: []Event{{Kind: EventBody, StartNS: 6, TimeNS: 6}}},
	}
	var got []byte
	for i := range logs {
		line := appendLogLine(nil, &logs[i])
		got = append(got, line...)
		var back struct {
			V         int    `json:"v"`
			Seq       uint64 `json:"seq"`
			RequestID string `json:"request_id"`
			Error     string `json:"error"`
			Events    []struct {
				Kind    string `json:"kind"`
				Choice  int32  `json:"choice"`
				StartNS int64  `json:"start_ns"`
				TimeNS  int64  `json:"t_ns"`
				DueNS   int64  `json:"due_ns"`
			} `json:"events"`
		}
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, line)
		}
		// The id as JSON sees it: invalid UTF-8 becomes U+FFFD.
		raw, _ := json.Marshal(logs[i].ClientRequestID)
		var id string
		_ = json.Unmarshal(raw, &id)
		if back.V != EventLogVersion || back.Seq != logs[i].Seq || back.RequestID != id || back.Error != logs[i].Error ||
			len(back.Events) != len(logs[i].Events) {
			t.Errorf("line %d decodes to %+v", i, back)
		}
		for j, e := range back.Events {
			w := logs[i].Events[j]
			if e.Kind != w.Kind.String() || e.Choice != w.Choice || e.StartNS != w.StartNS || e.TimeNS != w.TimeNS || e.DueNS != w.DueNS {
				t.Errorf("line %d event %d: %+v, want %+v", i, j, e, w)
			}
		}
	}
	golden := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("event log lines changed (-golden +got); a format change must bump EventLogVersion and the spec:\n%s", d)
	}
}

// TestParseLogLine: the server's lines read back as the requests it
// logged; a bad line names its line number and field.
func TestParseLogLine(t *testing.T) {
	r := RequestLog{Seq: 1, ClientRequestID: "a\"b", Endpoint: "/v1/completions", Status: 200, EndNS: 9,
		Events: []Event{{Kind: EventBody, StartNS: 1, TimeNS: 2}}}
	rank := RequestLog{Seq: 2, Endpoint: "/rerank", Status: 200, PromptTokens: 33, InputTokens: []int{3, 9, 6}, QueryTokens: 5}
	for _, r := range []RequestLog{r, rank} {
		got, err := ParseLogLine(appendLogLine(nil, &r), 1)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("ParseLogLine = %+v, %v; want %+v", got, err, r)
		}
	}
	for _, c := range []struct{ line, want string }{
		{`{"v":1,"events":[{"kind":"nope"}]}`, `oracle log line 4: events[0].kind: unknown kind "nope"`},
		{`{"v":3}`, "oracle log line 4: v: version 3"},
		{`{"v":1,"seq":"x"}`, "oracle log line 4: seq: want a uint64"},
		{`{"v":1`, "oracle log line 4: unexpected end of JSON input"},
	} {
		if _, err := ParseLogLine([]byte(c.line), 4); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.line, err, c.want)
		}
	}
}
