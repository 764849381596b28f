// Package mlflowtest is a fake MLflow tracking server for tests: it
// speaks the REST API's endpoints that package mlflow calls, decodes
// every request strictly as MLflow's REST API reference gives its shape
// (an unknown field, a missing required one or a wrong type is a 400 and
// a recorded problem), and keeps what was logged.
package mlflowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// KV is a tag or a parameter.
type KV struct {
	Key   *string `json:"key"`
	Value *string `json:"value"`
}

// Metric is one logged metric.
type Metric struct {
	Key       *string  `json:"key"`
	Value     *float64 `json:"value"`
	Timestamp *int64   `json:"timestamp"`
	Step      *int64   `json:"step"`
}

// Run is what the server holds of one run.
type Run struct {
	ID, ExperimentID, Name string
	StartTime, EndTime     int64
	Status                 string
	Tags                   map[string]string
	Params                 map[string]string
	Metrics                map[string]float64
	Artifacts              map[string][]byte
	Batches                int
}

// Server is the fake. Its fields are read after the requests are done.
type Server struct {
	*httptest.Server
	// ArtifactURI is the artifact_uri runs/create answers, with %s the
	// experiment id and the run id (default mlflow-artifacts:/%s/%s/artifacts).
	ArtifactURI string
	// Token, when not empty, is the bearer token every request must carry.
	Token string

	mu          sync.Mutex
	experiments map[string]string // name → id
	Runs        []*Run
	Problems    []string
}

// New starts a fake server; close it with Close.
func New() *Server {
	s := &Server{experiments: map[string]string{"Default": "0"}, ArtifactURI: "mlflow-artifacts:/%s/%s/artifacts"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/2.0/mlflow/experiments/get-by-name", s.getByName)
	mux.HandleFunc("POST /api/2.0/mlflow/experiments/create", s.createExperiment)
	mux.HandleFunc("POST /api/2.0/mlflow/runs/create", s.createRun)
	mux.HandleFunc("POST /api/2.0/mlflow/runs/log-batch", s.logBatch)
	mux.HandleFunc("POST /api/2.0/mlflow/runs/update", s.updateRun)
	mux.HandleFunc("PUT /api/2.0/mlflow-artifacts/artifacts/", s.putArtifact)
	s.Server = httptest.NewServer(s.auth(mux))
	return s
}

// Experiment returns the id of the experiment name ("" when none).
func (s *Server) Experiment(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.experiments[name]
}

func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
			s.fail(w, http.StatusUnauthorized, "UNAUTHENTICATED", "%s %s: no bearer token", r.Method, r.URL.Path)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) fail(w http.ResponseWriter, status int, code, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	if status == http.StatusBadRequest || status == http.StatusUnauthorized {
		s.Problems = append(s.Problems, msg)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error_code": code, "message": msg})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// decode reads r's body strictly into v.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "%s: Content-Type %q, want application/json", r.URL.Path, ct)
		return false
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "%s: %v", r.URL.Path, err)
		return false
	}
	return true
}

func (s *Server) getByName(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("experiment_name")
	if name == "" {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "get-by-name: no experiment_name")
		return
	}
	s.mu.Lock()
	id, ok := s.experiments[name]
	s.mu.Unlock()
	if !ok {
		s.fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "Could not find experiment with name '%s'", name)
		return
	}
	reply(w, map[string]any{"experiment": map[string]any{"experiment_id": id, "name": name, "lifecycle_stage": "active"}})
}

func (s *Server) createExperiment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name *string `json:"name"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	if req.Name == nil || *req.Name == "" {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "experiments/create: name is required")
		return
	}
	s.mu.Lock()
	id := fmt.Sprint(len(s.experiments) + 100)
	s.experiments[*req.Name] = id
	s.mu.Unlock()
	reply(w, map[string]string{"experiment_id": id})
}

func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ExperimentID *string `json:"experiment_id"`
		RunName      string  `json:"run_name"`
		StartTime    *int64  `json:"start_time"`
		Tags         []KV    `json:"tags"`
		UserID       string  `json:"user_id"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	if req.ExperimentID == nil || req.StartTime == nil {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "runs/create: experiment_id and start_time are required")
		return
	}
	run := &Run{ExperimentID: *req.ExperimentID, Name: req.RunName, StartTime: *req.StartTime, Status: "RUNNING",
		Tags: map[string]string{}, Params: map[string]string{}, Metrics: map[string]float64{}, Artifacts: map[string][]byte{}}
	if !s.kvs(w, "runs/create tags", req.Tags, run.Tags) {
		return
	}
	s.mu.Lock()
	run.ID = fmt.Sprintf("run%d", len(s.Runs)+1)
	s.Runs = append(s.Runs, run)
	uri := fmt.Sprintf(s.ArtifactURI, run.ExperimentID, run.ID)
	s.mu.Unlock()
	reply(w, map[string]any{"run": map[string]any{"info": map[string]any{"run_id": run.ID, "run_uuid": run.ID,
		"experiment_id": run.ExperimentID, "run_name": run.Name, "status": "RUNNING", "start_time": run.StartTime,
		"artifact_uri": uri, "lifecycle_stage": "active"}, "data": map[string]any{}}})
}

// kvs checks and stores key/value pairs.
func (s *Server) kvs(w http.ResponseWriter, what string, in []KV, into map[string]string) bool {
	for _, kv := range in {
		if kv.Key == nil || kv.Value == nil || *kv.Key == "" {
			s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "%s: key and value are required", what)
			return false
		}
		into[*kv.Key] = *kv.Value
	}
	return true
}

// find returns the run of id, nil when none.
func (s *Server) find(id *string) *Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.Runs {
		if id != nil && r.ID == *id {
			return r
		}
	}
	return nil
}

func (s *Server) logBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RunID   *string  `json:"run_id"`
		Metrics []Metric `json:"metrics"`
		Params  []KV     `json:"params"`
		Tags    []KV     `json:"tags"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	// MLflow's limits: 1000 metrics, 100 params, 100 tags, 1000 in all.
	if len(req.Metrics) > 1000 || len(req.Params) > 100 || len(req.Tags) > 100 || len(req.Metrics)+len(req.Params)+len(req.Tags) > 1000 {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "log-batch: %d metrics, %d params, %d tags over the limits", len(req.Metrics), len(req.Params), len(req.Tags))
		return
	}
	run := s.find(req.RunID)
	if run == nil {
		s.fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "no run %v", req.RunID)
		return
	}
	params := map[string]string{}
	if !s.kvs(w, "log-batch params", req.Params, params) || !s.kvs(w, "log-batch tags", req.Tags, run.Tags) {
		return
	}
	for _, m := range req.Metrics {
		if m.Key == nil || m.Value == nil || m.Timestamp == nil || *m.Key == "" {
			s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "log-batch metric: key, value and timestamp are required")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range params {
		if old, ok := run.Params[k]; ok && old != v {
			s.Problems = append(s.Problems, "param "+k+" logged twice with different values")
		}
		if len(v) > 500 {
			s.Problems = append(s.Problems, "param "+k+" longer than 500")
		}
		run.Params[k] = v
	}
	for _, m := range req.Metrics {
		run.Metrics[*m.Key] = *m.Value
	}
	run.Batches++
	reply(w, map[string]any{})
}

func (s *Server) updateRun(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RunID   *string `json:"run_id"`
		RunUUID *string `json:"run_uuid"`
		Status  string  `json:"status"`
		EndTime *int64  `json:"end_time"`
		RunName string  `json:"run_name"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	switch req.Status {
	case "RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED":
	default:
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "runs/update: status %q", req.Status)
		return
	}
	run := s.find(req.RunID)
	if run == nil {
		s.fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "no run %v", req.RunID)
		return
	}
	s.mu.Lock()
	run.Status = req.Status
	if req.EndTime != nil {
		run.EndTime = *req.EndTime
	}
	s.mu.Unlock()
	reply(w, map[string]any{"run_info": map[string]any{"run_id": run.ID, "status": run.Status}})
}

func (s *Server) putArtifact(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/api/2.0/mlflow-artifacts/artifacts/")
	parts := strings.SplitN(p, "/", 4) // EXP/RUN/artifacts/PATH
	if len(parts) != 4 || parts[2] != "artifacts" {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "artifact path %q: want EXPERIMENT/RUN/artifacts/PATH", p)
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "artifact %s: %v", p, err)
		return
	}
	id := parts[1]
	run := s.find(&id)
	if run == nil || run.ExperimentID != parts[0] {
		s.fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "artifact %s: no such run", p)
		return
	}
	s.mu.Lock()
	run.Artifacts[parts[3]] = bytes.Clone(b)
	s.mu.Unlock()
	reply(w, map[string]any{})
}
