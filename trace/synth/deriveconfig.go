package synth

import (
	"errors"
	"fmt"
	"math"

	"github.com/reprise-bench/reprise/trace"
)

// DeriveConfig configures [Derive]. Build it with [NewDeriveConfig]; the
// zero value is invalid (a zero speed-up). Validate does not change it.
type DeriveConfig struct {
	// Speedup divides every arrival offset and session delay (2 = twice
	// the load in half the time). Default 1.
	Speedup float64
	// PrefixLenMultiplier stretches (> 1) or squeezes (< 1) the shared
	// prefix of every row: a prefix of s shared blocks becomes ⌈s·p⌉
	// blocks (p > 1) or max(1, ⌊s·p⌋) (p < 1), as in AIPerf, and two rows
	// that shared s blocks share exactly that many new ones. Default 1.
	PrefixLenMultiplier float64
	// PrefixRootMultiplier K replicates the prefix trees into K
	// independent copies: each session lands in one copy, uniformly at
	// random (seeded). Default 1. See [RootMultiplierCeiling].
	PrefixRootMultiplier int
	// PromptLenMultiplier scales the unique tail of every row (the tokens
	// after its shared prefix; the whole prompt of rows without hash ids):
	// ⌊tail·q⌋ tokens. Default 1.
	PromptLenMultiplier float64
	// OutputLenMultiplier scales output lengths: max(1, round(osl·m)).
	// Default 1.
	OutputLenMultiplier float64
	// MaxISL drops rows whose input length (after the multipliers) exceeds
	// it, with the rest of their session. MaxOSL caps output lengths.
	// 0 = no limit.
	MaxISL, MaxOSL int
	// Window keeps the sessions whose first turn arrives in it, whole, and
	// re-bases arrivals to its start. The zero Window keeps everything.
	Window Window
	// Sample keeps this fraction of the sessions (after the window), chosen
	// uniformly at random without replacement: exactly round(Sample·n).
	// Default 1.
	Sample float64
	// Seed seeds the sample and the copy each session lands in.
	Seed uint64
	// Format is the output format the rows are shaped for: FormatBailian
	// needs a timestamp and a chat id on every row. Default mooncake.
	Format trace.Format
}

// NewDeriveConfig returns the identity transformation: every multiplier 1,
// no window, no sample, no limits, [DefaultSeed], Mooncake output.
func NewDeriveConfig() DeriveConfig {
	return DeriveConfig{
		Speedup: 1, PrefixLenMultiplier: 1, PrefixRootMultiplier: 1,
		PromptLenMultiplier: 1, OutputLenMultiplier: 1, Sample: 1,
		Seed: DefaultSeed, Format: trace.FormatMooncake,
	}
}

// Validate reports every invalid setting at once.
func (c DeriveConfig) Validate() error {
	var errs []error
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s %g: want a finite number > 0", name, v))
		}
	}
	pos("--speedup", c.Speedup)
	pos("--prefix-len-multiplier", c.PrefixLenMultiplier)
	pos("--prompt-len-multiplier", c.PromptLenMultiplier)
	pos("--output-len-multiplier", c.OutputLenMultiplier)
	if c.PrefixRootMultiplier < 1 {
		errs = append(errs, fmt.Errorf("--prefix-root-multiplier %d: want a whole number ≥ 1", c.PrefixRootMultiplier))
	}
	if !(c.Sample > 0 && c.Sample <= 1) {
		errs = append(errs, fmt.Errorf("--sample %g: want a fraction in (0, 1]", c.Sample))
	}
	if c.MaxISL < 0 {
		errs = append(errs, fmt.Errorf("--max-isl %d: want ≥ 1 token, or 0 for no limit", c.MaxISL))
	}
	if c.MaxOSL < 0 {
		errs = append(errs, fmt.Errorf("--max-osl %d: want ≥ 1 token, or 0 for no limit", c.MaxOSL))
	}
	if c.Window.HasEnd && c.Window.End <= c.Window.Start {
		errs = append(errs, fmt.Errorf("--window %v: the end is not after the start", c.Window))
	}
	if err := checkOutputFormat(c.Format); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkOutputFormat reports an output format synth cannot write (it writes
// Mooncake and Bailian); DeriveConfig and GenerateConfig both check with it.
func checkOutputFormat(f trace.Format) error {
	if f != trace.FormatMooncake && f != trace.FormatBailian {
		return fmt.Errorf("--output-format %q: want mooncake or bailian", f)
	}
	return nil
}
