package dashboard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// MinWidth and MinHeight are the smallest screen the full view is laid out
// for (a classic 80×24 terminal fits it); a smaller one gets the rows that
// fit, each cut at the screen's width.
const (
	MinWidth  = 80
	MinHeight = 24
)

// The styles of the view. Each is rendered once, here, into the escape
// sequences around a text (paint): Style.Render per cell of the screen
// took two thirds of a frame's time (BenchmarkDashboardFrame).
var (
	labelStyle = newPaint(lipgloss.NewStyle().Faint(true))
	valueStyle = newPaint(lipgloss.NewStyle().Bold(true))
	titleStyle = valueStyle
	goodStyle  = newPaint(lipgloss.NewStyle().Foreground(lipgloss.Green).Bold(true))
	badStyle   = newPaint(lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true))
	warnStyle  = newPaint(lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true))
	sparkStyle = newPaint(lipgloss.NewStyle().Foreground(lipgloss.Cyan))
)

// paint is a lipgloss style as the escape sequences before and after a
// one-line text without escapes of its own: what Style.Render gives such
// a text (TestPaint), without its work per call.
type paint struct{ pre, post string }

func newPaint(st lipgloss.Style) paint {
	const mark = "\x00"
	r := st.Render(mark)
	i := strings.Index(r, mark)
	if i < 0 {
		panic("BUG: lipgloss dropped the marker of newPaint")
	}
	return paint{pre: r[:i], post: r[i+len(mark):]}
}

// Render styles s, a text of one line.
func (p paint) Render(s string) string { return p.pre + s + p.post }

// labelWidth is the width of the label column of every row.
const labelWidth = 10

// Render lays s out on a width×height screen: at most height lines, none
// wider than width cells. Sections that do not fit are left out, the
// sparklines first. paused marks the view as paused. Render is a pure
// function; its output holds ANSI styles (ansi.Strip removes them).
func Render(s *Snapshot, width, height int, paused bool) string {
	if width <= 0 || height <= 0 {
		return ""
	}
	head := []string{header(s, width, paused), progressRow(s, width)}
	body := [][]string{
		{countsRow(s), errorsRow(s)},
		{ratesRow(s), tokensRow(s)},
		metricsRows(s, width),
		{serverRow(s), qualityRow(s)},
	}
	foot := keysRow(s, paused)
	lines := append([]string(nil), head...)
	room := height - len(lines) - 1 // the keys row
	for _, sec := range body {
		if len(sec) > room {
			break
		}
		lines = append(lines, sec...)
		room -= len(sec)
	}
	if room >= 2 && len(s.Series) > 0 {
		lines = append(lines, "")
		room--
		for _, se := range s.Series {
			if room == 0 {
				break
			}
			lines = append(lines, sparkRow(se, width))
			room--
		}
	}
	if room >= 0 {
		lines = append(lines, foot)
	}
	if len(lines) > height {
		lines = lines[:height]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(ansi.Truncate(l, width, "…"), " ")
	}
	return strings.Join(lines, "\n")
}

func label(s string) string { return labelStyle.Render(fmt.Sprintf("%-*s", labelWidth, s)) }

func header(s *Snapshot, width int, paused bool) string {
	state := "[" + s.State.String() + "]"
	st := goodStyle
	switch s.State {
	case Stopping, Draining, Interrupted:
		st = warnStyle
	case Aborting:
		st = badStyle
	case Finished:
		st = valueStyle
	}
	right := st.Render(state)
	if paused {
		right = warnStyle.Render("[paused]") + " " + right
	}
	title := "reprise"
	if s.Title != "" {
		title += " · " + s.Title
	}
	room := width - lipgloss.Width(right) - 1
	if room < 1 {
		return ansi.Truncate(right, width, "")
	}
	t := ansi.Truncate(title, room, "…")
	pad := width - lipgloss.Width(t) - lipgloss.Width(right)
	return titleStyle.Render(t) + strings.Repeat(" ", max(pad, 1)) + right
}

func progressRow(s *Snapshot, width int) string {
	left := label("elapsed") + valueStyle.Render(fmtSeconds(s.Elapsed))
	eta := "–"
	if s.ETA >= 0 {
		eta = fmtSeconds(s.ETA)
	}
	left += "  " + labelStyle.Render("ETA ") + valueStyle.Render(eta)
	if s.Planned <= 0 {
		return left
	}
	frac := min(float64(s.Done)/float64(s.Planned), 1)
	pct := fmt.Sprintf(" %3d%%", int(frac*100))
	barW := width - lipgloss.Width(left) - 2 - len(pct)
	if barW < 5 {
		return left + pct
	}
	fill := int(math.Round(frac * float64(barW)))
	return left + "  " + sparkStyle.Render(strings.Repeat("█", fill)) + labelStyle.Render(strings.Repeat("░", barW-fill)) + pct
}

func countsRow(s *Snapshot) string {
	v := func(name string, n int64) string {
		return labelStyle.Render(name+" ") + valueStyle.Render(fmt.Sprint(n))
	}
	row := label("requests") + v("sent", s.Sent) + "  " + v("done", s.Done) + "  " + v("in flight", s.InFlight) + "  "
	if s.Failed > 0 {
		row += labelStyle.Render("failed ") + badStyle.Render(fmt.Sprint(s.Failed))
	} else {
		row += v("failed", s.Failed)
	}
	if s.Planned >= 0 {
		row += "  " + v("of", s.Planned)
	}
	return row
}

func errorsRow(s *Snapshot) string {
	if len(s.Errors) == 0 {
		return label("failed by") + labelStyle.Render("none")
	}
	parts := make([]string, 0, len(s.Errors))
	for _, e := range s.Errors {
		parts = append(parts, e.Kind+" "+badStyle.Render(fmt.Sprint(e.Count)))
	}
	return label("failed by") + strings.Join(parts, labelStyle.Render(" · "))
}

func ratesRow(s *Snapshot) string {
	return label("req/s") + labelStyle.Render("intended ") + valueStyle.Render(fmtRate(s.Intended.Window)) +
		labelStyle.Render("  achieved ") + valueStyle.Render(fmtRate(s.Achieved.Window)) +
		labelStyle.Render(fmt.Sprintf("   run %s / %s", fmtRate(s.Intended.Run), fmtRate(s.Achieved.Run)))
}

func tokensRow(s *Snapshot) string {
	return label("output") + valueStyle.Render(fmtRate(s.OutputTokens.Window)) + labelStyle.Render(" tokens/s") +
		labelStyle.Render(fmt.Sprintf("   run %s tokens/s", fmtRate(s.OutputTokens.Run)))
}

// colWidth is the width of one quantile column.
const colWidth = 9

// metricsRows is the quantile table: a header of two rows, then a row per
// metric. Below 66 columns the p90s are left out.
func metricsRows(s *Snapshot, width int) []string {
	all := labelWidth+6*colWidth+2 <= width
	qs := []string{"p50", "p90", "p99"}
	if !all {
		qs = []string{"p50", "p99"}
	}
	win := "last " + fmtSeconds(s.Window)
	if s.Window <= 0 {
		win = "last window"
	}
	final := "run"
	if s.State.Over() {
		final = "run (summary)"
	}
	groupW := len(qs) * colWidth
	h1 := strings.Repeat(" ", labelWidth) + labelStyle.Render(center(win, groupW)) + "  " + labelStyle.Render(strings.TrimRight(center(final, groupW), " "))
	var h2 strings.Builder
	h2.WriteString(strings.Repeat(" ", labelWidth))
	for g := range 2 {
		if g == 1 {
			h2.WriteString("  ")
		}
		for _, q := range qs {
			h2.WriteString(labelStyle.Render(fmt.Sprintf("%*s", colWidth, q)))
		}
	}
	rows := []string{h1, h2.String()}
	for _, m := range s.Metrics {
		var b strings.Builder
		b.WriteString(label(m.Name))
		for g, q := range []Quantiles{m.Window, m.Run} {
			if g == 1 {
				b.WriteString("  ")
			}
			vals := []time.Duration{q.P50, q.P90, q.P99}
			if !all {
				vals = []time.Duration{q.P50, q.P99}
			}
			for _, v := range vals {
				t := "–"
				if q.N > 0 {
					t = FormatDuration(v)
				}
				b.WriteString(valueStyle.Render(fmt.Sprintf("%*s", colWidth, t)))
			}
		}
		rows = append(rows, b.String())
	}
	return rows
}

func center(s string, w int) string {
	if len(s) >= w {
		return s
	}
	l := (w - len(s)) / 2
	return strings.Repeat(" ", l) + s + strings.Repeat(" ", w-len(s)-l)
}

func serverRow(s *Snapshot) string {
	sv := s.Server
	if sv == nil {
		return label("server") + labelStyle.Render("not scraped")
	}
	if !sv.Up {
		return label("server") + badStyle.Render("scrape failed") + labelStyle.Render(fmt.Sprintf(" (%s ago)", fmtSeconds(sv.Age)))
	}
	kv := "–"
	if sv.KVUsage >= 0 {
		kv = fmt.Sprintf("%.1f%%", 100*sv.KVUsage)
	}
	gauge := func(v float64) string {
		if v < 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f", v)
	}
	return label("server") + labelStyle.Render("KV cache ") + valueStyle.Render(kv) +
		labelStyle.Render("  running ") + valueStyle.Render(gauge(sv.Running)) +
		labelStyle.Render("  queued ") + valueStyle.Render(gauge(sv.Waiting)) +
		labelStyle.Render(fmt.Sprintf("  (scraped %s ago)", fmtSeconds(sv.Age)))
}

func qualityRow(s *Snapshot) string {
	q := s.Quality
	switch q.Verdict {
	case "":
		return label("quality") + labelStyle.Render("nothing measured yet")
	case "good":
		return label("quality") + goodStyle.Render("good")
	}
	row := label("quality") + badStyle.Render(q.Verdict)
	if len(q.Reasons) > 0 {
		row += ": " + q.Reasons[0]
		if len(q.Reasons) > 1 {
			row += labelStyle.Render(fmt.Sprintf(" (+%d more)", len(q.Reasons)-1))
		}
	}
	return row
}

// sparkRunes are the eight levels of a sparkline.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkRow is a sparkline of se's last points that fit, scaled from the
// smallest of them to the largest, with its last value.
func sparkRow(se Series, width int) string {
	last := "–"
	if n := len(se.Points); n > 0 && !math.IsNaN(se.Points[n-1]) {
		last = fmtValue(se.Points[n-1], se.Unit)
	}
	w := width - labelWidth - 1 - colWidth
	if w < 4 {
		return label(se.Name) + valueStyle.Render(last)
	}
	pts := se.Points
	if len(pts) > w {
		pts = pts[len(pts)-w:]
	}
	return label(se.Name) + sparkStyle.Render(Sparkline(pts)) + strings.Repeat(" ", w-len(pts)+1) +
		valueStyle.Render(fmt.Sprintf("%*s", colWidth, last))
}

// Sparkline draws points as one rune each, from ▁ (the smallest point)
// to █ (the largest); points all equal are ▁ at zero and ▄ otherwise; a
// NaN point is a space.
func Sparkline(points []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		if !math.IsNaN(p) {
			lo, hi = min(lo, p), max(hi, p)
		}
	}
	var b strings.Builder
	for _, p := range points {
		switch {
		case math.IsNaN(p):
			b.WriteByte(' ')
		case hi == lo && p == 0:
			b.WriteRune(sparkRunes[0])
		case hi == lo:
			b.WriteRune(sparkRunes[len(sparkRunes)/2-1])
		default:
			i := int(math.Round((p - lo) / (hi - lo) * float64(len(sparkRunes)-1)))
			b.WriteRune(sparkRunes[min(max(i, 0), len(sparkRunes)-1)])
		}
	}
	return b.String()
}

func keysRow(s *Snapshot, paused bool) string {
	pause := "p pause view"
	if paused {
		pause = "p resume view"
	}
	key := func(k, what string) string { return valueStyle.Render(k) + " " + labelStyle.Render(what) }
	switch s.State {
	case Running, Draining:
		return key("q", "stop sending (again: cancel in flight)") + "   " + key("p", pause[2:])
	case Stopping:
		return key("q", fmt.Sprintf("again: cancel the %d in flight", s.InFlight)) + "   " + key("p", pause[2:])
	case Aborting:
		return labelStyle.Render("cancelling the requests in flight; writing what is finished")
	}
	return labelStyle.Render("run over: the summary follows")
}

// FormatDuration is how the dashboard writes a latency: "850µs",
// "4.25ms", "123.4ms", "1.23s". Its rounding is half a unit of the last
// digit shown.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// fmtSeconds writes a duration rounded to the second (tenths below 10 s).
func fmtSeconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func fmtRate(r float64) string {
	switch {
	case r < 0 || math.IsNaN(r):
		return "–"
	case r < 100:
		return fmt.Sprintf("%.1f", r)
	case r < 10_000:
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1fk", r/1e3)
}

func fmtValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return FormatDuration(time.Duration(v * 1e6))
	case "%":
		return fmt.Sprintf("%.1f%%", v)
	case "/s":
		return fmtRate(v) + "/s"
	case "n":
		return fmt.Sprintf("%.0f", v)
	}
	return fmtRate(v)
}
