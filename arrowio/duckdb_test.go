package arrowio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// duckDB runs the named queries with real DuckDB (the @duckdb/node-api npm
// package in testdata/duckdb, installed with `npm ci` on first use) in one
// node process and returns each query's rows. Skips, loudly, when node or
// npm is not installed.
func duckDB(t *testing.T, queries map[string]string) map[string][][]any {
	t.Helper()
	node, nerr := exec.LookPath("node")
	npm, perr := exec.LookPath("npm")
	if nerr != nil || perr != nil {
		t.Skip("!!!!!!!! SKIPPED: node and npm are required to check the files with real DuckDB " +
			"(@duckdb/node-api); install Node.js 20+ to run this test !!!!!!!!")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err != nil {
		// package-lock.json lists every platform's binding (the ones a
		// registry mirror lacks were added by hand), so `npm ci` installs
		// exactly the locked versions; `npm install` is the fallback for a
		// registry the lock does not fit.
		cmd := exec.Command(npm, "ci", "--silent", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("npm ci in %s: %v\n%s\ntrying npm install", dir, err, out)
			cmd := exec.Command(npm, "install", "--silent", "--no-audit", "--no-fund", "--no-save")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
			}
		}
	}
	in, err := json.Marshal(queries)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "query.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node query.mjs: %v\n%s", err, stderr.String())
	}
	var res map[string]struct {
		Rows  [][]any `json:"rows"`
		Error string  `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("decode DuckDB output: %v\n%s", err, out)
	}
	rows := make(map[string][][]any, len(res))
	for name, r := range res {
		if r.Error != "" {
			t.Errorf("DuckDB query %s failed: %s\nSQL: %s", name, r.Error, queries[name])
			continue
		}
		rows[name] = r.Rows
	}
	return rows
}

// num converts a DuckDB JSON value (number or bigint string) to float64.
func num(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			t.Fatalf("not a number: %q", x)
		}
		return f
	case nil:
		return math.NaN()
	}
	t.Fatalf("unexpected value %T %v", v, v)
	return 0
}

// dint converts an exact integer value (bigint string) to int64.
func dint(t *testing.T, v any) int64 {
	t.Helper()
	s := fmt.Sprint(v)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an int64: %q", s)
	}
	return n
}

// percentile is numpy's default (linear) percentile, as AIPerf computes it.
func percentile(sorted []float64, p float64) float64 {
	r := float64(len(sorted)-1) * p / 100
	lo, hi := math.Floor(r), math.Ceil(r)
	return sorted[int(lo)] + (sorted[int(hi)]-sorted[int(lo)])*(r-lo)
}

// The README's SQL examples (Quickstart, "Looking at the results"), run verbatim against a run
// directory, with RUN replaced by its path. Keep them in sync.
const (
	readmeTTFTByMinute = `SELECT date_trunc('minute', sent_at) AS minute, count(*) AS requests,
       quantile_cont(ttft_ns, 0.50) / 1e6 AS ttft_p50_ms,
       quantile_cont(ttft_ns, 0.99) / 1e6 AS ttft_p99_ms
FROM read_parquet('RUN/records/*.parquet')
WHERE phase = 'profile' AND error_kind IS NULL
GROUP BY minute ORDER BY minute`
	readmeCacheFidelity = `SELECT sum(server_cached_tokens) AS server_cached,
       sum(expected_cached_tokens) AS expected_cached,
       sum(server_cached_tokens) / sum(expected_cached_tokens) AS fidelity
FROM read_parquet('RUN/records/*.parquet')
WHERE server_cached_tokens IS NOT NULL AND expected_cached_tokens IS NOT NULL`
	readmeErrorsByKind = `SELECT coalesce(error_kind, 'ok') AS kind, count(*) AS requests,
       any_value(error_message) AS example
FROM read_parquet('RUN/records/*.parquet')
GROUP BY kind ORDER BY requests DESC, kind`
)

func TestDuckDB(t *testing.T) {
	dir := t.TempDir()
	reqs := genRequests(3000, 11)
	evs := genEvents(5000, 12)
	writeRun(t, dir, Config{RowGroupRows: 500, PartRows: 1000}, reqs, evs, 128)
	single := filepath.Join(dir, "single")
	writeRun(t, single, Config{SingleFile: true}, reqs, nil, 128)
	recs := filepath.ToSlash(filepath.Join(dir, "records", "*.parquet"))
	from := fmt.Sprintf("read_parquet('%s')", recs)
	evFrom := fmt.Sprintf("read_parquet('%s')", filepath.ToSlash(filepath.Join(dir, "events", "*.parquet")))
	part0 := filepath.ToSlash(filepath.Join(dir, "records", "part-00000.parquet"))
	singleFile := filepath.ToSlash(filepath.Join(single, "records.parquet"))
	run := filepath.ToSlash(dir)

	q := map[string]string{
		"types":       "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + from + ")",
		"event_types": "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + evFrom + ")",
		"count":       "SELECT count(*), count(DISTINCT request_id) FROM " + from,
		"single":      fmt.Sprintf("SELECT count(*), sum(ttft_ns) FROM read_parquet('%s')", singleFile),
		"times": "SELECT request_id, intended_ns, epoch_ns(intended_at), epoch_ns(dispatched_at), epoch_ns(sent_at), " +
			"epoch_ns(first_token_at), epoch_ns(last_token_at), epoch_ns(end_at), first_token_ns, end_ns FROM " + from + " ORDER BY request_id",
		"ttft": "SELECT count(ttft_ns), avg(ttft_ns), quantile_cont(ttft_ns, 0.5), quantile_cont(ttft_ns, 0.99), " +
			"min(ttft_ns), max(ttft_ns), sum(output_tokens) FROM " + from + " WHERE phase = 'profile' AND error_kind IS NULL",
		"nulls": "SELECT count(*) FILTER (trace_row IS NULL), count(*) FILTER (server_cached_tokens IS NULL), " +
			"count(*) FILTER (error_message IS NULL), count(*) FILTER (first_token_at IS NULL), count(*) FILTER (session_id IS NULL) FROM " + from,
		"kv":          fmt.Sprintf("SELECT decode(value) FROM parquet_kv_metadata('%s') WHERE decode(key) = 'reprise.schema'", part0),
		"codec":       fmt.Sprintf("SELECT DISTINCT compression FROM parquet_metadata('%s')", part0),
		"row_groups":  fmt.Sprintf("SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')", part0),
		"events":      "SELECT count(*), count(*) FILTER (epoch_ns(time_at) = time_ns), count(*) FILTER (kind = 'content'), count(tokens) FROM " + evFrom,
		"ttft_minute": strings.ReplaceAll(readmeTTFTByMinute, "RUN", run),
		"cache":       strings.ReplaceAll(readmeCacheFidelity, "RUN", run),
		"errors":      strings.ReplaceAll(readmeErrorsByKind, "RUN", run),
	}
	res := duckDB(t, q)

	// Column types: every *_at is TIMESTAMP_NS (exact ns), *_ns BIGINT.
	types := map[string]string{}
	for _, r := range res["types"] {
		types[r[0].(string)] = r[1].(string)
	}
	for _, f := range RecordsSchema().Fields() {
		want := map[string]string{"int64": "BIGINT", "int32": "INTEGER", "uint64": "UBIGINT", "float64": "DOUBLE",
			"utf8": "VARCHAR", "bool": "BOOLEAN", "timestamp[ns]": "TIMESTAMP_NS", "list<item: int64>": "BIGINT[]"}[f.Type.String()]
		if strings.HasPrefix(f.Type.String(), "dictionary") {
			want = "VARCHAR"
		}
		if types[f.Name] != want {
			t.Errorf("DuckDB type of %s = %q, want %q (Arrow %s)", f.Name, types[f.Name], want, f.Type)
		}
	}
	if len(types) != RecordsSchema().NumFields() {
		t.Errorf("DuckDB sees %d columns, schema has %d", len(types), RecordsSchema().NumFields())
	}
	evTypes := map[string]string{}
	for _, r := range res["event_types"] {
		evTypes[r[0].(string)] = r[1].(string)
	}
	if evTypes["time_at"] != "TIMESTAMP_NS" || evTypes["kind"] != "VARCHAR" || evTypes["time_ns"] != "BIGINT" {
		t.Errorf("event types = %v", evTypes)
	}

	if r := res["count"]; len(r) != 1 || dint(t, r[0][0]) != 3000 || dint(t, r[0][1]) != 3000 {
		t.Errorf("count = %v, want 3000 rows with distinct ids", r)
	}
	var sumTTFT int64
	for _, r := range reqs {
		sumTTFT += r.TTFTNS
	}
	if r := res["single"]; len(r) != 1 || dint(t, r[0][0]) != 3000 || dint(t, r[0][1]) != sumTTFT {
		t.Errorf("single file: %v, want 3000 rows, sum(ttft_ns) %d", r, sumTTFT)
	}

	// Nanoseconds preserved, in the int64 columns and the timestamp twins.
	if len(res["times"]) != len(reqs) {
		t.Fatalf("times: %d rows", len(res["times"]))
	}
	zeroNull := func(v any) int64 {
		if v == nil {
			return 0
		}
		return dint(t, v)
	}
	for i, row := range res["times"] {
		r := reqs[i]
		got := []int64{dint(t, row[0]), zeroNull(row[1]), zeroNull(row[2]), zeroNull(row[3]), zeroNull(row[4]),
			zeroNull(row[5]), zeroNull(row[6]), zeroNull(row[7]), zeroNull(row[8]), zeroNull(row[9])}
		want := []int64{int64(r.RequestID), r.IntendedNS, r.IntendedNS, r.DispatchedNS, r.SentNS,
			r.FirstTokenNS, r.LastTokenNS, r.EndNS, r.FirstTokenNS, r.EndNS}
		if !slices.Equal(got, want) {
			t.Fatalf("row %d: DuckDB %v, want %v", i, got, want)
		}
	}

	// Aggregates equal to the same statistics computed in Go.
	var ttft []float64
	var outTok int64
	for _, r := range reqs {
		if r.Phase == record.PhaseProfile && r.OK() {
			ttft = append(ttft, float64(r.TTFTNS))
			outTok += int64(r.OutputTokens)
		}
	}
	slices.Sort(ttft)
	var sum float64
	for _, v := range ttft {
		sum += v
	}
	got := res["ttft"][0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"count", num(t, got[0]), float64(len(ttft))},
		{"avg", num(t, got[1]), sum / float64(len(ttft))},
		{"p50", num(t, got[2]), percentile(ttft, 50)},
		{"p99", num(t, got[3]), percentile(ttft, 99)},
		{"min", num(t, got[4]), ttft[0]},
		{"max", num(t, got[5]), ttft[len(ttft)-1]},
		{"sum(output_tokens)", num(t, got[6]), float64(outTok)},
	} {
		if math.Abs(c.got-c.want) > 1e-6*math.Abs(c.want) {
			t.Errorf("ttft %s: DuckDB %v, Go %v", c.name, c.got, c.want)
		}
	}

	var nullTrace, nullCached, nullMsg, nullFirst, nullSess int64
	for _, r := range reqs {
		nullTrace += b2i(r.TraceRow < 0)
		nullCached += b2i(r.ServerCachedTokens < 0)
		nullMsg += b2i(r.ErrorMessage == "")
		nullFirst += b2i(r.FirstTokenNS == 0)
		nullSess += b2i(r.SessionID == "")
	}
	if g := res["nulls"][0]; dint(t, g[0]) != nullTrace || dint(t, g[1]) != nullCached || dint(t, g[2]) != nullMsg ||
		dint(t, g[3]) != nullFirst || dint(t, g[4]) != nullSess {
		t.Errorf("nulls = %v, want %d %d %d %d %d", g, nullTrace, nullCached, nullMsg, nullFirst, nullSess)
	}
	if r := res["kv"]; len(r) != 1 || r[0][0] != RecordsVersion {
		t.Errorf("reprise.schema = %v, want %s", r, RecordsVersion)
	}
	if r := res["codec"]; len(r) != 1 || r[0][0] != "ZSTD" {
		t.Errorf("codecs = %v, want ZSTD only", r)
	}
	if r := res["row_groups"]; len(r) != 1 || dint(t, r[0][0]) != 2 {
		t.Errorf("row groups in part 0 = %v, want 2 (1000 rows / 500)", r)
	}
	var content, tokens int64
	for _, e := range evs {
		content += b2i(e.Kind == record.EventContent)
		tokens += b2i(e.Tokens >= 0)
	}
	if g := res["events"][0]; dint(t, g[0]) != int64(len(evs)) || dint(t, g[1]) != int64(len(evs)) ||
		dint(t, g[2]) != content || dint(t, g[3]) != tokens {
		t.Errorf("events = %v, want %d rows, all time_at == time_ns, %d content, %d with tokens", g, len(evs), content, tokens)
	}

	// README examples: they run and give the Go answers.
	var minuteRows int64
	for _, r := range res["ttft_minute"] {
		minuteRows += dint(t, r[1])
	}
	if minuteRows != int64(len(ttft)) {
		t.Errorf("TTFT by minute covers %d requests, want %d", minuteRows, len(ttft))
	}
	var srv, exp int64
	for _, r := range reqs {
		if r.ServerCachedTokens >= 0 && r.ExpectedCachedTokens >= 0 {
			srv += int64(r.ServerCachedTokens)
			exp += int64(r.ExpectedCachedTokens)
		}
	}
	if g := res["cache"][0]; dint(t, g[0]) != srv || dint(t, g[1]) != exp || math.Abs(num(t, g[2])-float64(srv)/float64(exp)) > 1e-12 {
		t.Errorf("cache fidelity = %v, want %d %d %v", g, srv, exp, float64(srv)/float64(exp))
	}
	byKind := map[string]int64{}
	for _, r := range reqs {
		k := string(r.ErrorKind)
		if k == "" {
			k = "ok"
		}
		byKind[k]++
	}
	gotKinds := map[string]int64{}
	for _, r := range res["errors"] {
		gotKinds[r[0].(string)] = dint(t, r[1])
	}
	if fmt.Sprint(gotKinds) != fmt.Sprint(byKind) {
		t.Errorf("errors by kind = %v, want %v", gotKinds, byKind)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
