package adapters

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/wasm"
)

// List writes the table of the endpoint adapters in this binary to w: the
// native ones, then every shipped Wasm adapter (loaded, with log, to read
// its path, size and hash).
func List(ctx context.Context, w io.Writer, log *slog.Logger) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tLANGUAGE\tPATH\tSIZE\tSHA256\tAPI")
	for _, n := range native.List() {
		fmt.Fprintf(tw, "%s\tnative\tGo\t%s\t-\t-\t%s\n", n.Name, n.Adapter.Info().Path, n.API)
	}
	for _, name := range wasm.ShippedNames() {
		ad, err := wasm.Load(ctx, name, wasm.Config{Log: log})
		if err != nil {
			return err
		}
		d := ad.Describe()
		fmt.Fprintf(tw, "%s\twasm\t%s\t%s\t%s\t%s\t%s\n", name, wasm.ShippedLanguage(name), d.Path, byteSize(ad.Size()), ad.SHA256()[:16], wasm.ShippedAPI(name))
		ad.Close(ctx)
	}
	return tw.Flush()
}

// Inspect loads the Wasm adapter spec (a .wasm file or a shipped name)
// and writes its description, hash and imports to w, one "key: value" a
// line. An adapter that does not load is a usage error (exit code 2).
func Inspect(ctx context.Context, w io.Writer, spec string, log *slog.Logger) error {
	ad, err := wasm.Load(ctx, spec, wasm.Config{Log: log})
	if err != nil {
		return exitcode.UsageError(err, "")
	}
	defer ad.Close(ctx)
	d := ad.Describe()
	fmt.Fprintf(w, "name:           %s\n", d.Name)
	fmt.Fprintf(w, "version:        %s\n", d.Version)
	fmt.Fprintf(w, "source:         %s\n", ad.Source())
	if l := wasm.ShippedLanguage(spec); l != "" {
		fmt.Fprintf(w, "language:       %s\n", l)
	}
	fmt.Fprintf(w, "sha256:         %s\n", ad.SHA256())
	fmt.Fprintf(w, "size:           %s\n", byteSize(ad.Size()))
	fmt.Fprintf(w, "abi:            v%d\n", d.ABI)
	fmt.Fprintf(w, "path:           %s\n", d.Path)
	fmt.Fprintf(w, "builds:         %v\n", d.Builds)
	fmt.Fprintf(w, "parses:         %v\n", d.Parses)
	fmt.Fprintf(w, "framing:        %s\n", d.Framing)
	fmt.Fprintf(w, "tokenizer:      %v\n", d.NeedsTokenizer)
	fmt.Fprintf(w, "records/event:  %d\n", d.MaxRecordsPerEvent)
	fmt.Fprintf(w, "events/call:    %d\n", d.MaxEventsPerCall)
	fmt.Fprintf(w, "interruptible:  %v\n", ad.Interruptible())
	imp := ad.Imports()
	if len(imp) == 0 {
		imp = []string{"(none)"}
	}
	fmt.Fprintf(w, "imports:        %s\n", strings.Join(imp, ", "))
	return nil
}

// byteSize is n bytes for people: B, KiB or MiB with one decimal.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
