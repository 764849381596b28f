package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// fxCol is a column: its name, type and values (string, int64 or []string).
type fxCol struct {
	name string
	typ  arrow.DataType
	vals []any
}

func parquetFixture(t *testing.T, cols ...fxCol) []byte {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, c := range cols {
		for _, v := range c.vals {
			switch v := v.(type) {
			case string:
				b.Field(i).(*array.StringBuilder).Append(v)
			case int64:
				b.Field(i).(*array.Int64Builder).Append(v)
			case []string:
				lb := b.Field(i).(*array.ListBuilder)
				lb.Append(true)
				for _, s := range v {
					lb.ValueBuilder().(*array.StringBuilder).Append(s)
				}
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, 2, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fxStrs(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func fxInts(n ...int64) []any {
	out := make([]any, len(n))
	for i, x := range n {
		out[i] = x
	}
	return out
}

// hubFixtures are the Parquet files of the fake Hub's datasets (testdata/hub)
// that TestProfileHubDatasets serves as the Hub's Parquet conversion:
// small stand-ins for MATH-500, gsm8k, edit_5k_char and mt_bench_prompts
// with their real columns.
func hubFixtures(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	write := func(name string, cols ...fxCol) { out[name] = parquetFixture(t, cols...) }
	str, i64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64
	// MATH-500 (default/test, two shards): problem, subject, level.
	write("math500-0000.parquet",
		fxCol{"problem", str, fxStrs("Solve x plus two equals five for x.", "Find the area of a unit circle.", "Factor x squared minus one.")},
		fxCol{"subject", str, fxStrs("Algebra", "Geometry", "Algebra")},
		fxCol{"level", i64, fxInts(1, 2, 2)})
	write("math500-0001.parquet",
		fxCol{"problem", str, fxStrs("Simplify two x plus three x, then say what the coefficient of the result is.", "")},
		fxCol{"subject", str, fxStrs("Algebra", "Algebra")},
		fxCol{"level", i64, fxInts(2, 2)})
	// gsm8k main/test and socratic/test: question, answer.
	write("gsm8k-main.parquet",
		fxCol{"question", str, fxStrs("Tom has three apples and buys two more. How many apples does he have?")},
		fxCol{"answer", str, fxStrs("#### 5")})
	write("gsm8k-socratic.parquet",
		fxCol{"question", str, fxStrs("A train travels sixty miles in one hour. How far does it go in three hours?", "Sara reads ten pages a day. How many pages in a week?")},
		fxCol{"answer", str, fxStrs("How far per hour? 60 ** 180", "Pages per week? ** 70")})
	// edit_5k_char (default/train): code, change_request.
	write("edit5k.parquet",
		fxCol{"code", str, fxStrs("def add(a, b):\n    return a + b", "print('hi')")},
		fxCol{"change_request", str, fxStrs("Rename add to plus.", "Print hello instead.")})
	// mt_bench_prompts (default/train): prompt (the user turns), category.
	write("mtbench.parquet",
		fxCol{"prompt", arrow.ListOf(str), []any{[]string{"Write a haiku about caches.", "Now make it rhyme."}, []string{"Name three prime numbers.", "Which is the largest?"}}},
		fxCol{"category", str, fxStrs("writing", "math")},
		fxCol{"prompt_id", i64, fxInts(11, 12)})
	return out
}

// TestHubFixtures: testdata/hub holds what hubFixtures makes (-update
// rewrites it).
func TestHubFixtures(t *testing.T) {
	for name, want := range hubFixtures(t) {
		p := filepath.Join("testdata", "hub", name)
		if updating() {
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from what hubFixtures makes (%v); run go test -run TestHubFixtures -update", p, err)
		}
	}
}
