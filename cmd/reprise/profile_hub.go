package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/replay"
)

// profileHubFlags are the profile command's flags for AIPerf's Hub
// datasets (flagmap maps them) and exports (profileHubOptions).
func profileHubFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "hf-subset", Category: "AIPerf", Sources: envVars("hf-subset"),
			Usage: "with a Hub --public-dataset, read its config (subset) `NAME` instead of AIPerf's; an unknown one lists the dataset's"},
		&cli.StringSliceFlag{Name: "dataset-filter", Category: "AIPerf", Sources: envVars("dataset-filter"),
			Usage: "with a Hub --public-dataset, send only the rows whose column KEY, as text, equals VALUE (`KEY=VALUE`; repeat it: all must hold); an unknown KEY lists the columns"},
		&cli.BoolFlag{Name: "export-outputs-json", Category: "AIPerf", Sources: envVars("export-outputs-json"),
			Usage: "also write outputs.json: every request's response text with its metadata and metrics (AIPerf's shape; secret-looking JSON keys and the API key redacted)"},
	}
}

// profileHubOptions maps profileHubFlags onto o.
func profileHubOptions(cmd flagmap.Values, o *reprise.Options, _ *replay.Config) error {
	o.Output.ExportOutputs = cmd.Bool("export-outputs-json")
	return nil
}
