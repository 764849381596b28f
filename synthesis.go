package reprise

import (
	"log/slog"
	"math"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/synth"
)

// checkSynthesis reports the problems of o.Trace.Synthesis (AIPerf's
// --synthesis-* options), each naming its field.
func checkSynthesis(o *Options, bad func(path, format string, args ...any)) {
	s := o.Trace.Synthesis
	if s == nil {
		return
	}
	if !hasTrace(o) && o.Trace.PublicDataset == "" {
		bad("Trace.Synthesis", "{Trace.Synthesis} reshapes a trace: give one ({Trace.Path})")
	}
	pos := func(field string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			bad("Trace.Synthesis."+field, "{Trace.Synthesis."+field+"} %v: want a finite number > 0 (1 = unchanged)", v)
		}
	}
	pos("PrefixLenMultiplier", s.PrefixLenMultiplier)
	pos("PromptLenMultiplier", s.PromptLenMultiplier)
	pos("OutputLenMultiplier", s.OutputLenMultiplier)
	if s.PrefixRootMultiplier < 1 {
		bad("Trace.Synthesis.PrefixRootMultiplier", "{Trace.Synthesis.PrefixRootMultiplier} %d: want a whole number ≥ 1 (1 = one tree)", s.PrefixRootMultiplier)
	}
	if s.MaxOSL < 0 {
		bad("Trace.Synthesis.MaxOSL", "{Trace.Synthesis.MaxOSL} %d: want ≥ 1 token, or 0 for no cap", s.MaxOSL)
	}
	if s.MaxISL != 0 {
		bad("Trace.Synthesis.MaxISL", "{Trace.Synthesis.MaxISL} %d: use {Trace.MaxInputTokens} with {Trace.SkipInvalid} (rows over it are left out as they are read)", s.MaxISL)
	}
}

// reshaping reports whether o's trace is reshaped before the run.
func reshaping(o *Options) bool {
	return o.Trace.Synthesis != nil && !o.Trace.Synthesis.Identity()
}

// reshapeRows applies o.Trace.Synthesis to the rows of the trace (held
// whole) and logs what it changed.
func reshapeRows(o *Options, rows []trace.Row, log *slog.Logger) ([]trace.Row, error) {
	cfg := *o.Trace.Synthesis
	cfg.Speedup, cfg.Sample, cfg.Window, cfg.Format = 1, 1, synth.Window{}, trace.FormatMooncake
	out, st, err := synth.Reshape(rows, cfg)
	if err != nil {
		return nil, err
	}
	if log != nil {
		log.Info("trace reshaped (AIPerf's --synthesis-* options)",
			"prefix_len_multiplier", cfg.PrefixLenMultiplier, "prompt_len_multiplier", cfg.PromptLenMultiplier,
			"prefix_root_multiplier", cfg.PrefixRootMultiplier, "output_len_multiplier", cfg.OutputLenMultiplier,
			"max_osl", cfg.MaxOSL, "osl_capped", st.OSLCapped, "new_hash_ids", st.NewIDs,
			"ceiling_before", st.CeilingBefore, "expected_ceiling", st.ExpectedCeiling)
	}
	return out, nil
}
