package main

import "github.com/urfave/cli/v3"

// commands lists the subcommands in the order help shows them. Each lives in
// its own file as a constructor taking the app.
func commands(a *app) []*cli.Command {
	return []*cli.Command{
		mockServerCommand(a),
		analyzeTraceCommand(a),
		replayCommand(a),
		synthesizeCommand(a),
		summarizeCommand(a),
		adaptersCommand(a),
	}
}
