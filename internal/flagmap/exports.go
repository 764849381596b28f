package flagmap

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/otlp"
)

// otlpFlags and mlflowFlags are the flags that need --otel-url and
// --mlflow-tracking-uri, as AIPerf has them.
var (
	otlpFlags   = []string{"stream", "otel-resource-attributes", "gen-ai-provider"}
	mlflowFlags = []string{"mlflow-experiment", "mlflow-run-name", "mlflow-parent-run-id", "mlflow-tag", "mlflow-artifact-glob"}
)

// Exports reads AIPerf's export flags: --otel-url and the flags that
// shape its pushes, and the --mlflow-* flags.
func Exports(v Values) (reprise.OTLPOptions, reprise.MLflowOptions, error) {
	var errs []error
	oo := reprise.OTLPOptions{URL: WithScheme(v.String("otel-url")), Stream: v.String("stream"), Provider: v.String("gen-ai-provider")}
	for _, s := range v.StringSlice("otel-resource-attributes") {
		kv, bad := otlp.ParseKeyValues(s)
		for _, b := range bad {
			errs = append(errs, fmt.Errorf("--otel-resource-attributes %q: want KEY=VALUE[,KEY=VALUE…]", b))
		}
		if oo.ResourceAttributes == nil && len(kv) > 0 {
			oo.ResourceAttributes = map[string]string{}
		}
		for k, val := range kv {
			oo.ResourceAttributes[k] = val
		}
	}
	errs = append(errs, needs(v, "otel-url", otlpFlags), needs(v, "mlflow-tracking-uri", mlflowFlags))
	mo := reprise.MLflowOptions{TrackingURI: WithScheme(v.String("mlflow-tracking-uri")), Experiment: v.String("mlflow-experiment"),
		RunName: v.String("mlflow-run-name"), ParentRunID: v.String("mlflow-parent-run-id"), ArtifactGlobs: CommaList(v.StringSlice("mlflow-artifact-glob"))}
	for _, t := range v.StringSlice("mlflow-tag") {
		i := strings.IndexAny(t, ":=") // AIPerf's KEY:VALUE, or KEY=VALUE
		if i < 0 || strings.TrimSpace(t[:i]) == "" {
			errs = append(errs, fmt.Errorf("--mlflow-tag %q: want KEY:VALUE", t))
			continue
		}
		k, val := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:])
		if mo.Tags == nil {
			mo.Tags = map[string]string{}
		}
		mo.Tags[k] = val
	}
	return oo, mo, errors.Join(errs...)
}

// needs reports the flags of dependents that are given without flag.
func needs(v Values, flag string, dependents []string) error {
	if v.String(flag) != "" {
		return nil
	}
	var errs []error
	for _, d := range dependents {
		if v.IsSet(d) {
			errs = append(errs, fmt.Errorf("--%s needs --%s", d, flag))
		}
	}
	return errors.Join(errs...)
}
