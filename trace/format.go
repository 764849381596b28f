package trace

import (
	"fmt"
	"strings"
)

// Format names a trace file format. The zero value "" asks [Open] and
// [NewReader] to detect the format from the file's content.
type Format string

// The formats reprise reads. Their exact semantics are in docs/format/traces.md.
const (
	// FormatMooncake is Mooncake JSONL (ms timestamps, 512-token hash ids),
	// including AIPerf's extensions (delay, session_id, text_input, …).
	FormatMooncake Format = "mooncake"
	// FormatBailian is Alibaba Bailian (Qwen) JSONL: float-second
	// timestamps, chat_id/parent_chat_id sessions, 16-token hash ids.
	FormatBailian Format = "bailian"
	// FormatBurstGPT is BurstGPT CSV, v1/v2 or v3 header, read by name.
	FormatBurstGPT Format = "burstgpt"
	// FormatAzure is the Azure LLM inference CSV (2023, 2024 and 2025).
	FormatAzure Format = "azure"
	// FormatVidur is the Splitwise/Vidur CSV (arrived_at in seconds).
	FormatVidur Format = "vidur"
	// FormatSplitwiseSim is the SplitwiseSim input CSV.
	FormatSplitwiseSim Format = "splitwisesim"
	// FormatAIPerfSingle is AIPerf single_turn JSONL: one request per line.
	FormatAIPerfSingle Format = "aiperf-single"
	// FormatAIPerfMulti is AIPerf multi_turn JSONL: one session per line,
	// read as one Row per turn.
	FormatAIPerfMulti Format = "aiperf-multi"
	// FormatWeka is the Weka / kv-cache-tester agentic-coding trace: one
	// conversation per line, with nested sub-agents, read as dependent
	// rows (design 0008).
	FormatWeka Format = "weka"
	// FormatAIPerfDAG is AIPerf's dag_jsonl: one session per line, whose
	// turns fork and spawn other sessions, read as dependent rows.
	FormatAIPerfDAG Format = "aiperf-dag"
	// FormatAIPerfGraph is AIPerf's Graph IR in JSON Lines: graph records
	// of LLM nodes and edges, instantiated by trace records, read as
	// dependent rows.
	FormatAIPerfGraph Format = "aiperf-graph"

	// Datasets: prompts without arrival times (docs/format/traces.md,
	// "Datasets"). Their rows carry the prompt text (Raw text_input) and
	// are paced by a load model: rate, concurrency or user-centric.

	// FormatShareGPT is a ShareGPT file: a JSON array (or JSON Lines) of
	// {"id", "conversations": [{"from", "value"}, …]}.
	FormatShareGPT Format = "sharegpt"
	// FormatPrompts is plain text, one prompt a line.
	FormatPrompts Format = "prompts"
	// FormatTable is a table with named columns (Options.Columns): JSON
	// Lines, CSV or Parquet.
	FormatTable Format = "table"
	// FormatInputsJSON is an AIPerf or GenAI-Perf inputs.json: request
	// bodies sent as they are.
	FormatInputsJSON Format = "inputs-json"
)

var allFormats = []Format{
	FormatMooncake, FormatBailian, FormatBurstGPT, FormatAzure,
	FormatVidur, FormatSplitwiseSim, FormatAIPerfSingle, FormatAIPerfMulti, FormatWeka,
	FormatAIPerfDAG, FormatAIPerfGraph,
	FormatShareGPT, FormatPrompts, FormatTable, FormatInputsJSON,
}

// FormatNames returns the names of all formats in a stable order, for flag
// help and shell completion. The caller owns the returned slice.
func FormatNames() []string {
	names := make([]string, len(allFormats))
	for i, f := range allFormats {
		names[i] = string(f)
	}
	return names
}

// ParseFormat returns the Format named s (case-insensitive, surrounding space
// ignored). "" and "auto" return "" (detect). A few aliases are accepted:
// "splitwise" for vidur, "qwen" for bailian, "single_turn" and "multi_turn"
// for the AIPerf formats; AIPerf's --custom-dataset-type names
// (random_pool, mooncake_trace, bailian_trace, burst_gpt_trace,
// raw_payload, inputs_json); "text" and "txt" for prompts; "jsonl",
// "csv" and "parquet" for table.
func ParseFormat(s string) (Format, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", "auto":
		return "", nil
	case "splitwise":
		return FormatVidur, nil
	case "qwen":
		return FormatBailian, nil
	case "single_turn", "aiperf_single", "single-turn":
		return FormatAIPerfSingle, nil
	case "multi_turn", "aiperf_multi", "multi-turn":
		return FormatAIPerfMulti, nil
	case "random_pool", "random-pool":
		return FormatAIPerfSingle, nil
	case "mooncake_trace", "raw_payload":
		return FormatMooncake, nil
	case "bailian_trace":
		return FormatBailian, nil
	case "weka_trace", "kv-cache-tester":
		return FormatWeka, nil
	case "dag_jsonl", "dag-jsonl", "dag":
		return FormatAIPerfDAG, nil
	case "graph_ir", "graph-ir", "graph":
		return FormatAIPerfGraph, nil
	case "burst_gpt_trace":
		return FormatBurstGPT, nil
	case "inputs_json", "inputs.json":
		return FormatInputsJSON, nil
	case "text", "txt":
		return FormatPrompts, nil
	case "jsonl", "csv", "parquet":
		return FormatTable, nil
	default:
		for _, f := range allFormats {
			if string(f) == v {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("unknown trace format %q; use one of %s (or leave it empty to detect)",
		s, strings.Join(FormatNames(), ", "))
}

// DefaultBlockSize returns the number of tokens per hash id for f: 512 for
// Mooncake, 16 for Bailian, 0 for formats without prefix identity.
func (f Format) DefaultBlockSize() int {
	switch f {
	case FormatMooncake:
		return 512
	case FormatBailian:
		return 16
	case FormatWeka:
		return 64
	}
	return 0
}

// valid reports whether f is one of the known formats.
func (f Format) valid() bool {
	for _, g := range allFormats {
		if f == g {
			return true
		}
	}
	return false
}
