package mlflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// The server's limits on one runs/log-batch request (MLflow's REST API
// reference, "Log Batch"), and on a parameter's value (500 characters on
// servers before 2.x; the lowest is kept).
const (
	MaxBatchMetrics  = 1000
	MaxBatchParams   = 100
	MaxBatchEntities = 1000 // metrics, params and tags together
	MaxParamValue    = 500
)

// DefaultTimeout bounds each request to the server.
const DefaultTimeout = 30 * time.Second

// Run statuses of runs/update.
const (
	StatusFinished = "FINISHED"
	StatusFailed   = "FAILED"
	StatusKilled   = "KILLED"
)

// Config says which server, experiment and run a [Log] writes to.
type Config struct {
	// TrackingURI is the server, http(s)://HOST[:PORT][/PREFIX].
	TrackingURI string
	// Experiment is the experiment's name, created when missing; empty is
	// the server's default experiment (id 0).
	Experiment string
	// RunName, ParentRunID and Tags describe the run (empty: none).
	RunName, ParentRunID string
	Tags                 map[string]string
	// Token is sent as a bearer token (MLFLOW_TRACKING_TOKEN); Username
	// and Password as basic authorization (MLFLOW_TRACKING_USERNAME,
	// MLFLOW_TRACKING_PASSWORD).
	Token, Username, Password string
	// Client sends the requests (nil: a client of its own) and Timeout
	// bounds each (0: DefaultTimeout).
	Client  *http.Client
	Timeout time.Duration
}

// Artifact is a file uploaded to the run: Path is its path among the
// run's artifacts (slash-separated), File the local file.
type Artifact struct{ Path, File string }

// Run is what [Log] logs.
type Run struct {
	Start, End time.Time
	// Status ends the run (StatusFinished, StatusFailed, StatusKilled).
	Status    string
	Metrics   []Metric
	Params    []Param
	Artifacts []Artifact
}

// Result says where Log wrote.
type Result struct {
	ExperimentID, RunID, ArtifactURI string
	// Uploaded are the artifacts' paths the server took; Skipped says why
	// none was uploaded when the artifact store is not the server's.
	Uploaded []string
	Skipped  string
}

// An APIError is a request the server refused.
type APIError struct {
	Endpoint   string
	StatusCode int
	Code       string // MLflow's error_code, such as RESOURCE_DOES_NOT_EXIST
	Message    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("mlflow %s: %d %s: %s", e.Endpoint, e.StatusCode, e.Code, e.Message)
}

// CheckURI reports whether u is a tracking URI Log can speak to.
func CheckURI(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%q: want the http(s) URL of an MLflow tracking server, such as http://localhost:5000 "+
			"(a file or database store is the Python client's: serve it with `mlflow server`)", u)
	}
	return nil
}

// Log creates a run in cfg's experiment and logs run to it. It returns
// what it created even when a later step fails; a run left unfinished by
// a failure is marked FAILED when the server still answers.
func Log(ctx context.Context, cfg Config, run Run) (Result, error) {
	if err := CheckURI(cfg.TrackingURI); err != nil {
		return Result{}, err
	}
	c := client{cfg: cfg, base: strings.TrimSuffix(cfg.TrackingURI, "/")}
	if c.cfg.Client == nil {
		c.cfg.Client = &http.Client{}
	}
	if c.cfg.Timeout <= 0 {
		c.cfg.Timeout = DefaultTimeout
	}
	var res Result
	var err error
	if res.ExperimentID, err = c.experiment(ctx); err != nil {
		return res, err
	}
	if res.RunID, res.ArtifactURI, err = c.createRun(ctx, res.ExperimentID, run.Start); err != nil {
		return res, err
	}
	err = c.logBatches(ctx, res.RunID, run)
	if err == nil {
		res.Uploaded, res.Skipped, err = c.upload(ctx, res.ArtifactURI, run.Artifacts)
	}
	status := run.Status
	if err != nil {
		status = StatusFailed
	}
	return res, errors.Join(err, c.updateRun(ctx, res.RunID, status, run.End))
}

type client struct {
	cfg  Config
	base string
}

func (c *client) experiment(ctx context.Context) (string, error) {
	if c.cfg.Experiment == "" {
		return "0", nil
	}
	var got struct {
		Experiment struct {
			ID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	err := c.call(ctx, http.MethodGet, "experiments/get-by-name?experiment_name="+url.QueryEscape(c.cfg.Experiment), nil, &got)
	if e, ok := errors.AsType[*APIError](err); ok && e.Code == "RESOURCE_DOES_NOT_EXIST" {
		var made struct {
			ID string `json:"experiment_id"`
		}
		err = c.call(ctx, http.MethodPost, "experiments/create", map[string]any{"name": c.cfg.Experiment}, &made)
		return made.ID, err
	}
	return got.Experiment.ID, err
}

type tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (c *client) createRun(ctx context.Context, expID string, start time.Time) (id, artifactURI string, err error) {
	tags := []tag{{"mlflow.source.name", "reprise"}}
	if c.cfg.RunName != "" {
		tags = append(tags, tag{"mlflow.runName", c.cfg.RunName})
	}
	if c.cfg.ParentRunID != "" {
		tags = append(tags, tag{"mlflow.parentRunId", c.cfg.ParentRunID})
	}
	for _, k := range sortedKeys(c.cfg.Tags) {
		tags = append(tags, tag{k, c.cfg.Tags[k]})
	}
	body := map[string]any{"experiment_id": expID, "start_time": start.UnixMilli(), "tags": tags}
	if c.cfg.RunName != "" {
		body["run_name"] = c.cfg.RunName
	}
	var got struct {
		Run struct {
			Info struct {
				ID          string `json:"run_id"`
				ArtifactURI string `json:"artifact_uri"`
			} `json:"info"`
		} `json:"run"`
	}
	if err := c.call(ctx, http.MethodPost, "runs/create", body, &got); err != nil {
		return "", "", err
	}
	if got.Run.Info.ID == "" {
		return "", "", &APIError{Endpoint: "runs/create", StatusCode: http.StatusOK, Message: "the answer has no run.info.run_id"}
	}
	return got.Run.Info.ID, got.Run.Info.ArtifactURI, nil
}

type jsonMetric struct {
	Key       string  `json:"key"`
	Value     float64 `json:"value"`
	Timestamp int64   `json:"timestamp"`
	Step      int64   `json:"step"`
}

// logBatches logs run's metrics and parameters, as many requests as the
// server's batch limits need.
func (c *client) logBatches(ctx context.Context, runID string, run Run) error {
	ts := run.End.UnixMilli()
	ms, ps := run.Metrics, run.Params
	for len(ms) > 0 || len(ps) > 0 {
		np := min(len(ps), MaxBatchParams)
		nm := min(len(ms), MaxBatchMetrics, MaxBatchEntities-np)
		metrics := make([]jsonMetric, 0, nm)
		for _, m := range ms[:nm] {
			metrics = append(metrics, jsonMetric{Key: Key(m.Key), Value: m.Value, Timestamp: ts})
		}
		params := make([]tag, 0, np)
		for _, p := range ps[:np] {
			params = append(params, tag{Key(p.Key), truncate(p.Value, MaxParamValue)})
		}
		body := map[string]any{"run_id": runID, "metrics": metrics, "params": params, "tags": []tag{}}
		if err := c.call(ctx, http.MethodPost, "runs/log-batch", body, nil); err != nil {
			return err
		}
		ms, ps = ms[nm:], ps[np:]
	}
	return nil
}

func (c *client) updateRun(ctx context.Context, runID, status string, end time.Time) error {
	return c.call(ctx, http.MethodPost, "runs/update", map[string]any{"run_id": runID, "status": status, "end_time": end.UnixMilli()}, nil)
}

// upload puts each artifact through the server's artifact proxy, when
// the run's artifact URI is the proxy's (mlflow-artifacts:/PATH).
func (c *client) upload(ctx context.Context, artifactURI string, as []Artifact) (done []string, skipped string, err error) {
	if len(as) == 0 {
		return nil, "", nil
	}
	u, perr := url.Parse(artifactURI)
	if perr != nil || u.Scheme != "mlflow-artifacts" {
		return nil, fmt.Sprintf("the run's artifact store %q is not proxied by the tracking server (start it with --serve-artifacts); upload the run directory with the mlflow client", artifactURI), nil
	}
	root := strings.Trim(u.Path, "/")
	for _, a := range as {
		if err := c.put(ctx, root+"/"+a.Path, a.File); err != nil {
			return done, "", err
		}
		done = append(done, a.Path)
	}
	return done, "", nil
}

func (c *client) put(ctx context.Context, path, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("mlflow artifact %s: %w", path, err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base+"/api/2.0/mlflow-artifacts/artifacts/"+escapePath(path), f)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	return c.do(req, "mlflow-artifacts/artifacts", nil)
}

// call sends one request of the tracking API: body (when not nil) as
// JSON, and decodes the answer into out (when not nil).
func (c *client) call(ctx context.Context, method, endpoint string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("mlflow %s: %w", endpoint, err)
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/2.0/mlflow/"+endpoint, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	name, _, _ := strings.Cut(endpoint, "?")
	return c.do(req, name, out)
}

func (c *client) do(req *http.Request, endpoint string, out any) error {
	switch {
	case c.cfg.Token != "":
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	case c.cfg.Username != "" || c.cfg.Password != "":
		req.SetBasicAuth(c.cfg.Username, c.cfg.Password)
	}
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("mlflow %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("mlflow %s: %w", endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		return apiError(endpoint, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("mlflow %s: answer is not the API's JSON: %w", endpoint, err)
	}
	return nil
}

// apiError reads MLflow's error body, {"error_code": …, "message": …}.
func apiError(endpoint string, status int, b []byte) *APIError {
	var e struct {
		Code    string `json:"error_code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil || e.Message == "" {
		e.Message = strings.TrimSpace(truncate(string(b), 200))
	}
	return &APIError{Endpoint: endpoint, StatusCode: status, Code: e.Code, Message: e.Message}
}
