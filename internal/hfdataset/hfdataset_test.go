package hfdataset

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/hfhub"
	"github.com/reprise-bench/reprise/internal/hfhub/hfhubtest"
)

// parquetOf returns a Parquet file of the rows: problem (string), level
// (int64), turns (list of strings).
func parquetOf(t testing.TB, problems []string, levels []int64, turns [][]string) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "problem", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "level", Type: arrow.PrimitiveTypes.Int64},
		{Name: "turns", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, p := range problems {
		b.Field(0).(*array.StringBuilder).Append(p)
		b.Field(1).(*array.Int64Builder).Append(levels[i])
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		for _, s := range turns[i] {
			lb.ValueBuilder().(*array.StringBuilder).Append(s)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, &buf, 2, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const commit = "cccccccccccccccccccccccccccccccccccccccc"

func newHub(t *testing.T) (*hfhubtest.Server, hfhub.Config) {
	hub := hfhubtest.New()
	t.Cleanup(hub.Close)
	// Two shards of the default config's train split, one of main/test.
	hub.AddLFSFileAt("datasets/org/math", ConvertRevision, commit, "default/train/0000.parquet",
		string(parquetOf(t, []string{"1+1?", "", "2+2?"}, []int64{1, 1, 2}, [][]string{{"a"}, {}, {"b", "c"}})))
	hub.AddLFSFileAt("datasets/org/math", ConvertRevision, commit, "default/train/0001.parquet",
		string(parquetOf(t, []string{"3+3?"}, []int64{2}, [][]string{{"d", " "}})))
	hub.AddLFSFileAt("datasets/org/math", ConvertRevision, commit, "main/partial-test/0000.parquet",
		string(parquetOf(t, []string{"big"}, []int64{5}, [][]string{{}})))
	return hub, hfhub.Config{Endpoint: hub.URL, CacheDir: filepath.Join(t.TempDir(), "hub")}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPrepare(t *testing.T) {
	hub, cfg := newHub(t)
	out := t.TempDir()
	res, err := Prepare(t.Context(), cfg, Spec{Repo: "org/math", Prompt: "problem"}, nil, out)
	if err != nil {
		t.Fatal(err)
	}
	// The empty prompt is skipped, as AIPerf does.
	want := `{"prompt":"1+1?"}
{"prompt":"2+2?"}
{"prompt":"3+3?"}
`
	if diff := cmp.Diff(want, read(t, res.Path)); diff != "" {
		t.Errorf("prompt file (-want +got):\n%s", diff)
	}
	if res.Rows != 4 || res.Kept != 3 || res.Commit != commit || len(res.Shards) != 2 || res.Cached {
		t.Errorf("result %+v", res)
	}
	// The shards sit in the huggingface_hub layout, refs/refs/convert/parquet naming the commit.
	for _, s := range res.Shards {
		if !strings.HasPrefix(s, filepath.Join(cfg.CacheDir, "datasets--org--math", "snapshots", commit, "default", "train")) {
			t.Errorf("shard %s outside the cache snapshot", s)
		}
	}
	if ref := read(t, filepath.Join(cfg.CacheDir, "datasets--org--math", "refs", "refs", "convert", "parquet")); ref != commit {
		t.Errorf("ref = %q", ref)
	}
	reqs := hub.Requests()
	if !slicesContain(reqs, "CDN GET /blobs/") {
		t.Errorf("no download through the CDN redirect: %v", reqs)
	}
	// Again: the prompt file is reused and the Hub is asked nothing (the
	// shards are cached; the cache recorded in .no_exist that 0002 is absent).
	res2, err := Prepare(t.Context(), cfg, Spec{Repo: "org/math", Prompt: "problem"}, nil, out)
	if err != nil || !res2.Cached || res2.Path != res.Path {
		t.Fatalf("second Prepare: %+v, %v", res2, err)
	}
	if r := hub.Requests(); len(r) != 0 {
		t.Errorf("second Prepare asked the Hub: %v", r)
	}
	// Offline, from the cache alone.
	cfg.Offline = true
	if _, err := Prepare(t.Context(), cfg, Spec{Repo: "org/math", Prompt: "problem"}, []Filter{{"level", "2"}}, out); err != nil {
		t.Errorf("offline: %v", err)
	}
}

func slicesContain(reqs []string, prefix string) bool {
	for _, r := range reqs {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

func TestPrepareFilterTemplateTurns(t *testing.T) {
	_, cfg := newHub(t)
	out := t.TempDir()
	for _, tc := range []struct {
		name    string
		spec    Spec
		filters []Filter
		want    string
	}{
		{"filter", Spec{Repo: "org/math", Prompt: "problem"}, []Filter{{"level", "2"}}, "{\"prompt\":\"2+2?\"}\n{\"prompt\":\"3+3?\"}\n"},
		{"two filters", Spec{Repo: "org/math", Prompt: "problem"}, []Filter{{"level", "2"}, {"problem", "3+3?"}}, "{\"prompt\":\"3+3?\"}\n"},
		// {{ and }} are literal braces; an empty problem still makes a prompt here.
		{"template", Spec{Repo: "org/math", Template: "Q{{{level}}}: {problem}"}, []Filter{{"level", "1"}},
			"{\"prompt\":\"Q{1}: 1+1?\"}\n{\"prompt\":\"Q{1}: \"}\n"},
		// Each list item is a turn of one session; blank items are left out.
		{"turns", Spec{Repo: "org/math", Turns: "turns"}, nil,
			"{\"session_id\":\"org/math#0\",\"prompt\":\"a\"}\n{\"session_id\":\"org/math#2\",\"prompt\":\"b\"}\n{\"session_id\":\"org/math#2\",\"prompt\":\"c\"}\n{\"session_id\":\"org/math#3\",\"prompt\":\"d\"}\n"},
		// A split the Hub converted in part is read from partial-SPLIT.
		{"partial split", Spec{Repo: "org/math", Config: "main", Split: "test", Prompt: "problem"}, nil, "{\"prompt\":\"big\"}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Prepare(t.Context(), cfg, tc.spec, tc.filters, out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, read(t, res.Path)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareErrors(t *testing.T) {
	_, cfg := newHub(t)
	out := t.TempDir()
	for _, tc := range []struct {
		name    string
		spec    Spec
		filters []Filter
		is      error
		want    string
	}{
		{"unknown filter key", Spec{Repo: "org/math", Prompt: "problem"}, []Filter{{"difficulty", "1"}}, ErrFilterKey,
			`dataset filter key "difficulty": no such column in org/math; its columns: problem, level, turns`},
		{"unknown prompt column", Spec{Repo: "org/math", Prompt: "question"}, nil, ErrColumn, `prompt column "question"`},
		{"unknown template field", Spec{Repo: "org/math", Template: "{code}"}, nil, ErrColumn, `prompt template field "code"`},
		{"bad template", Spec{Repo: "org/math", Template: "{problem"}, nil, nil, "unclosed {"},
		{"unknown subset", Spec{Repo: "org/math", Config: "nope", Prompt: "problem"}, nil, ErrSubset,
			`dataset org/math has no subset "nope": no such subset; its subsets in the Hub's Parquet conversion: default, main`},
		{"unknown split", Spec{Repo: "org/math", Config: "main", Split: "validation", Prompt: "problem"}, nil, ErrSplit,
			`dataset org/math subset main has no split "validation": no such split; its splits in the Hub's Parquet conversion: test`},
		{"unknown repo", Spec{Repo: "org/none", Prompt: "problem"}, nil, hfhub.ErrRepoNotFound, "dataset org/none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(t.Context(), cfg, tc.spec, tc.filters, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %q (%v)", err, tc.want, tc.is)
			}
			if errors.Is(err, ErrFilterKey) != (tc.is == ErrFilterKey) {
				t.Errorf("err = %v: ErrFilterKey %v", err, errors.Is(err, ErrFilterKey))
			}
		})
	}
	// Nothing half-written is left in the output folder.
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestParseFilter(t *testing.T) {
	if f, err := ParseFilter("level=Level 5"); err != nil || f != (Filter{"level", "Level 5"}) {
		t.Errorf("got %+v, %v", f, err)
	}
	if f, err := ParseFilter("a=b=c"); err != nil || f != (Filter{"a", "b=c"}) {
		t.Errorf("got %+v, %v", f, err)
	}
	for _, s := range []string{"level", "=5", ""} {
		if _, err := ParseFilter(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{{nil, ""}, {"x", "x"}, {true, "true"}, {int64(5), "5"}, {2.5, "2.5"}, {[]any{"a", 1}, `["a",1]`}} {
		if got := Text(tc.v); got != tc.want {
			t.Errorf("Text(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
