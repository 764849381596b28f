package main

import (
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
)

// profileDatasetFlags are AIPerf's dataset-side flags of the profile
// command (design 0027): synthetic prompt shaping.
func profileDatasetFlags() []cli.Flag {
	const cat = "AIPerf"
	return []cli.Flag{
		&cli.StringFlag{Name: "seq-dist", Aliases: []string{"sequence-distribution"}, Category: cat, Sources: cli.EnvVars("REPRISE_SEQ_DIST"),
			Usage: "synthetic load: AIPerf's mixture of lengths `ISL,OSL:PCT;…` (ISL|SD and OSL|SD add a standard deviation; also [(ISL,OSL):PCT,…] and {\"pairs\":[…]}); each request draws a pair, seeded by --random-seed"},
	}
}

// profileDataset maps the dataset-side flags onto o (after the rest of
// profileOptions).
func profileDataset(cmd *cli.Command, o *reprise.Options) error {
	// AIPerf sends a row without an output length as it is: the server
	// decides (no max_tokens, so no ignore_eos either).
	o.ServerOutputLength = true
	if s := cmd.String("seq-dist"); s != "" {
		pairs, err := reprise.ParseSeqDist(s)
		if err != nil {
			return fmt.Errorf("--seq-dist: %w", err)
		}
		if cmd.IsSet("isl") || cmd.IsSet("osl") || cmd.IsSet("isl-stddev") || cmd.IsSet("osl-stddev") {
			return fmt.Errorf("--seq-dist gives the lengths: drop --isl, --osl and their standard deviations")
		}
		o.Synthetic.SeqDist = pairs
		o.Synthetic.ISL, o.Synthetic.OSL = reprise.SeqDistMeans(pairs)
	}
	return nil
}
