package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/flagmap"
)

// catAccuracy is the help category of the accuracy flags.
const catAccuracy = "Accuracy (graded benchmarks)"

// accuracyFlags are the flags of reprise.AccuracyOptions, in replay and
// profile alike. AIPerf's spellings (--accuracy-n-shots,
// --accuracy-enable-cot) are aliases.
func accuracyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "accuracy-benchmark", Category: catAccuracy, Sources: envVars("accuracy-benchmark"),
			Usage: "grade the answers to benchmark `NAME`: mmlu, gsm8k or aime (docs/format/accuracy.md)"},
		&cli.StringFlag{Name: "accuracy-data", Category: catAccuracy, Sources: envVars("accuracy-data"),
			Usage: "the benchmark's local data: a `DIR` laid out as its Hugging Face repository (or MMLU's CSV dev/ and test/), or a file of the test split; default: download it from the Hub"},
		&cli.StringFlag{Name: "accuracy-revision", Category: catAccuracy, Sources: envVars("accuracy-revision"), DefaultText: "main",
			Usage: "the Hub `REVISION` (a commit pins it) of a downloaded benchmark"},
		&cli.StringFlag{Name: "accuracy-file", Category: catAccuracy, Sources: envVars("accuracy-file"),
			Usage: "grade your own items: a JSON Lines `FILE` of {\"prompt\" or \"messages\", \"answer\", \"grader\", \"task\", \"id\"}"},
		&cli.StringSliceFlag{Name: "accuracy-tasks", Category: catAccuracy, Sources: envVars("accuracy-tasks"),
			Usage: "grade only these `TASK`s (MMLU subjects; an items file's task)"},
		&cli.IntFlag{Name: "accuracy-shots", Aliases: []string{"accuracy-n-shots"}, Category: catAccuracy, Sources: envVars("accuracy-shots"),
			Usage: "`N` examples (0–32) from the dev split before each question"},
		&cli.BoolFlag{Name: "accuracy-cot", Aliases: []string{"accuracy-enable-cot"}, Category: catAccuracy, Sources: envVars("accuracy-cot"),
			Usage: "ask for step-by-step reasoning before the answer (graded on the final answer)"},
		&cli.StringFlag{Name: "accuracy-grader", Category: catAccuracy, Sources: envVars("accuracy-grader"),
			Usage: "override the benchmark's `GRADER`: multiple_choice, number, math or exact_match"},
		&cli.StringFlag{Name: "accuracy-system-prompt", Category: catAccuracy, Sources: envVars("accuracy-system-prompt"),
			Usage: "send `TEXT` as a system message before each graded prompt"},
		&cli.BoolFlag{Name: "accuracy-verbose", Category: catAccuracy, Sources: envVars("accuracy-verbose"),
			Usage: "log every graded answer (item, expected, extracted, the response's start)"},
		&cli.FloatFlag{Name: "accuracy-mix", Category: catAccuracy, Sources: envVars("accuracy-mix"),
			Usage: "replace `FRACTION` of the trace's (or synthetic load's) requests by graded items, sent at their times; 0: the items alone are the load"},
		&cli.IntFlag{Name: "accuracy-max-tokens", Category: catAccuracy, Sources: envVars("accuracy-max-tokens"), DefaultText: "the benchmark's",
			Usage: "output budget of a graded request in `TOKENS` (docs/format/accuracy.md)"},
		&cli.IntFlag{Name: "accuracy-limit", Category: catAccuracy, Sources: envVars("accuracy-limit"), DefaultText: "all",
			Usage: "grade the first `N` items only"},
		&cli.FloatFlag{Name: "accuracy-temperature", Category: catAccuracy, Sources: envVars("accuracy-temperature"), DefaultText: "0, or --extra-body's",
			Usage: "sampling `T` of graded requests"},
	}
}

// accuracyOptions copies the accuracy flags into o.
func accuracyOptions(cmd *cli.Command, o *reprise.Options) {
	o.Accuracy = reprise.AccuracyOptions{Benchmark: cmd.String("accuracy-benchmark"), Data: cmd.String("accuracy-data"),
		Revision: cmd.String("accuracy-revision"), File: cmd.String("accuracy-file"), Tasks: flagmap.CommaList(cmd.StringSlice("accuracy-tasks")),
		Shots: cmd.Int("accuracy-shots"), CoT: cmd.Bool("accuracy-cot"), Grader: cmd.String("accuracy-grader"),
		SystemPrompt: cmd.String("accuracy-system-prompt"), Verbose: cmd.Bool("accuracy-verbose"), Mix: cmd.Float("accuracy-mix"),
		MaxTokens: cmd.Int("accuracy-max-tokens"), Limit: cmd.Int("accuracy-limit")}
	if cmd.IsSet("accuracy-temperature") {
		t := cmd.Float("accuracy-temperature")
		o.Accuracy.Temperature = &t
	}
}
