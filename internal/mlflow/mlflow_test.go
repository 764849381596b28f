package mlflow_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/mlflow"
	"github.com/reprise-bench/reprise/internal/mlflow/mlflowtest"
)

// TestLog logs a run to the fake server, with more metrics and params
// than one batch holds, and checks every request's effect.
func TestLog(t *testing.T) {
	srv := mlflowtest.New()
	defer srv.Close()
	srv.Token = "tok"
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"a":1}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "plots"), 0o755)
	os.WriteFile(filepath.Join(dir, "plots", "ttft.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(dir, "records.bin"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, ".summary.json.tmp"), []byte("x"), 0o644)
	arts, err := mlflow.Artifacts(dir, mlflow.DefaultArtifactGlobs)
	if err != nil {
		t.Fatal(err)
	}
	var run mlflow.Run
	run.Start, run.End, run.Status, run.Artifacts = time.UnixMilli(1000), time.UnixMilli(9000), mlflow.StatusFinished, arts
	for i := range 1500 {
		run.Metrics = append(run.Metrics, mlflow.Metric{Key: fmt.Sprintf("m%04d", i), Value: float64(i)})
	}
	for i := range 150 {
		run.Params = append(run.Params, mlflow.Param{Key: fmt.Sprintf("p%03d", i), Value: strings.Repeat("v", 600)})
	}
	run.Params = append(run.Params, mlflow.Param{Key: "host:name", Value: "vm"})
	res, err := mlflow.Log(t.Context(), mlflow.Config{TrackingURI: srv.URL + "/", Experiment: "bench", RunName: "r", ParentRunID: "parent",
		Tags: map[string]string{"owner": "ci"}, Token: "tok"}, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Problems) > 0 {
		t.Fatalf("requests the API refuses:\n%s", strings.Join(srv.Problems, "\n"))
	}
	if id := srv.Experiment("bench"); id == "" || res.ExperimentID != id {
		t.Errorf("experiment %q, created %q", res.ExperimentID, id)
	}
	r := srv.Runs[0]
	if r.ID != res.RunID || r.Name != "r" || r.Status != "FINISHED" || r.StartTime != 1000 || r.EndTime != 9000 {
		t.Errorf("run %+v", r)
	}
	for k, v := range map[string]string{"owner": "ci", "mlflow.runName": "r", "mlflow.parentRunId": "parent", "mlflow.source.name": "reprise"} {
		if r.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, r.Tags[k], v)
		}
	}
	if len(r.Metrics) != 1500 || r.Metrics["m1499"] != 1499 || len(r.Params) != 151 || r.Batches != 2 {
		t.Errorf("%d metrics, %d params in %d batches; want 1500, 151 in 2", len(r.Metrics), len(r.Params), r.Batches)
	}
	if r.Params["host_name"] != "vm" || len(r.Params["p000"]) != mlflow.MaxParamValue {
		t.Errorf("params: host_name %q, p000 of %d characters", r.Params["host_name"], len(r.Params["p000"]))
	}
	if d := cmp.Diff(map[string][]byte{"summary.json": []byte(`{"a":1}`), "plots/ttft.png": []byte("png")}, r.Artifacts); d != "" {
		t.Errorf("artifacts (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"plots/ttft.png", "summary.json"}, res.Uploaded); d != "" {
		t.Errorf("uploaded (-want +got):\n%s", d)
	}
}

// TestLogExistingExperimentNoProxy logs to an experiment that exists,
// on a server whose artifact store is not its own: the metrics are
// logged, the artifacts skipped with the reason.
func TestLogExistingExperimentNoProxy(t *testing.T) {
	srv := mlflowtest.New()
	defer srv.Close()
	srv.ArtifactURI = "s3://bucket/%s/%s/artifacts"
	res, err := mlflow.Log(t.Context(), mlflow.Config{TrackingURI: srv.URL, Experiment: "Default"},
		mlflow.Run{Status: mlflow.StatusKilled, Metrics: []mlflow.Metric{{Key: "x", Value: 1}},
			Artifacts: []mlflow.Artifact{{Path: "a.json", File: "testdata/nothing"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExperimentID != "0" || srv.Runs[0].Status != "KILLED" || srv.Runs[0].Metrics["x"] != 1 {
		t.Errorf("experiment %q, run %+v", res.ExperimentID, srv.Runs[0])
	}
	if !strings.Contains(res.Skipped, "s3://bucket") || len(res.Uploaded) != 0 {
		t.Errorf("skipped %q, uploaded %v", res.Skipped, res.Uploaded)
	}
}

// TestLogRefused checks that a refused request is an *APIError naming
// the endpoint and MLflow's error code.
func TestLogRefused(t *testing.T) {
	srv := mlflowtest.New()
	defer srv.Close()
	srv.Token = "secret"
	_, err := mlflow.Log(t.Context(), mlflow.Config{TrackingURI: srv.URL, Experiment: "e"}, mlflow.Run{})
	e, ok := err.(*mlflow.APIError)
	if !ok || e.Endpoint != "experiments/get-by-name" || e.StatusCode != 401 || e.Code != "UNAUTHENTICATED" {
		t.Fatalf("err = %#v", err)
	}
	if err := mlflow.CheckURI("file:///tmp/mlruns"); err == nil || !strings.Contains(err.Error(), "mlflow server") {
		t.Errorf("CheckURI(file:) = %v", err)
	}
}

func TestSummaryMetrics(t *testing.T) {
	ms, err := mlflow.SummaryMetrics([]byte(`{"schema_version":"3","run_info":{"model":"m"},
		"request_count":{"unit":"requests","avg":10},
		"time_to_first_token":{"unit":"ms","avg":5,"p99":9,"count":10},
		"error_summary":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []mlflow.Metric{{"request_count", 10}, {"time_to_first_token_avg", 5}, {"time_to_first_token_count", 10}, {"time_to_first_token_p99", 9}}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParams(t *testing.T) {
	ps, err := mlflow.Params([]byte(`{"model":"m","host":{"cpus":2,"os":"linux"},"headers":["a"],"x":null,"on":true,"big":12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []mlflow.Param{{"big", "12345678901234567890"}, {"headers", `["a"]`}, {"host.cpus", "2"}, {"host.os", "linux"}, {"model", "m"}, {"on", "true"}, {"x", "null"}}
	if d := cmp.Diff(want, ps); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
