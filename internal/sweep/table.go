package sweep

import (
	"fmt"
	"strings"
)

// The sweep table on Config.Table: one line per point as it finishes.
const tableFormat = "%-28s %9s %9s %9s %7s %8s %8s %7s %7s %9s %9s %9s %8s %6s %8s %s\n"

func (s *sweeper) header() {
	if s.cfg.Table == nil || s.headed {
		return
	}
	s.headed = true
	fmt.Fprintf(s.cfg.Table, tableFormat, "point", "asked/s", "sent/s", "done/s", "good%", "goodput",
		"ttft50", "ttft99", "itl50", "itl99", "e2e50", "e2e99", "tok/s", "tps/u", "errors", "late99  (ms; /s = requests/s)")
}

// line prints the row of one point; note, when not empty, is put after
// its lateness (a search's verdict of the probe).
func (s *sweeper) line(r *Row, note string) {
	if s.cfg.Table == nil {
		return
	}
	s.header()
	good, goodput := "-", "-"
	if s.cfg.Base.Goodput != "" {
		good, goodput = fmt.Sprintf("%.1f", 100*r.GoodFraction), Num(r.Goodput, 3)
	}
	late := Num(r.LatenessP99, 3)
	if a := r.AccuracyText(); a != "" {
		late += "  accuracy% " + a
	}
	if note != "" {
		late += "  " + note
	} else if r.Saturated {
		late += "  saturated: " + strings.Join(r.Saturation.Reasons, ",")
	}
	fmt.Fprintf(s.cfg.Table, tableFormat, r.Point, Num(r.IntendedRate, 4), Num(r.SentRate, 4),
		Num(r.Throughput, 4), good, goodput,
		Num(r.TTFTP50, 4), Num(r.TTFTP99, 4), Num(r.ITLP50, 3), Num(r.ITLP99, 3),
		Num(r.E2EP50, 4), Num(r.E2EP99, 4), Num(r.OutputThroughput, 4),
		Num(r.PerUserTPS, 3), fmt.Sprintf("%d", r.Errors), late)
}

// closing prints the stops, the Pareto front and knee, or the search's
// answer.
func (s *sweeper) closing() {
	w := s.cfg.Table
	if w == nil {
		return
	}
	for _, st := range s.res.Stops {
		fmt.Fprintf(w, "stop: %s\n", st)
	}
	if len(s.res.Pareto) > 0 {
		fmt.Fprintf(w, "pareto (output tok/s ↑, e2e p99 ↓): %s\n", strings.Join(s.res.Pareto, " → "))
	}
	if s.res.Knee != "" {
		fmt.Fprintf(w, "knee (Kneedle): %s\n", s.res.Knee)
	}
	for i := range s.res.Trials {
		fmt.Fprintf(w, "%s\n", s.res.Trials[i].Text())
	}
	if f := s.res.Found; f != nil {
		fmt.Fprintf(w, "%s\n", f.Text)
	}
	if s.res.Interrupted {
		fmt.Fprintf(w, "interrupted: run the same command again to resume (finished points are kept)\n")
	}
}

// findNote is the verdict of a search's probe at point, for its table
// line.
func (s *sweeper) findNote(point string) string {
	for i := range s.res.Found.Probes {
		if p := &s.res.Found.Probes[i]; p.Point == point {
			return p.Why + ": " + probeVerdict(p)
		}
	}
	return ""
}
