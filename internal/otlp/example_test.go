package otlp_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reprise-bench/reprise/internal/otlp"
)

// A registry's counter, encoded as the body of one OTLP/HTTP JSON push.
func ExampleEncode() {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "reprise_output_tokens_total", Help: "Output tokens."})
	c.Add(128)
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := otlp.Encode(fams, otlp.Batch{Resource: []otlp.Attr{{Key: "service.name", Value: "reprise"}},
		Start: time.Unix(1, 0), Now: time.Unix(2, 0)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body))
	// Output:
	// {"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"reprise"}}]},"scopeMetrics":[{"scope":{},"metrics":[{"name":"reprise_output_tokens_total","description":"Output tokens.","unit":"{token}","sum":{"dataPoints":[{"attributes":[],"startTimeUnixNano":"1000000000","timeUnixNano":"2000000000","asDouble":128}],"aggregationTemporality":2,"isMonotonic":true}}]}]}]}
}
