package reprise

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/accuracy"
	"github.com/reprise-bench/reprise/internal/hfhub"
	"github.com/reprise-bench/reprise/trace"
)

// AccuracyOptions grade the server's answers to benchmark questions, alone
// or mixed into the load (docs/design/0021-accuracy.md, the prompt
// formats in docs/format/accuracy.md). The zero value grades nothing.
type AccuracyOptions struct {
	// Benchmark is "mmlu", "gsm8k" or "aime" ("" with File or none).
	Benchmark string
	// Data is a local copy of the benchmark (a directory laid out as its
	// Hugging Face repository, or MMLU's CSV layout); "" downloads it from
	// the Hub into the Hugging Face cache (HF_* environment).
	Data string
	// Revision pins the Hub revision of a download ("" = main).
	Revision string
	// File is a JSON Lines file of the user's own items (prompt or
	// messages, answer, grader); exclusive with Benchmark.
	File string
	// Tasks keeps these tasks only (MMLU subjects; an items file's task).
	Tasks []string
	// Shots is the number of examples before each question (0–32).
	Shots int
	// CoT asks for step-by-step reasoning before the answer.
	CoT bool
	// Grader overrides the benchmark's grader: multiple_choice, number,
	// math or exact_match.
	Grader string
	// SystemPrompt, when set, is sent as a system message first.
	SystemPrompt string
	// MaxTokens is the output budget of a graded request (0 = the
	// benchmark's: MMLU 16, 512 with CoT; GSM8K 384; AIME 2048).
	MaxTokens int
	// Limit grades the first Limit items only (0 = all).
	Limit int
	// Mix is the fraction of the load's requests (trace rows or
	// synthetic requests) replaced by graded items, sent at the replaced
	// requests' times; 0 sends the items alone, as the load.
	Mix float64
	// Temperature is sent with every graded request; nil sends 0
	// (greedy decoding) unless ExtraBody sets a temperature.
	Temperature *float64
	// Verbose logs every graded answer (item, expected, extracted).
	Verbose bool
}

// enabled reports whether a benchmark or file is given.
func (a *AccuracyOptions) enabled() bool { return a.Benchmark != "" || a.File != "" }

// itemsLoad reports whether the graded items are the whole load (Mix 0).
func (a *AccuracyOptions) itemsLoad() bool { return a.enabled() && a.Mix == 0 }

// accPlan is a run's graded items and which requests carry them.
type accPlan struct {
	set  *accuracy.Set
	raws [][]byte // each item's trace.Row.Raw
	isl  []int    // each item's prompt tokens
	byID map[string]int
	mix  float64
	all  bool // every request is an item (Mix 0)
	// temperature is what was sent: the option's, else --extra-body's
	// (tempFromBody), else 0.
	temperature  float64
	tempFromBody bool
	verbose      bool
	log          *slog.Logger
}

// newAccPlan loads the items and renders their rows' content. Problems go
// to bad.
func newAccPlan(ctx context.Context, o *Options, count func(string) int, log *slog.Logger, bad func(field, format string, args ...any)) *accPlan {
	ao := &o.Accuracy
	if ao.Mix < 0 || ao.Mix > 1 {
		bad("Accuracy.Mix", "{Accuracy.Mix} %v: want a fraction from 0 (the items alone) to 1", ao.Mix)
		return nil
	}
	if ao.Mix == 0 && (hasTrace(o) || o.Trace.PublicDataset != "") {
		bad("Accuracy.Mix", "{Accuracy.Mix} 0 sends the graded items as the whole load, but a trace is given too: give {Accuracy.Mix} (the fraction of the trace's requests to replace) or leave the trace out")
		return nil
	}
	if ao.MaxTokens < 0 || ao.Limit < 0 {
		bad("Accuracy.MaxTokens", "{Accuracy.MaxTokens} %d and {Accuracy.Limit} %d: want ≥ 0", ao.MaxTokens, ao.Limit)
		return nil
	}
	lo := accuracy.LoadOptions{Benchmark: strings.ToLower(ao.Benchmark), Data: ao.Data, File: ao.File, Revision: ao.Revision,
		Tasks: ao.Tasks, Shots: ao.Shots, CoT: ao.CoT, SystemPrompt: ao.SystemPrompt, Grader: accuracy.Grader(ao.Grader),
		MaxTokens: ao.MaxTokens, Limit: ao.Limit,
		Download: accuracy.HubDownload(hfhub.FromEnv(), log)}
	set, err := accuracy.Load(ctx, lo)
	if err != nil {
		field := "Accuracy.Benchmark"
		if ao.File != "" {
			field = "Accuracy.File"
		}
		bad(field, "{%s}: %w", field, err)
		return nil
	}
	a := &accPlan{set: set, mix: ao.Mix, all: ao.Mix == 0, verbose: ao.Verbose, log: log, byID: make(map[string]int, len(set.Items))}
	extra := map[string]any{}
	switch {
	case ao.Temperature != nil:
		a.temperature = *ao.Temperature
		extra["temperature"] = a.temperature
	default:
		var body map[string]any
		if o.ExtraBody != "" && json.Unmarshal([]byte(o.ExtraBody), &body) == nil {
			if t, ok := body["temperature"].(float64); ok {
				a.temperature, a.tempFromBody = t, true
			}
		}
		if !a.tempFromBody {
			extra["temperature"] = 0
		}
	}
	if o.IgnoreEOS {
		// An answer ends where the model stops: ignore_eos would pad it to
		// max_tokens (the row's extra wins over the endpoint's field).
		extra["ignore_eos"] = false
	}
	chat := o.Endpoint == "" || o.Endpoint == "chat"
	for i := range set.Items {
		msgs := set.Messages(i)
		raw := map[string]any{"extra": extra}
		if chat {
			raw["messages"] = msgs
		} else {
			var b strings.Builder
			for k, m := range msgs {
				if k > 0 {
					b.WriteString("\n\n")
				}
				b.WriteString(m.Content)
			}
			raw["text_input"] = b.String()
		}
		j, err := json.Marshal(raw)
		if err != nil {
			bad("Accuracy.Benchmark", "{Accuracy.Benchmark}: item %s: %w", set.Items[i].ID, err)
			return nil
		}
		n := 0
		for _, m := range msgs {
			n += count(m.Content)
		}
		a.raws, a.isl = append(a.raws, j), append(a.isl, n)
		a.byID[set.Items[i].ID] = i
	}
	log.Info("accuracy", slog.String("benchmark", set.Benchmark), slog.Int("items", len(set.Items)), slog.Int("tasks", len(set.Tasks())),
		slog.Int("n_shots", ao.Shots), slog.Bool("cot", ao.CoT), slog.Float64("mix", ao.Mix), slog.Int("max_tokens", set.MaxTokens))
	return a
}

// rows returns the items as the rows of the load (Mix 0).
func (a *accPlan) rows() []trace.Row {
	rows := make([]trace.Row, len(a.raws))
	for i := range rows {
		rows[i] = trace.Row{Index: int64(i), Line: int64(i + 1), InputTokens: a.isl[i], OutputTokens: a.set.MaxTokens,
			ParentID: -1, RequestID: -1, Raw: a.raws[i]}
	}
	return rows
}

// pick returns the item request item carries, if any. It is a pure
// function of the plan's item index (and its row), so the build ahead of
// time and the send agree. With Mix m, request k carries an item when
// ⌊(k+1)·m⌋ > ⌊k·m⌋ — exactly ⌊K·m⌋ of the first K requests, evenly
// spread — and it is item ⌊k·m⌋ mod n, so the items are sent in order,
// each once before any repeats. A row of a session or one that waits for
// others keeps its own content (its history and dependants expect it).
func (a *accPlan) pick(item int, row *trace.Row) (int, bool) {
	if a == nil {
		return 0, false
	}
	n := len(a.raws)
	if a.all {
		return item % n, true
	}
	if row != nil && (row.SessionID != "" || len(row.WaitFor) > 0 || row.Turn > 0) {
		return 0, false
	}
	k := float64(item)
	lo, hi := int(k*a.mix), int((k+1)*a.mix)
	if hi <= lo {
		return 0, false
	}
	return lo % n, true
}

// apply makes row carry item i.
func (a *accPlan) apply(row *trace.Row, i int) {
	row.Raw = a.raws[i]
	row.InputTokens = a.isl[i]
	row.OutputTokens = a.set.MaxTokens
	row.HashIDs, row.BlockSize, row.TemplateTokens = nil, 0, 0
}

// mark makes r the record of a request carrying item i.
func (a *accPlan) mark(r *record.Request, i int) {
	it := &a.set.Items[i]
	r.Graded = true
	r.AccuracyTask, r.AccuracyItem, r.AccuracyExpected = it.Task, it.ID, it.Answer
}

// grade grades a marked record's response. A failed request has no
// answer (graded wrong).
func (a *accPlan) grade(ctx context.Context, r *record.Request, response []byte) {
	i, ok := a.byID[r.AccuracyItem]
	if !ok {
		return
	}
	it := &a.set.Items[i]
	if r.OK() {
		g := accuracy.Grade(it.Grader, string(response), it.Answer)
		r.AccuracyAnswer, r.AccuracyCorrect = g.Answer, g.Correct
	}
	if a.verbose && a.log.Enabled(ctx, slog.LevelInfo) {
		a.log.LogAttrs(ctx, slog.LevelInfo, "graded", slog.String("item", it.ID), slog.String("expected", it.Answer),
			slog.String("answer", r.AccuracyAnswer), slog.Bool("correct", r.AccuracyCorrect), slog.String("response", clipText(string(response), 200)))
	}
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// describe says what is graded, for Start.Graded.
func (a *accPlan) describe() string {
	if a == nil {
		return ""
	}
	d := fmt.Sprintf("%d items of %s", len(a.set.Items), a.set.Benchmark)
	if a.all {
		return d + " as the load"
	}
	return fmt.Sprintf("%s in place of %g of the requests", d, a.mix)
}

// settings are the accuracy settings summary.json records.
func (a *accPlan) settings(o *AccuracyOptions) map[string]any {
	if a == nil {
		return nil
	}
	m := map[string]any{"benchmark": a.set.Benchmark, "items": len(a.set.Items), "n_shots": o.Shots, "cot": o.CoT,
		"max_tokens": a.set.MaxTokens, "mix": o.Mix, "temperature": a.temperature}
	if o.Grader != "" {
		m["grader"] = o.Grader
	}
	if o.SystemPrompt != "" {
		m["system_prompt"] = o.SystemPrompt
	}
	if len(o.Tasks) > 0 {
		m["tasks"] = o.Tasks
	}
	if o.Data != "" {
		m["data"] = o.Data
	} else if o.File != "" {
		m["file"] = o.File
	} else {
		b := accuracy.Benchmarks[a.set.Benchmark]
		m["hub_repo"], m["revision"] = b.Repo, firstNonEmpty(o.Revision, "main")
	}
	return m
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
