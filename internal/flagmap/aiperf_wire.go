package flagmap

import (
	"fmt"

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
