// Command reprise replays LLM-serving traces against inference servers with
// microsecond timing. See README.md for the commands and docs/format/cli.md
// for the stable flag contract.
package main

//go:generate sh -c "go run . completion bash > ../../docs/completion/reprise.bash"
//go:generate sh -c "go run . completion zsh > ../../docs/completion/reprise.zsh"
//go:generate sh -c "go run . completion fish > ../../docs/completion/reprise.fish"

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
