package main

import "github.com/urfave/cli/v3"

// commands lists the subcommands in the order help shows them: the main
// job first. Each lives in
// its own file as a constructor taking the app.
func commands(a *app) []*cli.Command {
	return []*cli.Command{
		replayCommand(a),
		profileCommand(a),
		plotCommand(a),
		analyzeTraceCommand(a),
		synthesizeCommand(a),
		summarizeCommand(a),
		compareCommand(a),
		reportCommand(a),
		mockServerCommand(a),
		adaptersCommand(a),
		anonymizeCommand(a),
		recordCommand(a),
		mergeCommand(a),
		// sweep (issue 21)
		sweepCommand(a),
		selftestCommand(a),
		configCommand(a),
	}
}
