package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
)

// responseCapFlags are the flags of the caps on what one response may
// hold (reprise.Options.MaxResponse…, MaxEventBytes).
func responseCapFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-response-events", Value: reprise.DefaultMaxResponseEvents, Category: "Target", Sources: envVars("max-response-events"),
			Usage: "end a response of more than `N` events as too_large (0 = no cap)"},
		&cli.IntFlag{Name: "max-event-bytes", Value: reprise.DefaultMaxEventBytes, Category: "Target", Sources: envVars("max-event-bytes"),
			Usage: "end a response with an SSE line, event or NDJSON line of more than `BYTES` as too_large (0 = no cap)"},
		&cli.Int64Flag{Name: "max-response-bytes", Value: reprise.DefaultMaxResponseBytes, Category: "Target", Sources: envVars("max-response-bytes"),
			Usage: "end a response whose body passes `BYTES`, streamed or not, as too_large (0 = no cap)"},
	}
}
