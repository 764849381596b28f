//go:build ignore

// gen writes the Parquet files of the fake Hub's datasets that
// cmd/reprise's TestProfileHubDatasets serves as the Hub's Parquet
// conversion (refs/convert/parquet): small stand-ins for MATH-500,
// gsm8k, edit_5k_char and mt_bench_prompts with their real columns.
// Run it from this folder: go run gen.go
package main

import (
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// col is a column: its name, type and values (string, int64 or []string).
type col struct {
	name string
	typ  arrow.DataType
	vals []any
}

func write(path string, cols ...col) {
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
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	// WriteTable closes f.
	if err := pqarrow.WriteTable(tbl, f, 2, nil, pqarrow.DefaultWriterProps()); err != nil {
		panic(err)
	}
}

func strs(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func ints(n ...int64) []any {
	out := make([]any, len(n))
	for i, x := range n {
		out[i] = x
	}
	return out
}

func main() {
	str, i64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64
	// MATH-500 (default/test, two shards): problem, subject, level.
	write("math500-0000.parquet",
		col{"problem", str, strs("Solve x plus two equals five for x.", "Find the area of a unit circle.", "Factor x squared minus one.")},
		col{"subject", str, strs("Algebra", "Geometry", "Algebra")},
		col{"level", i64, ints(1, 2, 2)})
	write("math500-0001.parquet",
		col{"problem", str, strs("Simplify two x plus three x, then say what the coefficient of the result is.", "")},
		col{"subject", str, strs("Algebra", "Algebra")},
		col{"level", i64, ints(2, 2)})
	// gsm8k main/test and socratic/test: question, answer.
	write("gsm8k-main.parquet",
		col{"question", str, strs("Tom has three apples and buys two more. How many apples does he have?")},
		col{"answer", str, strs("#### 5")})
	write("gsm8k-socratic.parquet",
		col{"question", str, strs("A train travels sixty miles in one hour. How far does it go in three hours?", "Sara reads ten pages a day. How many pages in a week?")},
		col{"answer", str, strs("How far per hour? 60 ** 180", "Pages per week? ** 70")})
	// edit_5k_char (default/train): code, change_request.
	write("edit5k.parquet",
		col{"code", str, strs("def add(a, b):\n    return a + b", "print('hi')")},
		col{"change_request", str, strs("Rename add to plus.", "Print hello instead.")})
	// mt_bench_prompts (default/train): prompt (the user turns), category.
	write("mtbench.parquet",
		col{"prompt", arrow.ListOf(str), []any{[]string{"Write a haiku about caches.", "Now make it rhyme."}, []string{"Name three prime numbers.", "Which is the largest?"}}},
		col{"category", str, strs("writing", "math")},
		col{"prompt_id", i64, ints(11, 12)})
}
