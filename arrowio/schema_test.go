package arrowio

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestEveryFieldRoundTrips fills every field of record.Request and
// record.Event with a distinct non-zero value (by reflection, so a field
// added to the record package later is covered automatically) and checks it
// survives a write and read in every format. When it fails after a field
// was added: add a column (schema.go, build.go, read.go), bump the schema
// version and document it in docs/format/records.md.
func TestEveryFieldRoundTrips(t *testing.T) {
	var r record.Request
	fill(t, reflect.ValueOf(&r).Elem(), 1)
	r.Phase = record.PhaseWarmup
	r.ErrorKind = record.ErrTimeout
	r.OutputTokensSource = record.TokensEvents
	var e record.Event
	fill(t, reflect.ValueOf(&e).Elem(), 100)
	e.Kind = record.EventReasoning
	for _, f := range allFormats {
		dir := t.TempDir()
		writeRun(t, dir, Config{Format: f}, []record.Request{r}, []record.Event{e}, 1)
		got, err := ReadRequests(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]record.Request{r}, got); diff != "" {
			t.Errorf("%s: request (-want +got):\n%s", f, diff)
		}
		gotE, err := ReadEvents(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]record.Event{e}, gotE); diff != "" {
			t.Errorf("%s: event (-want +got):\n%s", f, diff)
		}
	}
}

func fill(t *testing.T, v reflect.Value, start int) {
	for i := 0; i < v.NumField(); i++ {
		f, n := v.Field(i), start+i
		switch f.Kind() {
		case reflect.Int32, reflect.Int64, reflect.Int:
			f.SetInt(int64(n) * 1_000_003)
		case reflect.Uint8, reflect.Uint64, reflect.Uint32:
			f.SetUint(uint64(n))
		case reflect.Float64:
			f.SetFloat(float64(n) + 0.25)
		case reflect.String:
			f.SetString("value-" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			if f.Type().Elem().Kind() != reflect.Uint64 {
				t.Fatalf("field %s is a slice of %s: teach arrowio (and this test) about it", v.Type().Field(i).Name, f.Type().Elem().Kind())
			}
			f.Set(reflect.ValueOf([]uint64{uint64(n), uint64(n) + 7, uint64(n) + 1}))
		default:
			t.Fatalf("field %s has kind %s: teach arrowio (and this test) about it", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestErrorKindsComplete parses engine/record and checks that every
// ErrorKind constant is in the error_kind dictionary.
func TestErrorKindsComplete(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "engine", "record")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "ErrorKind" {
						for _, v := range vs.Values {
							kinds = append(kinds, v.(*ast.BasicLit).Value)
						}
					}
				}
			}
		}
	}
	if len(kinds) < 10 {
		t.Fatalf("found only %d ErrorKind constants in %s: parser out of date?", len(kinds), dir)
	}
	for _, k := range kinds {
		k = k[1 : len(k)-1] // unquote
		if !slices.Contains(errorKindValues, k) {
			t.Errorf("record.ErrorKind %q is not in errorKindValues (schema.go): add it (a dictionary change, no version bump)", k)
		}
	}
}
