package flagmap

import (
	"fmt"
	"math"
	"time"

	"github.com/reprise-bench/reprise"
)

// profileWire maps AIPerf's transport options: --transport (HTTP only;
// http2 is replay's --http2).
func profileWire(v Values, o *reprise.Options, errs *[]error) {
	switch tr := v.String("transport"); tr {
	case "", "http":
	case "http2":
		o.HTTP2 = true
	default:
		*errs = append(*errs, fmt.Errorf("--transport %q: reprise speaks HTTP only: want http (HTTP/1.1) or http2 (replay's --http2)", tr))
	}
}

// NetworkLatency maps the network latency flags in AIPerf's units: the
// mean in ms, the probe interval in s. A value that is not a finite
// number of at most MaxSeconds becomes -1 ns, for Validate to refuse.
func NetworkLatency(v Values) reprise.NetworkLatencyOptions {
	n := reprise.NetworkLatencyOptions{Probe: v.Bool("network-latency-automatic")}
	if v.IsSet("network-latency-mean") {
		n.Mean = floatDuration(v.Float("network-latency-mean"), time.Millisecond)
	}
	if v.IsSet("network-latency-ping-interval") {
		n.ProbeInterval = floatDuration(v.Float("network-latency-ping-interval"), time.Second)
	}
	return n
}

// floatDuration is x units, or -1 ns out of range.
func floatDuration(x float64, unit time.Duration) time.Duration {
	d := x * float64(unit)
	if !(math.Abs(d) <= MaxSeconds*1e9) {
		return -1
	}
	return time.Duration(d)
}
