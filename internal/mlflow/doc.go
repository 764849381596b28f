// Package mlflow logs a finished run to an MLflow tracking server through
// its REST API (AIPerf's --mlflow-* flags): the experiment is found by
// name or created (experiments/get-by-name, experiments/create), a run is
// created (runs/create) with its tags, the summary's metrics and the
// run's parameters are logged in batches within the server's limits
// (runs/log-batch), the run directory's files are uploaded through the
// artifact proxy (mlflow-artifacts), and the run is ended (runs/update).
//
// Only a tracking server spoken to over HTTP is supported: a file or
// database store (file:, sqlite:) is Python's, and a run whose artifact
// store is not proxied by the server (s3:, gs:, …) gets its metrics and
// parameters, with the artifacts reported as skipped.
package mlflow
