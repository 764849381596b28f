package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace/synth"
)

// profileSynthFlags are AIPerf's trace-synthesis and prompt-shaping flags
// of the profile command: the --synthesis-* multipliers applied to
// --input-file in memory (reprise synthesize's, trace/synth).
func profileSynthFlags() []cli.Flag {
	const cat = "AIPerf"
	return []cli.Flag{
		&cli.FloatFlag{Name: "synthesis-prefix-len-multiplier", Value: 1, Category: cat, Sources: envVars("synthesis-prefix-len-multiplier"),
			Usage: "--input-file: stretch (> 1) or squeeze (< 1) every row's shared prefix by `X` (reprise synthesize's --prefix-len-multiplier)"},
		&cli.IntFlag{Name: "synthesis-prefix-root-multiplier", Value: 1, Category: cat, Sources: envVars("synthesis-prefix-root-multiplier"),
			Usage: "--input-file: spread the sessions over `K` disjoint copies of the prefix tree, seeded by --random-seed (synthesize's --prefix-root-multiplier)"},
		&cli.FloatFlag{Name: "synthesis-prompt-len-multiplier", Value: 1, Category: cat, Sources: envVars("synthesis-prompt-len-multiplier"),
			Usage: "--input-file: scale every row's unique tail (the tokens after its shared prefix) by `X`"},
		&cli.FloatFlag{Name: "synthesis-output-len-multiplier", Value: 1, Category: cat, Sources: envVars("synthesis-output-len-multiplier"),
			Usage: "--input-file: output lengths become max(1, round(osl·`X`))"},
		&cli.IntFlag{Name: "synthesis-max-osl", Category: cat, Sources: envVars("synthesis-max-osl"),
			Usage: "--input-file: cap every output length at `N` tokens"},
		&cli.StringFlag{Name: "cache-bust", Category: cat, Sources: envVars("cache-bust"),
			Usage: "`TARGET` none, system_prefix, system_suffix, first_turn_prefix or first_turn_suffix: any but none salts this run's prompt words at random, so no prompt shares a cached block with an earlier run's (lengths stay exact; sharing within the run is kept)"},
		&cli.StringFlag{Name: "prompt-corpus", Category: cat, Sources: envVars("prompt-corpus"),
			Usage: "synthesized prompts are made of the words of `CORPUS`: sonnet (Shakespeare's sonnets) or coding (Go source code), in its order; lengths stay exact (its words that are one token each)"},
	}
}

// profileSynth maps the flags of profileSynthFlags onto o.
func profileSynth(v flagmap.Values, o *reprise.Options, rc *replay.Config) error {
	o.Prompts.Corpus, o.Prompts.CacheBust = v.String("prompt-corpus"), v.String("cache-bust")
	names := []string{"synthesis-prefix-len-multiplier", "synthesis-prefix-root-multiplier", "synthesis-prompt-len-multiplier",
		"synthesis-output-len-multiplier", "synthesis-max-osl"}
	for _, n := range names {
		if v.IsSet(n) {
			c := synth.NewDeriveConfig()
			c.PrefixLenMultiplier, c.PrefixRootMultiplier = v.Float(names[0]), v.Int(names[1])
			c.PromptLenMultiplier, c.OutputLenMultiplier, c.MaxOSL = v.Float(names[2]), v.Float(names[3]), v.Int(names[4])
			c.Seed = rc.Seed
			o.Trace.Synthesis = &c
			break
		}
	}
	return nil
}
