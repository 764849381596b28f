package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/replay"
)

// profileHubFlags are the profile command's flags for AIPerf's exports
// that profile_hub.go maps (profileHubOptions).
func profileHubFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "export-outputs-json", Category: "AIPerf", Sources: envVars("export-outputs-json"),
			Usage: "also write outputs.json: every request's response text with its metadata and metrics (AIPerf's shape; secret-looking JSON keys and the API key redacted)"},
	}
}

// profileHubOptions maps profileHubFlags onto o.
func profileHubOptions(cmd flagmap.Values, o *reprise.Options, _ *replay.Config) error {
	o.Output.ExportOutputs = cmd.Bool("export-outputs-json")
	return nil
}
