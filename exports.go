package reprise

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/mlflow"
	"github.com/reprise-bench/reprise/internal/otlp"
)

// The streams of [OTLPOptions.Stream] (AIPerf's --stream): which of the
// live metrics are pushed.
const (
	// StreamDefault pushes every live metric (docs/format/live-metrics.md).
	StreamDefault = "default"
	// StreamMetrics pushes the per-request metrics: the TTFT, TTFO, ITL,
	// latency and lateness histograms and the token counters.
	StreamMetrics = "metrics"
	// StreamTiming pushes the run's progress: requests ended by outcome,
	// requests in flight and the intended rate.
	StreamTiming = "timing"
)

// OTLPOptions say where a run's live metrics are pushed besides being
// served for a scrape (AIPerf's --otel-url family): the same metrics
// (docs/format/live-metrics.md), every Telemetry.Interval and once more
// when the requests are done, as OTLP/HTTP with the JSON encoding. A
// collector that does not answer is warned about once; the run goes on.
type OTLPOptions struct {
	// URL is the collector (http(s)://HOST:PORT; /v1/metrics is appended
	// unless the path ends with it); empty pushes nothing.
	URL string
	// Stream is StreamDefault (""), StreamMetrics or StreamTiming.
	Stream string
	// ResourceAttributes are added to the resource (and replace the ones
	// reprise sets of the same key).
	ResourceAttributes map[string]string
	// Provider, when not empty, is the resource's gen_ai.provider.name
	// (and its older name gen_ai.system): openai, vllm, …
	Provider string
	// Headers are sent with every push; nil reads
	// OTEL_EXPORTER_OTLP_METRICS_HEADERS or OTEL_EXPORTER_OTLP_HEADERS
	// (k=v,… as OpenTelemetry's SDKs take them).
	Headers map[string]string
}

// MLflowOptions say which MLflow tracking server a finished run is
// logged to (AIPerf's --mlflow-* flags): a run in Experiment with the
// summary's metrics, the manifest's options as parameters, Tags, and the
// run directory's files matching ArtifactGlobs as artifacts.
type MLflowOptions struct {
	// TrackingURI is the server (http(s)://HOST:PORT); empty logs nothing.
	TrackingURI string
	// Experiment is created when missing; empty is the server's default.
	Experiment string
	// RunName is the run's name (empty: the run directory's name).
	RunName string
	// ParentRunID nests the run under another (a sweep's, say).
	ParentRunID string
	// Tags are the run's tags.
	Tags map[string]string
	// ArtifactGlobs select the run directory's files to upload (nil:
	// AIPerf's list, every JSON, CSV, JSON Lines, Parquet and image file).
	ArtifactGlobs []string
}

// checkExports reports the problems of o.Telemetry.OTLP and
// o.Telemetry.MLflow.
func checkExports(o *Options, bad func(path, format string, args ...any)) {
	t := &o.Telemetry
	if t.OTLP.URL != "" {
		if _, err := otlp.MetricsURL(t.OTLP.URL); err != nil {
			bad("Telemetry.OTLP.URL", "{Telemetry.OTLP.URL} %w", err)
		}
	}
	switch t.OTLP.Stream {
	case "", StreamDefault, StreamMetrics, StreamTiming:
	default:
		bad("Telemetry.OTLP.Stream", "{Telemetry.OTLP.Stream} %q: want default, metrics or timing", t.OTLP.Stream)
	}
	for k := range t.OTLP.ResourceAttributes {
		if strings.TrimSpace(k) == "" {
			bad("Telemetry.OTLP.ResourceAttributes", "{Telemetry.OTLP.ResourceAttributes}: an attribute has an empty key; give KEY=VALUE")
		}
	}
	if u := t.MLflow.TrackingURI; u != "" {
		if err := mlflow.CheckURI(u); err != nil {
			bad("Telemetry.MLflow.TrackingURI", "{Telemetry.MLflow.TrackingURI} %w", err)
		}
	}
	for _, g := range t.MLflow.ArtifactGlobs {
		if _, err := filepath.Match(strings.TrimPrefix(g, "**/"), "x"); err != nil {
			bad("Telemetry.MLflow.ArtifactGlobs", "{Telemetry.MLflow.ArtifactGlobs} %q: %w", g, err)
		}
	}
}

// streamFamilies are the live metrics each stream pushes besides
// reprise_run_info; the default stream pushes every family.
var streamFamilies = map[string][]string{
	StreamMetrics: {livemetrics.NameTTFT, livemetrics.NameTTFO, livemetrics.NameITL, livemetrics.NameE2E, livemetrics.NameLateness,
		livemetrics.NameInputTokens, livemetrics.NameOutputTokens},
	StreamTiming: {livemetrics.NameRequests, livemetrics.NameInFlight, livemetrics.NameIntendedRate},
}

// otlpRun is a run's pusher; nil (no --otel-url) is a no-op.
type otlpRun struct {
	p    *otlp.Pusher
	done bool
}

// startOTLP starts pushing m every Telemetry.Interval, when o asks for it.
func startOTLP(ctx context.Context, o *Options, m *livemetrics.Metrics, info summary.RunInfo, runID string, log *slog.Logger) *otlpRun {
	oo := o.Telemetry.OTLP
	if oo.URL == "" || m == nil {
		return nil
	}
	u, _ := otlp.MetricsURL(oo.URL) // checked by checkOptions
	cfg := otlp.Config{URL: u, Gatherer: m.Gatherer(), Log: log, Headers: otlpHeaders(oo.Headers),
		Batch: otlp.Batch{Resource: otlpResource(o, info, runID), Scope: "github.com/reprise-bench/reprise", ScopeVersion: Version(),
			Start: info.Start, Rename: map[string]string{"model": "gen_ai.request.model"}}}
	if names, ok := streamFamilies[oo.Stream]; ok {
		cfg.Keep = func(n string) bool { return n == livemetrics.NameRunInfo || slices.Contains(names, n) }
	}
	every := o.Telemetry.Interval
	if every <= 0 {
		every = DefaultMetricsInterval
	}
	p := otlp.NewPusher(cfg)
	p.Start(ctx, every)
	log.Info("pushing live metrics over OTLP", slog.String("url", u), slog.Duration("every", every))
	return &otlpRun{p: p}
}

// finish stops the periodic pushes and pushes the final values, once.
func (r *otlpRun) finish(ctx context.Context, log *slog.Logger) {
	if r == nil || r.done {
		return
	}
	r.done = true
	n := r.p.Close(ctx)
	log.Debug("OTLP pushes accepted", slog.Int("pushes", n))
}

// otlpResource is the resource of every push: reprise's attributes, the
// GenAI semantic conventions' where they apply, then the user's.
func otlpResource(o *Options, info summary.RunInfo, runID string) []otlp.Attr {
	instance := runID
	if o.Replay.Shard.Sharded() {
		instance += "/" + o.Replay.Shard.String()
	}
	as := []otlp.Attr{{Key: "service.name", Value: "reprise"}, {Key: "service.version", Value: Version()},
		{Key: "service.instance.id", Value: instance}, {Key: "reprise.run_id", Value: runID},
		{Key: "reprise.endpoint", Value: info.Endpoint}, {Key: "gen_ai.request.model", Value: o.Model}}
	if p := o.Telemetry.OTLP.Provider; p != "" {
		as = append(as, otlp.Attr{Key: "gen_ai.provider.name", Value: p}, otlp.Attr{Key: "gen_ai.system", Value: p})
	}
	user := o.Telemetry.OTLP.ResourceAttributes
	as = slices.DeleteFunc(as, func(a otlp.Attr) bool { _, ok := user[a.Key]; return ok })
	for _, k := range slices.Sorted(maps.Keys(user)) {
		as = append(as, otlp.Attr{Key: k, Value: user[k]})
	}
	return as
}

// otlpHeaders are the push's headers: h, or OpenTelemetry's variables.
func otlpHeaders(h map[string]string) http.Header {
	if h == nil {
		h, _ = otlp.ParseKeyValues(firstNonEmpty(os.Getenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS"), os.Getenv("OTEL_EXPORTER_OTLP_HEADERS")))
	}
	out := http.Header{}
	for k, v := range h {
		out.Set(k, v)
	}
	return out
}

// logMLflow logs the finished run in dir to o's MLflow server, when o
// asks for it. A failure is logged: the run directory has every number.
func logMLflow(ctx context.Context, o *Options, dir string, s *summary.Summary, status string, log *slog.Logger) {
	mo := o.Telemetry.MLflow
	if mo.TrackingURI == "" {
		return
	}
	run, runID, err := mlflowRun(dir, s, status, mo.ArtifactGlobs)
	if err != nil {
		log.Warn("MLflow: the run is not logged", slog.Any("err", err))
		return
	}
	name := mo.RunName
	if name == "" {
		name = filepath.Base(dir)
	}
	tags := map[string]string{"reprise.run_id": runID}
	for k, v := range mo.Tags {
		tags[k] = v
	}
	cfg := mlflow.Config{TrackingURI: mo.TrackingURI, Experiment: mo.Experiment, RunName: name, ParentRunID: mo.ParentRunID, Tags: tags,
		Token: os.Getenv("MLFLOW_TRACKING_TOKEN"), Username: os.Getenv("MLFLOW_TRACKING_USERNAME"), Password: os.Getenv("MLFLOW_TRACKING_PASSWORD")}
	res, err := mlflow.Log(context.WithoutCancel(ctx), cfg, run)
	if err != nil {
		log.Warn("MLflow: the run is not fully logged; the run directory has every number", slog.String("run_id", res.RunID), slog.Any("err", err))
		return
	}
	if res.Skipped != "" {
		log.Warn("MLflow: artifacts not uploaded", slog.String("why", res.Skipped))
	}
	log.Info("logged to MLflow", slog.String("experiment_id", res.ExperimentID), slog.String("run_id", res.RunID),
		slog.Int("metrics", len(run.Metrics)), slog.Int("params", len(run.Params)), slog.Int("artifacts", len(res.Uploaded)))
}

// mlflowRun is what is logged of the run in dir: summary.json's
// statistics, manifest.json's options and the files globs select; and
// the manifest's run_id.
func mlflowRun(dir string, s *summary.Summary, status string, globs []string) (run mlflow.Run, runID string, err error) {
	run = mlflow.Run{Start: s.Run.Start, End: s.Run.End, Status: status}
	if run.End.IsZero() {
		run.End = time.Now()
	}
	js, err := s.JSON()
	if err != nil {
		return run, "", err
	}
	if run.Metrics, err = mlflow.SummaryMetrics(js); err != nil {
		return run, "", err
	}
	if m, err := os.ReadFile(filepath.Join(dir, arrowio.ManifestFile)); err == nil {
		if run.Params, err = mlflow.Params(m); err != nil {
			return run, "", err
		}
	}
	for _, p := range run.Params {
		if p.Key == "run_id" {
			runID = p.Value
		}
	}
	if globs == nil {
		globs = mlflow.DefaultArtifactGlobs
	}
	run.Artifacts, err = mlflow.Artifacts(dir, globs)
	return run, runID, err
}

// mlflowStatus is how the MLflow run ends: KILLED when interrupted,
// FAILED when the run did not complete (ok false: a run error, a summary
// that could not be written), FINISHED otherwise (a run that failed a
// threshold finished: its verdicts are in its metrics).
func mlflowStatus(aborted, ok bool) string {
	switch {
	case aborted:
		return mlflow.StatusKilled
	case !ok:
		return mlflow.StatusFailed
	}
	return mlflow.StatusFinished
}
