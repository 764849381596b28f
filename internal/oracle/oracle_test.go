package oracle

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestCompare: a stamp inside the server's write interval is exact, one
// after it is off by the distance; ITL compares mean gaps; a request
// missing from the log or failed is a problem, not a number.
func TestCompare(t *testing.T) {
	const ms = int64(1e6)
	log := []mockserver.RequestLog{
		{ClientRequestID: "1", OutputTokens: 3, Events: []mockserver.Event{
			{Kind: mockserver.EventRole, StartNS: 1 * ms, TimeNS: 1 * ms},
			{Kind: mockserver.EventContent, StartNS: 10 * ms, TimeNS: 11 * ms},
			{Kind: mockserver.EventContent, StartNS: 20 * ms, TimeNS: 21 * ms},
			{Kind: mockserver.EventContent, StartNS: 30 * ms, TimeNS: 31 * ms},
			{Kind: mockserver.EventDone, StartNS: 32 * ms, TimeNS: 32 * ms}}},
		{ClientRequestID: "3", Status: 500},
	}
	reqs := []record.Request{
		// First token inside [10, 11] ms: 0; last 2 ms after 31 ms; ITL
		// (33.5 − 10.5) / 2 = 11.5 ms against the server's 10 ms.
		{RequestID: 1, StatusCode: 200, ContentEvents: 3, ServerCompletionTokens: 3, ServerPromptTokens: 0,
			FirstTokenNS: 10*ms + ms/2, LastTokenNS: 33 * ms, ITLNS: 11.5e6},
		{RequestID: 2, StatusCode: 200},
		{RequestID: 3, StatusCode: 500, ErrorKind: record.ErrHTTPStatus},
	}
	e, problems := Compare(reqs, log)
	if e.Joined != 1 || e.First.Max != 0 || e.Last.Max != 2 || e.ITL.Max != 1.5 || e.Width.Max != 1 {
		t.Errorf("errors %+v", e)
	}
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "request 2 not in the server log") ||
		!strings.Contains(problems[1].Error(), "request 3 failed") {
		t.Errorf("problems %v", problems)
	}
}
