package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/engine"
)

// responseCaps are the caps on what one response may hold
// (engine.Config.MaxResponse…, MaxEventBytes).
type responseCaps struct {
	Events     int
	EventBytes int
	Bytes      int64
}

// responseCapFlags are the flags of responseCaps, with the engine's
// defaults.
func responseCapFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-response-events", Value: engine.DefaultMaxResponseEvents, Category: "Target", Sources: envVars("max-response-events"),
			Usage: "end a response of more than `N` events as too_large (0 = no cap)"},
		&cli.IntFlag{Name: "max-event-bytes", Value: engine.DefaultMaxEventBytes, Category: "Target", Sources: envVars("max-event-bytes"),
			Usage: "end a response with an SSE line, event or NDJSON line of more than `BYTES` as too_large (0 = no cap)"},
		&cli.Int64Flag{Name: "max-response-bytes", Value: engine.DefaultMaxResponseBytes, Category: "Target", Sources: envVars("max-response-bytes"),
			Usage: "end a response whose body passes `BYTES`, streamed or not, as too_large (0 = no cap)"},
	}
}

func responseCapsFrom(cmd *cli.Command) responseCaps {
	return responseCaps{Events: cmd.Int("max-response-events"), EventBytes: cmd.Int("max-event-bytes"), Bytes: cmd.Int64("max-response-bytes")}
}

// apply sets the caps in an engine configuration (which validates them).
func (c responseCaps) apply(ec *engine.Config) {
	ec.MaxResponseEvents, ec.MaxEventBytes, ec.MaxResponseBytes = c.Events, c.EventBytes, c.Bytes
}
