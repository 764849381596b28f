package selftest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/reprise-bench/reprise/selftest/calibration"
)

// WriteReport prints what the calibration f says, for a reader who has
// not read the docs: the table of steps, the co-located case, what limits
// the machine and the verdict. path is where f was written ("" = not
// written).
func WriteReport(w io.Writer, f *calibration.File, path string) error {
	var b strings.Builder
	s := f.Settings
	switch s.Kind {
	case "rate":
		fmt.Fprintf(&b, "Load: open loop (Poisson) up to %.4g requests/s", s.Rate)
	case "trace":
		fmt.Fprintf(&b, "Load: %s up to ×%.4g", s.Trace, s.Speedup)
	default:
		fmt.Fprintf(&b, "Load: closed loop, up to %d concurrent streams", s.Streams)
	}
	fmt.Fprintf(&b, " against a mock server in a child process (TTFT %.3g ms, ITL %.3g ms, %d input / %d output tokens).\n",
		s.TTFTMS, s.ITLMS, s.ISL, s.OSL)
	fmt.Fprintf(&b, "Every client timestamp is compared with the moment the server wrote that token (its own log).\n")
	fmt.Fprintf(&b, "Timer: %s wakes up %.3g ms late at p99 (%.3g ms at p50).\n\n", f.Timer.Primitive, f.Timer.P99MS, f.Timer.P50MS)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	level := map[string]string{"streams": "streams", "rate": "req/s asked", "trace": "speedup"}[s.Kind]
	fmt.Fprintf(tw, "%s\tin flight\tevents/s\treq/s\tTTFT err p50/p99\tITL err p99\tE2E err p99\tlateness p99\tread lag p99\tclient µs/event\tµs/request\tcores client+server\t\t\n", level)
	row := func(st *calibration.Step) {
		verdict := "ok"
		if !st.Within {
			verdict = "OVER"
		}
		e := st.Errors
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.1f\t%.3f/%.3f ms\t%.3f ms\t%.3f ms\t%.3f ms\t%.3f ms\t%.1f\t%.0f\t%.2f+%.2f\t%s\t\n",
			levelText(s.Kind, st.Level), st.Load.Streams, st.Load.EventsPerSec, st.Load.RequestsPerSec,
			e[calibration.TTFT].P50, e[calibration.TTFT].P99, e[calibration.ITL].P99, e[calibration.E2E].P99,
			st.LatenessP99MS, st.ReadLagP99MS, st.ClientCPUPerEventUS, st.ClientCPUPerRequestUS, st.ClientCores, st.ServerCores, verdict)
	}
	for i := range f.Steps {
		row(&f.Steps[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "(ok: every p99 error within ±%.3g ms; errors are the client's stamps' distance from the server's writes)\n", f.MaxErrorMS)
	if co := f.CoLocated; co != nil {
		fmt.Fprintf(&b, "\nServer under test on this machine (the mock server burning %.0f µs of CPU per token, at the load above):\n", co.CPUPerTokenUS)
		for _, r := range []struct {
			name string
			st   *calibration.Step
		}{{"client as it runs", &co.Default}, {co.NiceHow, &co.Niced}} {
			within := "within the bound"
			if !r.st.Within {
				within = "OVER the bound"
			}
			fmt.Fprintf(&b, "  %-40s TTFT error p99 %.3f ms, ITL %.3f ms, E2E %.3f ms (%s)\n", r.name+":",
				r.st.Errors[calibration.TTFT].P99, r.st.Errors[calibration.ITL].P99, r.st.Errors[calibration.E2E].P99, within)
		}
	}
	b.WriteString("\n")
	b.WriteString(Verdict(f))
	if path != "" {
		fmt.Fprintf(&b, "\nCalibration written to %s.\n", path)
		fmt.Fprintf(&b, "reprise replay on this host applies it for %s: error bars beside TTFT/ITL/E2E, and a warning\n"+
			"when a run goes past the safe load (--calibration off ignores it; --calibration FILE picks another).\n",
			fmt.Sprintf("%d days", int(calibration.MaxAge.Hours()/24)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Verdict is the plain-words conclusion of f: how precisely this machine
// measures, up to what load, what limits it and what to change.
func Verdict(f *calibration.File) string {
	var b strings.Builder
	unit := map[string]string{"streams": "concurrent streams", "rate": "requests/s", "trace": "× speedup"}[f.Settings.Kind]
	if f.SafeLoad == nil {
		st := f.Steps[0]
		fmt.Fprintf(&b, "VERDICT: this machine cannot time responses to within ±%.3g ms even at the smallest load tried (%s %s):\n"+
			"the p99 TTFT error there was %.3f ms. Treat differences smaller than that as noise.\n",
			f.MaxErrorMS, levelText(f.Settings.Kind, st.Level), unit, st.Errors[calibration.TTFT].P99)
	} else {
		l := f.SafeLoad
		e := f.SafeErrors
		fmt.Fprintf(&b, "VERDICT: on this machine reprise measures TTFT, ITL and end-to-end latency to within ±%.3g ms (p99)\n"+
			"up to %s %s: %.1f requests in flight on average, %.0f tokens/s, %.1f requests/s\n"+
			"(errors there at p99: TTFT %.3f ms, ITL %.3f ms, E2E %.3f ms).\n",
			f.MaxErrorMS, levelText(f.Settings.Kind, f.SafeLevel), unit, l.Streams, l.EventsPerSec, l.RequestsPerSec,
			e[calibration.TTFT].P99, e[calibration.ITL].P99, e[calibration.E2E].P99)
	}
	if f.Limit.Kind == "none" {
		fmt.Fprintf(&b, "No limit reached: %s.\n", f.Limit.Detail)
	} else {
		fmt.Fprintf(&b, "What limits it: %s.\n", f.Limit.Detail)
	}
	for _, a := range f.Limit.Advice {
		fmt.Fprintf(&b, "  - %s\n", a)
	}
	if co := f.CoLocated; co != nil {
		d, n := co.Default.Errors[calibration.TTFT].P99, co.Niced.Errors[calibration.TTFT].P99
		switch {
		case co.Default.Within:
			fmt.Fprintf(&b, "With the server on the same machine the errors stayed within the bound (TTFT p99 %.3f ms).\n", d)
		case co.Niced.Within:
			fmt.Fprintf(&b, "With the server on the same machine the TTFT error grows to %.3f ms at p99; with the %s it is %.3f ms:\n"+
				"on a shared box, give the client priority (reprise replay --nice -20 as root, or renice the server).\n", d, co.NiceHow, n)
		default:
			fmt.Fprintf(&b, "With the server on the same machine the TTFT error grows to %.3f ms at p99 (%.3f ms with the %s):\n"+
				"on a shared box, use fewer streams per client or run the client on another machine.\n", d, n, co.NiceHow)
		}
	}
	return b.String()
}
