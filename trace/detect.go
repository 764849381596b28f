package trace

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// detectLine decides the format from the first non-blank line.
func detectLine(line []byte) (Format, error) {
	t := bytes.TrimSpace(line)
	switch {
	case string(t) == "{":
		// A pretty-printed object: AIPerf's inputs.json.
		return FormatInputsJSON, nil
	case len(t) > 0 && t[0] == '{':
		return detectJSON(t)
	case len(t) > 0 && t[0] == '[':
		return FormatShareGPT, nil
	}
	return detectCSV(line)
}

func detectJSON(line []byte) (Format, error) {
	var keys []string
	var turns []byte
	err := objectFields(line, func(key, val []byte) error {
		if len(keys) < 64 {
			keys = append(keys, string(key))
		}
		if string(key) == "turns" {
			turns = val
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("%w: the line starts like a JSON object but is not valid JSON: %v", ErrUnknownFormat, err)
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if slices.Contains(keys, n) {
				return true
			}
		}
		return false
	}
	switch {
	case has("chat_id"):
		return FormatBailian, nil
	case has("requests") && has("hash_id_scope", "block_size", "models"):
		return FormatWeka, nil
	case has("kind") && has("nodes", "edges", "graph_ref", "version"):
		return FormatAIPerfGraph, nil
	case has("turns") && (has("pre_session_spawns", "orchestrator", "context_mode") || firstTurnHas(turns, "messages")):
		return FormatAIPerfDAG, nil
	case has("turns"):
		return FormatAIPerfMulti, nil
	case has("text", "texts", "image", "images", "audio", "audios", "video", "videos"):
		return FormatAIPerfSingle, nil
	case has("input_length", "input_tokens", "text_input", "messages", "payload", "hash_ids"):
		return FormatMooncake, nil
	case has("conversations"):
		return FormatShareGPT, nil
	case has(promptColumns...):
		return FormatTable, nil
	case has("data"):
		return FormatInputsJSON, nil
	}
	if len(keys) > 8 {
		keys = append(keys[:8], "…")
	}
	return "", fmt.Errorf("%w: JSON keys %s match no format (Mooncake needs input_length, Bailian chat_id, AIPerf text or turns); name the format",
		ErrUnknownFormat, strings.Join(keys, ", "))
}

func detectCSV(line []byte) (Format, error) {
	fields, err := splitCSV(line, nil)
	if err != nil {
		return "", fmt.Errorf("%w: first line is neither JSON nor CSV: %v", ErrUnknownFormat, err)
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = strings.ToLower(strings.TrimSpace(string(f)))
	}
	has := func(n ...string) bool {
		for _, x := range n {
			if !slices.Contains(names, x) {
				return false
			}
		}
		return true
	}
	switch {
	case has("request tokens", "response tokens"):
		return FormatBurstGPT, nil
	case has("timestamp", "contexttokens", "generatedtokens"):
		return FormatAzure, nil
	case has("arrived_at"):
		return FormatVidur, nil
	case has("arrival_timestamp", "prompt_size"):
		return FormatSplitwiseSim, nil
	}
	for _, c := range promptColumns {
		if has(c) {
			return FormatTable, nil
		}
	}
	if len(names) == 6 && (has("gamma") || has("weibull") || names[3] == "") && isNumeric(names[0]) {
		return "", fmt.Errorf("%w: this looks like a ServeGen per-window distribution file (rate, cv, Gamma|Weibull), not a per-request trace; use it with synthesize", ErrUnknownFormat)
	}
	shown := string(line)
	if len(shown) > 120 {
		shown = shown[:120] + "…"
	}
	return "", fmt.Errorf("%w: first line %q is no known JSONL row or CSV header; name the format (%s)",
		ErrUnknownFormat, shown, strings.Join(FormatNames(), ", "))
}

// isPromptsName reports whether name is a plain text file (.txt, maybe
// compressed), read as one prompt a line.
func isPromptsName(name string) bool {
	n := strings.ToLower(name)
	n = strings.TrimSuffix(strings.TrimSuffix(n, ".gz"), ".zst")
	return strings.HasSuffix(n, ".txt")
}

func isNumeric(s string) bool {
	_, st := parseFixed([]byte(s), 0)
	return st == fixedOK || st == fixedRounded
}

// firstTurnHas reports whether the first element of a turns array is an
// object with key (AIPerf dag_jsonl turns have messages, multi_turn turns
// text).
func firstTurnHas(turns []byte, key string) bool {
	found, first := false, true
	_ = arrayElems(turns, func(e []byte) error {
		if first {
			first = false
			_ = objectFields(e, func(k, _ []byte) error {
				found = found || string(k) == key
				return nil
			})
		}
		return nil
	})
	return found
}
