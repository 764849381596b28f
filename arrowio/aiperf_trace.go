package arrowio

import "github.com/reprise-bench/reprise/engine/record"

// aiperfTrace is a profile_export.jsonl record's trace_data (AIPerf's
// --export-http-trace): the request's HTTP timestamps (Unix ns, on the
// run's clock) and phases (ns) as reprise's HTTP client measured them. A
// timestamp that did not happen is omitted.
type aiperfTrace struct {
	TraceType           string `json:"trace_type"`
	PoolWaitStartNS     int64  `json:"connection_pool_wait_start_ns,omitempty"`
	RequestSendStartNS  int64  `json:"request_send_start_ns,omitempty"`
	RequestSendEndNS    int64  `json:"request_send_end_ns,omitempty"`
	HeadersReceivedNS   int64  `json:"response_headers_received_ns,omitempty"`
	ResponseReceiveEnd  int64  `json:"response_receive_end_ns,omitempty"`
	StatusCode          int32  `json:"response_status_code,omitempty"`
	BlockedNS           int64  `json:"blocked_ns"`
	DNSLookupNS         int64  `json:"dns_lookup_ns"`
	ConnectingNS        int64  `json:"connecting_ns"`
	SendingNS           int64  `json:"sending_ns"`
	WaitingNS           int64  `json:"waiting_ns"`
	ReceivingNS         int64  `json:"receiving_ns"`
	DurationNS          int64  `json:"duration_ns"`
	ConnectionReused    bool   `json:"connection_reused"`
	RequestBytesTotal   int64  `json:"request_bytes_total"`
	ResponseBytesTotal  int64  `json:"response_bytes_total"`
	ResponseChunksCount int32  `json:"response_chunks_count"`
}

// aiperfTraceOf is r's trace_data. Its phases add up: the pool wait, DNS
// lookup and connect follow SentNS; sending ends at WroteNS, waiting at
// HeadersNS, receiving at EndNS.
func aiperfTraceOf(r *record.Request) *aiperfTrace {
	t := &aiperfTrace{TraceType: "reprise", PoolWaitStartNS: r.SentNS, RequestSendEndNS: r.WroteNS,
		HeadersReceivedNS: r.HeadersNS, StatusCode: r.StatusCode, BlockedNS: r.BlockedNS, DNSLookupNS: r.DNSNS,
		ConnectingNS: r.ConnectNS, ConnectionReused: r.ConnReused, RequestBytesTotal: r.BytesSent,
		ResponseBytesTotal: r.BytesReceived, ResponseChunksCount: r.Reads}
	if r.SentNS == 0 {
		return t
	}
	t.RequestSendStartNS = r.SentNS + r.BlockedNS + r.DNSNS + r.ConnectNS
	t.ResponseReceiveEnd = r.EndNS
	if r.WroteNS != 0 {
		t.SendingNS = max(r.WroteNS-t.RequestSendStartNS, 0)
		t.DurationNS = max(r.EndNS-t.RequestSendStartNS, 0)
	}
	if r.HeadersNS != 0 && r.WroteNS != 0 {
		t.WaitingNS = max(r.HeadersNS-r.WroteNS, 0)
		t.ReceivingNS = max(r.EndNS-r.HeadersNS, 0)
	}
	return t
}
