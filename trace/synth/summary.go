package synth

import (
	"fmt"
	"io"
	"strings"

	"github.com/reprise-bench/reprise/internal/numfmt"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// Summary is what [Run] wrote, for [Summary.Print].
type Summary struct {
	opts     Options
	rows     int
	format   trace.Format
	report   *analyze.Report // of the rows as written; nil with Quiet
	derive   *DeriveStats
	generate *GenerateStats
	// inMemory says why a derive read the whole input ("" when streamed).
	inMemory string
}

// Rows returns the number of rows written.
func (res *Summary) Rows() int { return res.rows }

// Print writes the summary `reprise synthesize` prints on stderr: what
// was written and what the analyzer measures on it.
func (res *Summary) Print(w io.Writer) {
	c := res.opts
	rep := res.report
	dest := c.Output
	if dest == "-" {
		dest = "stdout"
	}
	fmt.Fprintf(w, "synthesize: %s rows (%s) to %s\n", numfmt.Group(int64(res.rows)), res.format, dest)
	fmt.Fprintf(w, "  span %.4f s, mean rate %.3f req/s, ISL mean %.1f, OSL mean %.1f\n",
		rep.SpanSeconds, rep.Arrivals.MeanRate, rep.ISL.Mean, rep.OSL.Mean)
	if ca := rep.Cache; ca != nil {
		fmt.Fprintf(w, "  infinite-cache token hit ratio %.4f (block %.4f), working set %s tokens (%s blocks of %d)\n",
			ca.TokenHitRatio, ca.BlockHitRatio, numfmt.Group(ca.DistinctBlocks*int64(ca.BlockSize)), numfmt.Group(ca.DistinctBlocks), ca.BlockSize)
		if def := res.format.DefaultBlockSize(); def != ca.BlockSize {
			fmt.Fprintf(w, "  note: %s readers assume %d-token blocks; read this file with --block-size %d\n", res.format, def, ca.BlockSize)
		}
	}
	if d := rep.Dependencies; d != nil {
		fmt.Fprintf(w, "  agentic: %s tasks, depth %.0f–%.0f, fan-out mean %.2f, think %.4f s and tool %.4f s mean, ancestor token hit ratio %.4f\n",
			numfmt.Group(d.Tasks), d.Depth.Min, d.Depth.Max, d.FanOut.Mean, d.ThinkTime.Mean, d.ToolTime.Mean, d.AncestorTokenHitRatio)
	}
	if m := rep.Media; m != nil {
		fmt.Fprintf(w, "  media: %s rows with media, %s images (%s bytes), %s audio clips (%.2f s), %s videos; kept as the input's rows carried them\n",
			numfmt.Group(m.RowsWithMedia), numfmt.Group(m.Images), numfmt.Group(m.ImageBytes), numfmt.Group(m.Audios), m.AudioSeconds, numfmt.Group(m.Videos))
	}
	if st := res.derive; st != nil {
		var parts []string
		if st.WindowSessionsDropped > 0 || c.Set["window"] {
			parts = append(parts, fmt.Sprintf("window dropped %d sessions (kept %d rows past its end, dropped %d inside it from sessions begun before)",
				st.WindowSessionsDropped, st.WindowRowsBeyond, st.WindowRowsBefore))
		}
		if st.SampleSessionsDropped > 0 {
			parts = append(parts, fmt.Sprintf("sample dropped %d sessions", st.SampleSessionsDropped))
		}
		if st.MaxISLRowsDropped > 0 {
			parts = append(parts, fmt.Sprintf("--max-isl dropped %d rows of %d sessions", st.MaxISLRowsDropped, st.MaxISLSessionsCut))
		}
		if c.PrefixRootMultiplier > 1 && rep.Cache != nil {
			parts = append(parts, fmt.Sprintf("root multiplier ×%d: ceiling %.4f before, %.4f expected after (formula)",
				c.PrefixRootMultiplier, st.CeilingBefore, st.ExpectedCeiling))
		}
		parts = append(parts, fmt.Sprintf("%s of %s sessions, %s new hash ids", numfmt.Group(int64(st.SessionsOut)), numfmt.Group(int64(st.SessionsIn)), numfmt.Group(st.NewIDs)))
		if res.inMemory != "" {
			parts = append(parts, "read whole into memory: "+res.inMemory)
		} else {
			parts = append(parts, "streamed row by row")
		}
		fmt.Fprintf(w, "  derive: %s\n", strings.Join(parts, "; "))
	}
	if st := res.generate; st != nil {
		s := fmt.Sprintf("%s sessions", numfmt.Group(int64(st.Sessions)))
		if len(st.PrefixTokens) > 0 {
			s += fmt.Sprintf(", prefix levels %v tokens walked by %d sessions (share %.4f)", st.PrefixTokens, st.Walkers, st.PrefixShare)
		}
		if st.RowsCut > 0 {
			s += fmt.Sprintf(", --max-isl cut %d turns of %d sessions", st.RowsCut, st.SessionsCut)
		}
		if c.TargetHitRatio > 0 {
			s += fmt.Sprintf(", hit ratio %.4f for target %g", st.HitRatio, c.TargetHitRatio)
		}
		if c.Set["working-set"] {
			ws, _ := analyze.ParseTokens(c.WorkingSet)
			s += fmt.Sprintf(", working set %s for target %s (%+.2f %%)", numfmt.Group(st.WorkingSetTokens), numfmt.Group(ws),
				100*float64(st.WorkingSetTokens-ws)/float64(ws))
		}
		fmt.Fprintf(w, "  generate: %s\n", s)
	}
}
