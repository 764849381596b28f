// Command reprise replays LLM-serving traces against inference servers with
// microsecond timing. See README.md for the commands and docs/format/cli.md
// for the stable flag contract.
package main

//go:generate sh -c "go run . completion bash > ../../docs/completion/reprise.bash"
//go:generate sh -c "go run . completion zsh > ../../docs/completion/reprise.zsh"
//go:generate sh -c "go run . completion fish > ../../docs/completion/reprise.fish"

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(runMain(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// runMain is main with the process's signals: the first SIGINT or SIGTERM
// stops a replay gracefully, the second at once (see interrupts).
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, abort, stop := interrupts()
	defer stop()
	return runAbortable(ctx, abort, args, stdin, stdout, stderr)
}

// interrupts turns the first SIGINT or SIGTERM into the cancellation of
// ctx (a replay stops sending and gives in-flight requests --grace) and
// the second into that of abort (in-flight requests are cancelled at once,
// the final telemetry scrape is skipped, what is finished is written).
// After the second, the signals' default action is back, so a third ends
// the process at once. stop releases the signals.
func interrupts() (ctx, abort context.Context, stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	abort, cancelAbort := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-ch:
			case <-done:
				return
			}
			if n == 0 {
				cancel()
				continue
			}
			cancelAbort()
			signal.Stop(ch)
			return
		}
	}()
	return ctx, abort, func() {
		close(done)
		signal.Stop(ch)
		cancel()
		cancelAbort()
	}
}
