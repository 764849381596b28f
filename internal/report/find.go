package report

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
)

// ErrNoRunsFound is returned by [FindRuns] for a path that holds no run.
var ErrNoRunsFound = errors.New("no run directory found")

// FindRuns returns the directories a report of path covers, the way
// `aiperf plot` reads its paths: path itself when it is a run (records,
// a --runs set or a sweep), else each of its subdirectories that is
// one, in name order (a load series is put in load order later). An
// error names the path that holds no run.
func FindRuns(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("find runs: %s is a file, not a directory", path)
	}
	if isRun(path) {
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	var out []string
	for _, e := range ents {
		if d := filepath.Join(path, e.Name()); e.IsDir() && isRun(d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w (no records, runs.json or sweep.json in it or its subdirectories)", path, ErrNoRunsFound)
	}
	slices.Sort(out)
	return out, nil
}

// isRun reports whether dir is a run directory, a set of repeated runs
// or a sweep.
func isRun(dir string) bool {
	if r, err := arrowio.Open(dir); err == nil && r.Has(arrowio.RecordsTable) {
		return true
	}
	if _, ok, err := arrowio.RepeatedRuns(dir); err == nil && ok {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, "sweep.json"))
	return err == nil
}

// Serve serves page, a report, at addr (HOST:PORT) until ctx is done:
// `reprise plot --dashboard`, AIPerf's interactive dashboard, which here
// is the report itself. ready, when not nil, is called with the page's
// URL once the server listens.
func Serve(ctx context.Context, addr string, page []byte, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve the report: %w", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && r.URL.Path != "/"+arrowio.ReportFile {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})}
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
