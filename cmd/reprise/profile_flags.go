package main

import (
	"github.com/urfave/cli/v3"
)

// profileRunFlags are AIPerf's flags that watch and report a run,
// mapped by flagmap.ProfileRunFlags (a profileHooks entry).
func profileRunFlags() []cli.Flag {
	const cat = "AIPerf"
	return []cli.Flag{
		&cli.FloatFlag{Name: "failed-request-threshold", Category: cat, Sources: envVars("failed-request-threshold"),
			Usage: "abort the run once more than `F` (a fraction, 0 to 1) of its measured requests failed, judged from the max(--concurrency, 10)-th to end: in-flight requests get the grace period, every file is written with run_info.stopped saying why, exit 3"},
		&cli.FloatFlag{Name: "stats-interval", Category: cat, Sources: envVars("stats-interval"),
			Usage: "print the progress line every `S` seconds (default 5, or 0.25 redrawn in place on a terminal)"},
		&cli.BoolFlag{Name: "extra-verbose", Aliases: []string{"vv"}, Category: cat, Sources: envVars("extra-verbose"),
			Usage: "log at debug level, reprise's most detailed (AIPerf's trace level)"},
		&cli.BoolFlag{Name: "output-tokens-mean-deterministic", Category: cat, Sources: envVars("output-tokens-mean-deterministic"),
			Usage: "send min_tokens equal to max_tokens with ignore_eos, so the server generates exactly the asked length (GenAI-Perf's flag; SGLang's generate endpoint gets min_new_tokens)"},
	}
}
