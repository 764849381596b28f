package hfdataset

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/internal/hfhub"
)

// ConvertRevision is the branch of the Hub's Parquet conversion.
const ConvertRevision = "refs/convert/parquet"

// Defaults of a Spec.
const (
	DefaultConfig = "default"
	DefaultSplit  = "train"
)

// maxShards bounds the Parquet files of one split.
const maxShards = 10_000

// The errors of a dataset that lacks what a Spec or a Filter names
// (match them with errors.Is); their text names what it has.
var (
	// ErrColumn: a column the spec or a filter names is not in the dataset.
	ErrColumn = errors.New("no such column")
	// ErrSubset: the Parquet conversion has no such config (subset).
	ErrSubset = errors.New("no such subset")
	// ErrSplit: the config has no such split.
	ErrSplit = errors.New("no such split")
	// ErrFilterKey: a filter's key is not a column (also an ErrColumn).
	ErrFilterKey error = filterKeyError{}
)

type filterKeyError struct{}

func (filterKeyError) Error() string { return ErrColumn.Error() }
func (filterKeyError) Unwrap() error { return ErrColumn }

// Spec names a dataset split and how one of its rows becomes prompts.
// The zero Config and Split are DefaultConfig and DefaultSplit.
type Spec struct {
	// Repo is the dataset's id, ORG/NAME.
	Repo string
	// Config is the dataset's config (subset): the first folder of the
	// Parquet conversion.
	Config string
	// Split is the split, the second folder ("partial-SPLIT" is read
	// when the Hub converted only the first part of a large split).
	Split string
	// Prompt is the column holding the prompt text.
	Prompt string
	// Template, when not empty, builds the prompt instead: each {COLUMN}
	// is replaced by that column's text, {{ and }} are literal braces
	// (the named fields of Python's str.format, as AIPerf's
	// prompt_template).
	Template string
	// Turns, when not empty, is a list column whose items are the user
	// turns of one session (rows then carry a session_id).
	Turns string
}

// Filter keeps the rows whose column Key, written as text, equals Value.
type Filter struct{ Key, Value string }

// ParseFilter reads a KEY=VALUE filter (AIPerf's --dataset-filter).
func ParseFilter(s string) (Filter, error) {
	k, v, ok := strings.Cut(s, "=")
	if k = strings.TrimSpace(k); !ok || k == "" {
		return Filter{}, fmt.Errorf("dataset filter %q: want KEY=VALUE (rows kept where the column KEY equals VALUE)", s)
	}
	return Filter{Key: k, Value: v}, nil
}

// Result says what Prepare made.
type Result struct {
	// Path is the JSON Lines prompt file.
	Path string
	// Commit is the conversion's commit the shards were read at.
	Commit string
	// Shards are the cached Parquet files read.
	Shards []string
	// Split is the split folder read (Spec.Split or partial-SPLIT).
	Split string
	// Rows and Kept count the dataset's rows and those written (kept by
	// the filters, with a prompt); both 0 when Cached.
	Rows, Kept int
	// Cached reports that the prompt file existed and was reused.
	Cached bool
}

// Prepare downloads the Parquet shards of s (what the cache lacks) and
// writes the prompt file under outDir (unless it is there already),
// keeping the rows every filter holds for. A partial file never lands:
// it is written beside and renamed.
func Prepare(ctx context.Context, hub hfhub.Config, s Spec, filters []Filter, outDir string) (Result, error) {
	if s.Config == "" {
		s.Config = DefaultConfig
	}
	if s.Split == "" {
		s.Split = DefaultSplit
	}
	res, err := shards(ctx, hub, s)
	if err != nil {
		return res, err
	}
	res.Path = filepath.Join(outDir, strings.ReplaceAll(s.Repo, "/", "--"), res.Commit, s.Config, res.Split+"-"+key(s, filters)+".jsonl")
	if fi, err := os.Stat(res.Path); err == nil && fi.Mode().IsRegular() {
		res.Cached = true
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(res.Path), 0o755); err != nil {
		return res, err
	}
	f, err := os.CreateTemp(filepath.Dir(res.Path), ".prompts-*.tmp")
	if err != nil {
		return res, err
	}
	w := bufio.NewWriter(f)
	err = Convert(w, res.Shards, s, filters, &res)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), res.Path)
	}
	if err != nil {
		os.Remove(f.Name())
		return res, fmt.Errorf("dataset %s %s/%s: %w", s.Repo, s.Config, res.Split, err)
	}
	return res, nil
}

// key names a spec and its filters in the prompt file's name.
func key(s Spec, filters []Filter) string {
	h := sha256.New()
	fmt.Fprintf(h, "v1\x00%s\x00%s\x00%s", s.Prompt, s.Template, s.Turns)
	for _, f := range filters {
		fmt.Fprintf(h, "\x00%s=%s", f.Key, f.Value)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// shards downloads CONFIG/SPLIT/0000.parquet, 0001.parquet, … until the
// Hub (or the cache) says the next is absent.
func shards(ctx context.Context, hub hfhub.Config, s Spec) (Result, error) {
	res := Result{Split: s.Split}
	for i := 0; i < maxShards; i++ {
		name := fmt.Sprintf("%s/%s/%04d.parquet", s.Config, res.Split, i)
		f, err := hub.Download(ctx, hfhub.Dataset, s.Repo, ConvertRevision, name)
		switch {
		case err == nil:
			if res.Commit != "" && f.Commit != res.Commit {
				return res, fmt.Errorf("dataset %s: the Parquet conversion changed while it was read (commit %s, then %s); run again", s.Repo, res.Commit, f.Commit)
			}
			res.Commit = f.Commit
			res.Shards = append(res.Shards, f.Path)
			continue
		case i > 0 && (errors.Is(err, hfhub.ErrEntryNotFound) || errors.Is(err, hfhub.ErrOffline)):
			return res, nil
		case i == 0 && errors.Is(err, hfhub.ErrEntryNotFound) && !strings.HasPrefix(res.Split, "partial-"):
			// A large split is converted in part, under partial-SPLIT.
			partial := s
			partial.Split = "partial-" + s.Split
			if r, perr := shards(ctx, hub, partial); perr == nil {
				return r, nil
			}
			return res, missing(ctx, hub, s, err)
		}
		return res, err
	}
	return res, fmt.Errorf("dataset %s %s/%s: more than %d Parquet files", s.Repo, s.Config, s.Split, maxShards)
}

// missing explains a split the conversion lacks (err, the download's
// error): the dataset's configs when it has no s.Config, else the
// config's splits, as the Hub lists them (offline: as the cache does).
func missing(ctx context.Context, hub hfhub.Config, s Spec, err error) error {
	configs, fromCache, lerr := folders(ctx, hub, s.Repo, "")
	if lerr != nil {
		return fmt.Errorf("dataset %s: the Parquet conversion has no %s/%s, and its folders could not be listed (%v): %w", s.Repo, s.Config, s.Split, lerr, err)
	}
	where := "the Hub's Parquet conversion"
	if fromCache {
		where = "the cache (offline; the Hub may have more)"
	}
	if !slices.Contains(configs, s.Config) {
		return fmt.Errorf("dataset %s has no subset %q: %w; its subsets in %s: %s", s.Repo, s.Config, ErrSubset, where, strings.Join(configs, ", "))
	}
	splits, _, lerr := folders(ctx, hub, s.Repo, s.Config)
	if lerr != nil {
		return fmt.Errorf("dataset %s subset %s: no split %s, and its splits could not be listed (%v): %w", s.Repo, s.Config, s.Split, lerr, err)
	}
	for i, sp := range splits {
		splits[i] = strings.TrimPrefix(sp, "partial-")
	}
	splits = slices.Compact(splits)
	return fmt.Errorf("dataset %s subset %s has no split %q: %w; its splits in %s: %s", s.Repo, s.Config, s.Split, ErrSplit, where, strings.Join(splits, ", "))
}

// folders lists the folder names in dir of the Parquet conversion.
func folders(ctx context.Context, hub hfhub.Config, repo, dir string) ([]string, bool, error) {
	entries, fromCache, err := hub.List(ctx, hfhub.Dataset, repo, ConvertRevision, dir)
	if err != nil {
		return nil, fromCache, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, fromCache, nil
}

// line is one row of the prompt file.
type line struct {
	SessionID string `json:"session_id,omitempty"`
	Prompt    string `json:"prompt"`
}

// Convert writes the prompt file of the Parquet files paths to w,
// counting into res. A damaged file is an error, never a panic.
func Convert(w io.Writer, paths []string, s Spec, filters []Filter, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	tmpl, err := parseTemplate(s.Template)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := convertFile(enc, p, s, tmpl, filters, res); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

func convertFile(enc *json.Encoder, path string, s Spec, tmpl []piece, filters []Filter, res *Result) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt Parquet file: %v", p)
		}
	}()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("not a readable Parquet file: %w", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	schema, err := fr.Schema()
	if err != nil {
		return err
	}
	cols, err := columns(schema, s, tmpl, filters)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := func(name string) any { return rec.Column(cols[name]).GetOneForMarshal(i) }
			if err := convertRow(enc, row, s, tmpl, filters, res); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

const filterKey = "dataset filter key"

// columns maps the column names the spec and filters use to their index
// in schema, or says which are missing and which exist.
func columns(schema *arrow.Schema, s Spec, tmpl []piece, filters []Filter) (map[string]int, error) {
	idx := map[string]int{}
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		idx[f.Name] = i
		names[i] = f.Name
	}
	cols := map[string]int{}
	need := func(what, name string) error {
		i, ok := idx[name]
		if !ok {
			sentinel := ErrColumn
			if what == filterKey {
				sentinel = ErrFilterKey
			}
			return fmt.Errorf("%s %q: %w in %s; its columns: %s", what, name, sentinel, s.Repo, strings.Join(names, ", "))
		}
		cols[name] = i
		return nil
	}
	var errs []error
	switch {
	case s.Turns != "":
		errs = append(errs, need("turns column", s.Turns))
	case tmpl != nil:
		for _, p := range tmpl {
			if p.field != "" {
				errs = append(errs, need("prompt template field", p.field))
			}
		}
	default:
		errs = append(errs, need("prompt column", s.Prompt))
	}
	for _, f := range filters {
		errs = append(errs, need(filterKey, f.Key))
	}
	return cols, errors.Join(errs...)
}

// convertRow writes the prompt lines of one row (row returns a column's
// value) if every filter holds.
func convertRow(enc *json.Encoder, row func(string) any, s Spec, tmpl []piece, filters []Filter, res *Result) error {
	res.Rows++
	for _, f := range filters {
		if Text(row(f.Key)) != f.Value {
			return nil
		}
	}
	if s.Turns != "" {
		items := list(row(s.Turns))
		id := s.Repo + "#" + strconv.Itoa(res.Rows-1)
		n := 0
		for _, it := range items {
			if t := Text(it); strings.TrimSpace(t) != "" {
				if err := enc.Encode(line{SessionID: id, Prompt: t}); err != nil {
					return err
				}
				n++
			}
		}
		if n > 0 {
			res.Kept++
		}
		return nil
	}
	var p string
	if tmpl != nil {
		var b strings.Builder
		for _, pc := range tmpl {
			if pc.field == "" {
				b.WriteString(pc.text)
			} else {
				b.WriteString(Text(row(pc.field)))
			}
		}
		p = b.String()
	} else {
		p = Text(row(s.Prompt))
	}
	if strings.TrimSpace(p) == "" {
		return nil // AIPerf skips empty prompts too
	}
	res.Kept++
	return enc.Encode(line{Prompt: p})
}

// Text is a cell's value as text: a string as it is, null as "",
// booleans true/false, numbers in decimal, anything else (lists,
// structs) as JSON.
func Text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32)
	case int64, int32, int16, int8, uint64, uint32, uint16, uint8, int, uint:
		return fmt.Sprint(v)
	}
	if r, ok := v.(json.RawMessage); ok {
		return string(r)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// list is a list cell's items (Arrow gives a list as JSON to marshal).
func list(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case json.RawMessage:
		var out []any
		json.Unmarshal(v, &out)
		return out
	case []byte:
		var out []any
		json.Unmarshal(v, &out)
		return out
	}
	return nil
}

// piece is a literal text or a {field} of a template.
type piece struct{ text, field string }

// parseTemplate reads a str.format template with named fields only; nil
// for "".
func parseTemplate(t string) ([]piece, error) {
	if t == "" {
		return nil, nil
	}
	var out []piece
	var lit strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '{' && i+1 < len(t) && t[i+1] == '{', c == '}' && i+1 < len(t) && t[i+1] == '}':
			lit.WriteByte(c)
			i++
		case c == '{':
			end := strings.IndexByte(t[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("prompt template: unclosed { at byte %d", i)
			}
			name := t[i+1 : i+end]
			if name == "" || strings.ContainsAny(name, "{!:[].") {
				return nil, fmt.Errorf("prompt template: field %q at byte %d: want {COLUMN}", name, i)
			}
			out = append(out, piece{text: lit.String()}, piece{field: name})
			lit.Reset()
			i += end
		case c == '}':
			return nil, fmt.Errorf("prompt template: single } at byte %d (write }})", i)
		default:
			lit.WriteByte(c)
		}
	}
	out = append(out, piece{text: lit.String()})
	return slices.DeleteFunc(out, func(p piece) bool { return p.text == "" && p.field == "" }), nil
}
