package main

import (
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/replay"
)

// optionFlag spells each reprise.Options field that the library's errors
// name (by its path) as the replay command's users know it: its flag, or
// TRACE for the argument. The fields of Options.Replay are timingFlag's.
var optionFlag = map[string]string{
	"URL": "--url", "Model": "--model", "Endpoint": "--endpoint", "Targets": "--url", "URLPolicy": "--url-policy",
	"Adapter.Config": "--adapter-config", "Adapter.SHA256": "--adapter-sha256",
	"Adapter.Sandbox": "--adapter-sandbox", "Adapter.MemoryMiB": "--adapter-memory-mib",
	"Streaming": "--streaming", "IgnoreEOS": "--ignore-eos", "MaxTokensFromTrace": "--max-tokens-from-trace", "PrimePrefixes": "--prime-prefixes",
	"ExtraBody": "--extra-body", "Headers": "--header", "APIKey": "--api-key", "Timeout": "--timeout",
	"MaxResponseEvents": "--max-response-events", "MaxEventBytes": "--max-event-bytes",
	"MaxResponseBytes": "--max-response-bytes", "HTTP2": "--http2", "NoKernelTimestamps": "--no-kernel-timestamps",
	"MaxConnections": "--max-connections", "ConnReuse": "--connection-reuse-strategy", "Nice": "--nice",
	"NetworkLatency": "--network-latency-mean", "NetworkLatency.Mean": "--network-latency-mean", "NetworkLatency.Probe": "--network-latency-automatic",
	"NetworkLatency.ProbeInterval": "--network-latency-ping-interval",
	"Output.HTTPTiming":            "--show-trace-timing", "Output.HTTPTrace": "--export-http-trace",
	"Preflight.Skip": "--no-preflight", "Preflight.Timeout": "--preflight-timeout",
	"AbortAfterConnectFailures": "--abort-after-connect-failures",
	"BatchSize":                 "--batch-size", "QueryTokens": "--query-tokens",
	"Rankings": "--passages-stddev", "Rankings.PassagesStdDev": "--passages-stddev",
	"Rankings.PassageTokensStdDev": "--passage-tokens-stddev", "Rankings.QueryTokensStdDev": "--query-tokens-stddev",
	"Generation": "--endpoint", "Generation.RequestContentType": "--request-content-type",
	"Generation.DownloadVideo": "--download-video-content", "Generation.JobPollInterval": "--job-poll-interval",
	"Generation.JobTimeout": "--job-timeout", "Generation.AudioFile": "--transcribe-audio",
	"Generation.TranscribeSeconds": "--transcribe-seconds",
	"SessionHeader":                "--session-header", "CancelRate": "--cancel-rate", "CancelAfter": "--cancel-after",
	"Server.WaitForModel": "--wait-for-model", "Server.WaitMode": "--wait-mode", "Server.WaitInterval": "--wait-interval",
	"Server.ResetCache": "--reset-cache", "Server.ResetCachePath": "--reset-cache-path", "Server.ResetCacheTimeout": "--reset-cache-timeout",
	"Server.Profiler": "--server-profiler",
	"Warmup":          "--warmup-requests", "Warmup.Requests": "--warmup-requests", "Warmup.Duration": "--warmup-duration",
	"Warmup.Grace": "--warmup-grace", "Warmup.Concurrency": "--warmup-concurrency", "Warmup.ConcurrencyRamp": "--warmup-concurrency-ramp",
	"Warmup.RequestRate": "--warmup-request-rate", "Warmup.RateRamp": "--warmup-rate-ramp", "Warmup.Arrival": "--warmup-arrival",
	"Warmup.PrefillConcurrency": "--warmup-prefill-concurrency", "Warmup.PrefillConcurrencyRamp": "--warmup-prefill-concurrency-ramp",
	"Tokenizer": "--tokenizer", "UseServerTokenCount": "--use-server-token-count",
	"Synthetic":     "--isl", // a problem of the synthetic load as a whole
	"Synthetic.ISL": "--isl", "Synthetic.ISLStdDev": "--isl-stddev",
	"Synthetic.OSL": "--osl", "Synthetic.OSLStdDev": "--osl-stddev",
	"Synthetic.Sessions": "--num-sessions", "Synthetic.TurnsMean": "--session-turns-mean", "Synthetic.TurnsStdDev": "--session-turns-stddev",
	"Synthetic.TurnDelay": "--turn-delay", "Synthetic.TurnDelayStdDev": "--turn-delay-stddev",
	"Synthetic.SharedPrefix": "--shared-prefix-length", "Synthetic.PrefixGroups": "--prefix-groups", "Synthetic.UserContext": "--user-context-length",
	"Prompts.Seed": "--prompt-seed", "Prompts.HashMismatch": "--hash-mismatch",
	"Prompts.ISLCorrection": "--isl-correction", "Prompts.ApplyChatTemplate": "--apply-chat-template", "Prompts.Format": "--prompt-format",
	"Prompts.ContextMode": "--context-mode", "Prompts.Corpus": "--prompt-corpus", "Prompts.CacheBust": "--cache-bust",
	"Prompts.SharedSystemTokens": "--shared-system-prompt-length", "Prompts.UserContextTokens": "--user-context-prompt-length",
	"Trace.Entries": "--num-dataset-entries", "Trace.Sessions": "--num-sessions",
	"Trace.PublicDataset": "--public-dataset", "Trace.PublicSubset": "--hf-subset", "Trace.PublicFilters": "--dataset-filter", "TokenizerRevision": "--tokenizer-revision",
	"Trace.Path": "TRACE", "Trace.Format": "--trace-format", "Trace.BlockSize": "--block-size",
	"Trace.MaxInputTokens": "--max-input-tokens", "Trace.SpoolMiB": "--stdin-spool-mib",
	"Trace.SkipInvalid": "--skip-invalid", "Trace.DropFailed": "--drop-failed", "Trace.ModelFilter": "--model-filter",
	"Trace.Columns": "--prompt-column", "Trace.Columns.Prompt": "--prompt-column", "Trace.Columns.InputLength": "--input-len-column",
	"Trace.Columns.OutputLength": "--output-len-column", "Trace.Columns.Session": "--session-column",
	"Trace.Synthesis": "--synthesis-prefix-len-multiplier", "Trace.Synthesis.PrefixLenMultiplier": "--synthesis-prefix-len-multiplier",
	"Trace.Synthesis.PromptLenMultiplier": "--synthesis-prompt-len-multiplier", "Trace.Synthesis.OutputLenMultiplier": "--synthesis-output-len-multiplier",
	"Trace.Synthesis.PrefixRootMultiplier": "--synthesis-prefix-root-multiplier", "Trace.Synthesis.MaxOSL": "--synthesis-max-osl",
	"Trace.Columns.Timestamp": "--timestamp-column", "Trace.AllTurns": "--all-turns", "Trace.Sampling": "--dataset-sampling",
	"Goodput": "--goodput", "MinGoodFraction": "--min-good-fraction", "MaxErrorRate": "--max-error-rate",
	"Calibration": "--calibration",
	"Stability":   "--measurement-interval", "Stability.Interval": "--measurement-interval", "Stability.Percentage": "--stability-percentage",
	"Stability.MaxWindows": "--max-trials",
	"Output.Dir":           "--out", "Output.Overwrite": "--overwrite", "Output.Format": "--format",
	"Output.SingleFile": "--single-file", "Output.PartInterval": "--part-interval", "Output.PartRows": "--part-rows",
	"Output.ExportLevel": "--export-level", "Output.Export": "--export", "Output.ExportPrefix": "--profile-export-prefix", "Output.SliceDuration": "--slice-duration", "Output.ServerMetricsFormats": "--server-metrics-formats", "UI": "--ui",
	"Telemetry.EndpointMetrics": "--no-server-metrics", "Telemetry.ServerMetrics": "--server-metrics",
	"Telemetry.Interval": "--metrics-interval", "Telemetry.GPU": "--gpu-telemetry", "Telemetry.DCGMURL": "--gpu-telemetry",
	"Telemetry.MetricsAddr": "--metrics-addr", "Telemetry.MetricsLinger": "--metrics-linger",
	"Telemetry.OTLP": "--otel-url", "Telemetry.OTLP.URL": "--otel-url", "Telemetry.OTLP.Stream": "--stream",
	"Telemetry.OTLP.ResourceAttributes": "--otel-resource-attributes", "Telemetry.OTLP.Provider": "--gen-ai-provider",
	"Telemetry.MLflow": "--mlflow-tracking-uri", "Telemetry.MLflow.TrackingURI": "--mlflow-tracking-uri",
	"Telemetry.MLflow.Experiment": "--mlflow-experiment", "Telemetry.MLflow.RunName": "--mlflow-run-name",
	"Telemetry.MLflow.ParentRunID": "--mlflow-parent-run-id", "Telemetry.MLflow.Tags": "--mlflow-tag",
	"Telemetry.MLflow.ArtifactGlobs": "--mlflow-artifact-glob", "Telemetry.OTLP.Headers": "--otel-url",
	"Profile.CPU": "--cpuprofile", "Profile.Heap": "--memprofile",
	"Accuracy": "--accuracy-benchmark", "Accuracy.Benchmark": "--accuracy-benchmark", "Accuracy.Data": "--accuracy-data", "Accuracy.Revision": "--accuracy-revision",
	"Accuracy.File": "--accuracy-file", "Accuracy.Tasks": "--accuracy-tasks", "Accuracy.Shots": "--accuracy-shots",
	"Accuracy.CoT": "--accuracy-cot", "Accuracy.Grader": "--accuracy-grader", "Accuracy.SystemPrompt": "--accuracy-system-prompt",
	"Accuracy.MaxTokens": "--accuracy-max-tokens", "Accuracy.Limit": "--accuracy-limit", "Accuracy.Mix": "--accuracy-mix",
	"Accuracy.Temperature": "--accuracy-temperature", "Accuracy.Verbose": "--accuracy-verbose",
}

// optionValueFlag spells a field given with a value ({Path=value} in the
// library's messages) where the flag and the value do not say it:
// a negated boolean, an example with the short flag.
var optionValueFlag = map[string]string{
	"Streaming=false":          "--no-streaming",
	"Headers=X-Tenant: a":      "-H 'X-Tenant: a'",
	"Synthetic.ISL=N":          "--isl N",
	"Synthetic.OSL=N":          "--osl N",
	"Prompts.HashMismatch=fit": "--hash-mismatch fit",
}

// optionFlagName spells an Options field path, or a path with a value
// ("Output.Dir", "Streaming=false"), as the replay command's flag. A path
// without a flag is returned as it is.
func optionFlagName(path string) string {
	if f, ok := optionValueFlag[path]; ok {
		return f
	}
	if rest, ok := strings.CutPrefix(path, "Targets["); ok {
		// Targets[i].Field: the (i+1)-th further --url's.
		is, field, _ := strings.Cut(rest, "]")
		i, _ := strconv.Atoi(is)
		t := strconv.Itoa(i + 1)
		switch field {
		case ".Model":
			return "--target-model " + t + "=…"
		case ".Headers":
			return "--target-header " + t + "=…"
		}
		return "--url (target " + t + ")"
	}
	p, v, hasValue := strings.Cut(path, "=")
	f, ok := optionFlag[p]
	if t, isReplay := strings.CutPrefix(p, "Replay."); !ok && isReplay {
		_, ok = timingFlag[t]
		f = timingFlagName(t)
	}
	if !ok {
		return path
	}
	if hasValue {
		return f + " " + v
	}
	return f
}

// flagSpelled returns err with the fields that its *reprise.FieldErrors
// (Options paths) and *replay.FieldErrors (replay.Config fields) name
// spelled as flags ("Replay.Speedup needs the fixed schedule (Replay.Mode
// fixed)" reads "--speedup needs the fixed schedule (--mode fixed)"),
// wherever they are in err's tree. errors.Is and errors.As see through it
// to err. An err without a field error is returned as is.
func flagSpelled(err error) error {
	if err == nil {
		return nil
	}
	var opts []*reprise.FieldError
	var timing []*replay.FieldError
	var walk func(error)
	walk = func(e error) {
		switch u := e.(type) {
		case *reprise.FieldError:
			opts = append(opts, u)
			for _, x := range u.Unwrap() {
				walk(x) // a replay.FieldError among its operands
			}
		case *replay.FieldError:
			timing = append(timing, u) // its own wrapped errors are not field errors
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	if len(opts) == 0 && len(timing) == 0 {
		return err
	}
	msg := err.Error()
	for _, fe := range opts {
		msg = strings.Replace(msg, fe.Error(), fe.Format(optionFlagName), 1)
	}
	for _, fe := range timing {
		msg = strings.Replace(msg, fe.Error(), fe.Format(timingFlagName), 1)
	}
	return &spelledError{msg: msg, err: err}
}

// spelledError is an error with its message rewritten (flagSpelled).
type spelledError struct {
	msg string
	err error
}

func (e *spelledError) Error() string { return e.msg }
func (e *spelledError) Unwrap() error { return e.err }
