package synth

import (
	"fmt"
	"slices"

	"github.com/reprise-bench/reprise/trace"
)

// Incremental turns the cumulative multi-turn sessions of rows (each turn's
// input_length and hash_ids hold its whole context) into AIPerf's
// mooncake_trace dialect, the only meaning a Mooncake line with a
// session_id has for AIPerf and for reprise's reader: a later turn holds
// only its new tokens, and the client sends it after the history (every
// earlier prompt and the live response). Turn j's context must be turn
// j−1's context, turn j−1's output tokens and n ≥ 1 new tokens (as
// [Generate] builds them), with the ids of turn j−1's full blocks leading
// turn j's ids; the row then keeps input_length n and the last ⌈n/B⌉ of
// its ids (fresh blocks, shared with no other row). Rows outside such
// sessions are returned as they are; every returned row has Cumulative
// false. rows are not modified; the result shares hash id arrays with
// them, and is rows itself when no row is cumulative (nothing to change:
// a derive of a plain Mooncake trace makes no copy of its rows here).
//
// A session whose contexts do not grow that way (a real Bailian trace,
// whose history is not exactly the previous prompt and response) cannot be
// written as Mooncake: the error names the row; write it as Bailian.
func Incremental(rows []trace.Row) ([]trace.Row, error) {
	if !slices.ContainsFunc(rows, func(r trace.Row) bool { return r.Cumulative }) {
		return rows, nil
	}
	out := slices.Clone(rows)
	last := map[string]int{}
	count := map[string]int{}
	for i := range rows {
		if rows[i].SessionID != "" && rows[i].Cumulative {
			count[rows[i].SessionID]++
		}
	}
	for i := range out {
		r := &out[i]
		if !r.Cumulative {
			continue
		}
		r.Cumulative = false
		if r.SessionID == "" || count[r.SessionID] < 2 {
			continue
		}
		p, ok := last[r.SessionID]
		last[r.SessionID] = i
		if !ok {
			continue
		}
		pr := &rows[p] // the previous turn's context, as given
		ctx := &rows[i]
		n := ctx.InputTokens - pr.InputTokens - pr.OutputTokens
		if n < 1 || len(ctx.Raw) > 0 || len(pr.Raw) > 0 {
			return nil, fmt.Errorf("line %d (session %q, turn %d): input_length %d is not the previous turn's %d tokens, its %d output tokens and new tokens, so it cannot become an AIPerf-style Mooncake turn (new tokens only); use --output-format bailian",
				ctx.Line, ctx.SessionID, ctx.Turn, ctx.InputTokens, pr.InputTokens, pr.OutputTokens)
		}
		r.InputTokens = n
		if B := ctx.BlockSize; B > 0 && len(ctx.HashIDs) > 0 {
			keep := pr.InputTokens / B
			k := (n + B - 1) / B
			if keep > len(pr.HashIDs) || keep+k > len(ctx.HashIDs) || !slices.Equal(ctx.HashIDs[:keep], pr.HashIDs[:keep]) {
				return nil, fmt.Errorf("line %d (session %q, turn %d): hash_ids do not start with the previous turn's full blocks, so the turn cannot become an AIPerf-style Mooncake turn; use --output-format bailian",
					ctx.Line, ctx.SessionID, ctx.Turn)
			}
			r.HashIDs = ctx.HashIDs[len(ctx.HashIDs)-k:]
		}
	}
	return out, nil
}

// Contexts is the inverse of [Incremental]: for every session of two or
// more non-cumulative rows (AIPerf-style Mooncake), it returns the rows a
// replay sends when each response is exactly output_length tokens (the
// --ignore-eos default): turn j's context is turn j−1's context, turn
// j−1's output and turn j's new tokens; its ids are those of turn j−1's
// full blocks followed by fresh ids (above every id of rows) for the rest,
// since a block that holds a response is shared with nothing. Cumulative
// is set on those rows; other rows are returned as they are. The analyzer
// run on the result ([Measure]) gives the statistics of the replayed
// contexts, which is what [Generate]'s targets describe for Mooncake
// output.
func Contexts(rows []trace.Row) []trace.Row {
	out := slices.Clone(rows)
	count := map[string]int{}
	var next uint64
	for i := range rows {
		if rows[i].SessionID != "" && !rows[i].Cumulative {
			count[rows[i].SessionID]++
		}
		for _, id := range rows[i].HashIDs {
			next = max(next, id+1)
		}
	}
	last := map[string]int{}
	for i := range out {
		r := &out[i]
		if r.SessionID == "" || r.Cumulative || count[r.SessionID] < 2 {
			continue
		}
		r.Cumulative = true
		p, ok := last[r.SessionID]
		last[r.SessionID] = i
		if !ok {
			continue
		}
		pr := &out[p] // already a context
		L := pr.InputTokens + pr.OutputTokens + r.InputTokens
		if B := r.BlockSize; B > 0 && len(r.HashIDs) > 0 {
			keep := min(pr.InputTokens/B, len(pr.HashIDs))
			ids := make([]uint64, keep, (L+B-1)/B)
			copy(ids, pr.HashIDs[:keep])
			for len(ids) < (L+B-1)/B {
				ids = append(ids, next)
				next++
			}
			r.HashIDs = ids
		}
		r.InputTokens = L
	}
	return out
}
