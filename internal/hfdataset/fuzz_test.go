package hfdataset

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConvert: any bytes as a Parquet shard give prompts or an error,
// never a panic.
func FuzzConvert(f *testing.F) {
	f.Add(parquetOf(f, []string{"1+1?"}, []int64{1}, [][]string{{"a"}}), "problem", "", "level=1")
	f.Add([]byte("PAR1 not really PAR1"), "problem", "{problem}", "")
	f.Fuzz(func(t *testing.T, data []byte, prompt, tmpl, filter string) {
		p := filepath.Join(t.TempDir(), "0000.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var fs []Filter
		if fl, err := ParseFilter(filter); err == nil {
			fs = append(fs, fl)
		}
		var res Result
		Convert(io.Discard, []string{p}, Spec{Prompt: prompt, Template: tmpl}, fs, &res)
		if res.Kept > res.Rows {
			t.Errorf("kept %d of %d rows", res.Kept, res.Rows)
		}
	})
}

// FuzzTemplate: a template parses or is refused; a parsed one has no
// empty field.
func FuzzTemplate(f *testing.F) {
	f.Add("Q{{{level}}}: {problem}")
	f.Add("}")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parseTemplate(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.field == "" && p.text == "" {
				t.Errorf("%q: empty piece", s)
			}
		}
	})
}
