package trace_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reprise-bench/reprise/trace"
)

func ExampleNewReader() {
	const jsonl = `{"timestamp": 1000, "input_length": 700, "output_length": 20, "hash_ids": [0, 1]}
{"timestamp": 1500, "input_length": 300, "output_length": 5, "hash_ids": [0]}
`
	r, err := trace.NewReader("example.jsonl", strings.NewReader(jsonl), trace.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(r.Format(), r.BlockSize())
	var row trace.Row
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(row.Offset, row.InputTokens, row.OutputTokens, row.HashIDs)
	}
	// Output:
	// mooncake 512
	// 0s 700 20 [0 1]
	// 500ms 300 5 [0]
}

func ExampleParseError() {
	const jsonl = `{"timestamp": 0, "input_length": 2000, "output_length": 5, "hash_ids": [1, 2, 3]}`
	r, err := trace.NewReader("conversation.jsonl", strings.NewReader(jsonl), trace.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	var row trace.Row
	err = r.Next(&row)
	if pe, ok := errors.AsType[*trace.ParseError](err); ok {
		fmt.Println(pe.Line, pe.Field)
		fmt.Println(pe)
	}
	// Output:
	// 1 hash_ids
	// conversation.jsonl:1: hash_ids: 3 ids but input_length 2000 needs 4 at block size 512; fix the row, pass --block-size with the block size the trace was hashed with, or --hash-mismatch fit to use the ids that fit
}

func ExampleWriter() {
	var sb strings.Builder
	w, err := trace.NewWriter(&sb, trace.FormatMooncake)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows := []trace.Row{
		{Offset: 0, HasOffset: true, InputTokens: 600, OutputTokens: 40, HashIDs: []uint64{1, 2}, SessionID: "s1"},
		{Delay: 1500500000, HasDelay: true, InputTokens: 100, OutputTokens: 10, HashIDs: []uint64{3}, SessionID: "s1"},
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			fmt.Println(err)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(sb.String())
	// Output:
	// {"timestamp": 0, "session_id": "s1", "input_length": 600, "output_length": 40, "hash_ids": [1, 2]}
	// {"delay": 1500.5, "session_id": "s1", "input_length": 100, "output_length": 10, "hash_ids": [3]}
}
