package summary

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// httpTable are the rows of WriteHTTPTable, in the order of a request's
// life.
var httpTable = []struct{ tag, header string }{
	{"http_req_blocked", "Connection wait (pool)"},
	{"http_req_dns_lookup", "DNS lookup"},
	{"http_req_connecting", "Connecting (TCP + TLS, new connections)"},
	{"http_req_sending", "Sending"},
	{"http_req_waiting", "Waiting (written → headers)"},
	{"http_req_receiving", "Receiving (headers → end)"},
	{"http_req_duration", "Duration (sending + waiting + receiving)"},
}

// WriteHTTPTable prints the HTTP timing table (AIPerf's
// --show-trace-timing): p50, p90 and p99 of each phase of the requests'
// HTTP exchanges, in ms, and how many requests went on a reused
// connection. It needs Options.HTTPTiming; the metrics of no request are
// left out.
func (s *Summary) WriteHTTPTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "HTTP timing (ms)\tp50\tp90\tp99\tavg\tcount\t\n")
	for _, r := range httpTable {
		st, ok := s.Metrics[r.tag]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t\n", r.header, num(st.P50), num(st.P90), num(st.P99), num(st.Avg), st.Count)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%-34s %d\n", "Requests on a reused connection", s.ConnReused)
	return err
}
