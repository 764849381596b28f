package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise"
)

// optionsWithoutFlag are the reprise.Options fields the replay command
// sets without a flag of their own: callbacks and what the TRACE argument
// and the tests set; and the parts of a value one flag sets whole
// (--shard I/N).
var optionsWithoutFlag = map[string]bool{
	"Progress": true, "Log": true, "Abort": true, "OnStart": true, "OnEnd": true,
	"Trace.Reader": true, "Trace.Hold": true,
	"Replay.Shard.Index": true, "Replay.Shard.Count": true,
	// profile's AIPerf behaviours: the model id as tokenizer when no
	// --tokenizer is named, and profile's --public-dataset.
	"TokenizerFromModel": true, "Trace.PublicDataset": true, "Trace.PublicSubset": true, "Trace.PublicFilters": true, "Output.ExportPrefix": true, "Output.SliceDuration": true,
	"Output.ServerMetricsFormats": true,
	// profile's dataset-side flags (profile_dataset.go) and
	// --export-outputs-json (profile_hub.go).
	"ServerOutputLength": true, "Synthetic.SeqDist": true, "Synthetic.Entries": true, "Synthetic.PrefixRandom": true, "Trace.Entries": true,
	"Output.ExportOutputs": true,
	// profile's --synthesis-* multipliers, --prompt-corpus and --cache-bust (profile_synth.go).
	"Trace.Synthesis": true, "Prompts.Corpus": true, "Prompts.CacheBust": true,
	// profile's stability stop, -p/-s/--max-trials (profile_stability.go).
	"Stability": true, "Stability.Interval": true, "Stability.Percentage": true, "Stability.MaxWindows": true, "Replay.Watch": true,
	// profile's --adaptive-scale and its flags (flagmap.ProfileAdaptive).
	"Adaptive": true, "Replay.Adaptive": true,
	// profile's --output-tokens-mean-deterministic, --failed-request-threshold
	// and --stats-interval (profile_flags.go, flagmap.ProfileRunFlags).
	"MinTokens": true, "FailedRequestThreshold": true, "ProgressInterval": true,
}

// optionPaths returns the path of every field of t, nested structs'
// fields included ("Output.Dir"), and the structs themselves.
func optionPaths(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		p := prefix + f.Name
		out = append(out, p)
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() != "time" {
			out = append(out, optionPaths(f.Type, p+".")...)
		}
	}
	return out
}

// TestEveryOptionHasAFlag: every reprise.Options field, and so every
// Field a reprise.FieldError can name (the root package's
// TestConfigErrorsNameFields checks that each names one), is spelled as a
// flag (or TRACE), so no library spelling reaches the command line.
func TestEveryOptionHasAFlag(t *testing.T) {
	flags := map[string]bool{}
	for _, f := range replayCommandFlags() {
		flags["--"+f] = true
	}
	flags["TRACE"] = true
	for _, p := range optionPaths(reflect.TypeFor[reprise.Options](), "") {
		if optionsWithoutFlag[p] || p == "Replay" || p == "Adapter" || p == "Prompts" || p == "Trace" ||
			p == "Output" || p == "Telemetry" || p == "Profile" || p == "Preflight" || p == "Server" {
			continue
		}
		spelled := optionFlagName(p)
		if spelled == p {
			t.Errorf("Options.%s has no flag in optionFlag or timingFlag", p)
			continue
		}
		if !flags[spelled] {
			t.Errorf("Options.%s is spelled %q, which is not a flag of the replay command", p, spelled)
		}
	}
	for k, v := range optionValueFlag {
		name, _, _ := strings.Cut(v, " ")
		if !flags[name] && !strings.HasPrefix(v, "-H ") {
			t.Errorf("optionValueFlag[%q] = %q: %s is not a flag of the replay command", k, v, name)
		}
	}
}

// replayCommandFlags returns the names of the replay command's flags and
// of their negations.
func replayCommandFlags() []string {
	var out []string
	for _, f := range newRoot(&app{}).Command("replay").Flags {
		out = append(out, f.Names()...)
		for _, n := range f.Names() {
			out = append(out, "no-"+n)
		}
	}
	return out
}

// TestOptionFlagName: a field path, a path with a value and a
// replay.Config path are spelled as flags; an unknown path is left as it
// is.
func TestOptionFlagName(t *testing.T) {
	for in, want := range map[string]string{
		"Output.Dir": "--out", "Trace.Path": "TRACE", "Replay.MaxLateness": "--max-lateness",
		"Streaming=false": "--no-streaming", "Output.Export=aiperf": "--export aiperf",
		"Replay.NoSuchField": "Replay.NoSuchField", "Nope": "Nope",
	} {
		if got := optionFlagName(in); got != want {
			t.Errorf("optionFlagName(%q) = %q, want %q", in, got, want)
		}
	}
}
