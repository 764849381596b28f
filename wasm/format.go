package wasm

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// WriteClassified prints the events of c with the records each produced
// and the final summary, in the human-readable form of `reprise adapters
// test` (stable: golden files use it).
func WriteClassified(w io.Writer, c *Classified) error {
	var b strings.Builder
	r := 0
	for i, ev := range c.Events {
		fmt.Fprintf(&b, "event %d", i)
		if len(ev.Name) > 0 {
			fmt.Fprintf(&b, " [%s]", ev.Name)
		}
		if f := eventFlags(ev.Flags); f != "" {
			fmt.Fprintf(&b, " (%s)", f)
		}
		fmt.Fprintf(&b, " %s\n", quoteTrunc(ev.Data, 72))
		n := 0
		for ; r < len(c.Records) && c.Records[r].Event == uint32(i); r++ {
			b.WriteString("  -> ")
			writeRecord(&b, &c.Records[r])
			b.WriteByte('\n')
			n++
		}
		if n == 0 {
			b.WriteString("  -> ignore\n")
		}
	}
	for ; r < len(c.Records); r++ { // records for events past the end (cannot happen: decodeRecords rejects them)
		b.WriteString("  -> (stray) ")
		writeRecord(&b, &c.Records[r])
		b.WriteByte('\n')
	}
	f := &c.Final
	b.WriteString("final:")
	field := func(bit uint32, name string, v uint32) {
		if f.Valid&bit != 0 {
			fmt.Fprintf(&b, " %s=%d", name, v)
		}
	}
	field(adapter.ValidPromptTokens, "prompt_tokens", f.PromptTokens)
	field(adapter.ValidCompletionTokens, "completion_tokens", f.CompletionTokens)
	field(adapter.ValidReasoningTokens, "reasoning_tokens", f.ReasoningTokens)
	field(adapter.ValidCachedTokens, "cached_tokens", f.CachedTokens)
	if f.Valid&adapter.ValidFinishReason != 0 {
		fmt.Fprintf(&b, " finish=%s", finishName(f.FinishReason))
	}
	fmt.Fprintf(&b, " choices=%d", f.Choices)
	if f.Valid&adapter.ValidError != 0 {
		fmt.Fprintf(&b, " error=%d %s", f.ErrorCode, quoteTrunc(f.ErrorMessage, 120))
	}
	b.WriteByte('\n')
	if len(f.Extras) > 0 {
		fmt.Fprintf(&b, "extras: %s\n", quoteTrunc(f.Extras, 200))
	}
	fmt.Fprintf(&b, "text: %s\n", quoteTrunc(f.Text, 200))
	if len(f.Reasoning) > 0 {
		fmt.Fprintf(&b, "reasoning: %s\n", quoteTrunc(f.Reasoning, 200))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRecord(b *strings.Builder, r *adapter.Record) {
	b.WriteString(r.Kind.String())
	if r.Choice != 0 {
		fmt.Fprintf(b, " choice=%d", r.Choice)
	}
	if r.TextBytes != 0 {
		fmt.Fprintf(b, " text_bytes=%d", r.TextBytes)
	}
	if r.Tokens != adapter.TokensUnknown {
		fmt.Fprintf(b, " tokens=%d", r.Tokens)
	}
	switch r.Kind {
	case 6: // finish
		fmt.Fprintf(b, " reason=%s", finishName(adapter.FinishReason(r.Aux0)))
	case 5: // error
		fmt.Fprintf(b, " code=%d", r.Aux0)
	case 3: // tool call
		fmt.Fprintf(b, " tool=%d", r.Aux1)
	}
	var fl []string
	if r.Flags&adapter.RecordTextCaptured != 0 {
		fl = append(fl, "captured")
	}
	if r.Flags&adapter.RecordTokensExact != 0 {
		fl = append(fl, "exact")
	}
	if r.Flags&adapter.RecordRefusal != 0 {
		fl = append(fl, "refusal")
	}
	if len(fl) > 0 {
		fmt.Fprintf(b, " [%s]", strings.Join(fl, ","))
	}
}

func finishName(f adapter.FinishReason) string {
	if s := f.String(); s != "" {
		return s
	}
	return "unknown"
}

func eventFlags(f adapter.EventFlags) string {
	var s []string
	for _, x := range []struct {
		bit  adapter.EventFlags
		name string
	}{{adapter.EventComment, "comment"}, {adapter.EventDone, "done"}, {adapter.EventWholeBody, "whole body"}, {adapter.EventNonOK, "non-2xx"}} {
		if f&x.bit != 0 {
			s = append(s, x.name)
		}
	}
	return strings.Join(s, ", ")
}

func quoteTrunc(b []byte, n int) string {
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}
