package adaptive_test

import (
	"fmt"
	"time"

	"github.com/reprise-bench/reprise/internal/adaptive"
	"github.com/reprise-bench/reprise/internal/search"
)

// A server whose SLA holds up to 11 requests in flight: the controller
// doubles from 1, bisects after 16 fails, and holds 11.
func ExampleController() {
	cfg := adaptive.NewConfig()
	cfg.Max, cfg.Sustain = 64, 2*time.Second
	cfg.SLAs = []search.Constraint{{Metric: "request_latency:avg", Op: "<=", Threshold: 400}}
	c := adaptive.NewController(cfg)
	for k := int64(1); ; k++ {
		pass := c.Setting() <= 11
		d := c.Step(adaptive.Verdict{Conclusive: true, Pass: pass}, k*int64(time.Second))
		fmt.Printf("%d %v → %s %d\n", d.Before, pass, d.Event, d.After)
		if d.Done {
			break
		}
	}
	fmt.Printf("%+v\n", c.Outcome())
	// Output:
	// 1 true → adaptive_decision 2
	// 2 true → adaptive_decision 4
	// 4 true → adaptive_decision 8
	// 8 true → adaptive_decision 16
	// 16 false → adaptive_decision 12
	// 12 false → adaptive_decision 10
	// 10 true → adaptive_decision 11
	// 11 true → sustain_started 11
	// 11 true → adaptive_window 11
	// 11 true → adaptive_complete 11
	// {Status:complete Reason:sustain_duration_completed Boundary:11 Setting:11 LastPass:11 FirstFail:12 Sustained:true}
}
