package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// cliDoc is the CLI contract that must list every command and flag.
const cliDoc = "../../docs/format/cli.md"

// TestCLIDocumented fails when a command, flag, flag alias or environment
// variable of the binary is missing from docs/format/cli.md. Every command
// has a section headed "`reprise FULL NAME`" (the root: "Global flags")
// that names each of its flags as --name (and -x for a short alias); an
// environment variable that does not follow the documented rule
// (REPRISE_<FLAG>, REPRISE_MOCK_<FLAG>, REPRISE_SYNTH_<FLAG>) is named
// literally in the section "Environment variables".
func TestCLIDocumented(t *testing.T) {
	data, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	envSection := docSection(doc, "Environment variables")
	if envSection == "" {
		t.Fatalf("%s: no section \"Environment variables\"", cliDoc)
	}

	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, abort: context.Background()}
	root := newRoot(a)
	// Running --help completes the tree as the binary has it (the help
	// and completion commands are added when the root is set up).
	if err := root.Run(context.Background(), []string{"reprise", "--help"}); err != nil {
		t.Fatal(err)
	}

	replaySection := docSection(doc, "`reprise replay`")
	var walk func(cmd *cli.Command, top, parent string)
	commands, flags := 0, 0
	walk = func(cmd *cli.Command, top, parent string) {
		if cmd.Name == "help" || cmd.Hidden {
			return
		}
		commands++
		heading := "`" + cmd.FullName() + "`"
		if cmd == root {
			heading = "Global flags"
		}
		section := docSection(doc, heading)
		switch {
		case section != "":
		case !hasFlags(cmd) && regexp.MustCompile(`\b`+regexp.QuoteMeta(cmd.Name)+`\b`).MatchString(parent):
			// A command without flags of its own (completion bash) may
			// be described in its parent's section.
		default:
			t.Errorf("%s: no section headed %s for command %q", cliDoc, heading, cmd.FullName())
		}
		prefix := "REPRISE_"
		switch top {
		case "mock-server":
			prefix = "REPRISE_MOCK_"
		case "synthesize":
			prefix = "REPRISE_SYNTH_"
		}
		for _, f := range cmd.Flags {
			names := f.Names()
			if names[0] == "help" || !visible(f) {
				continue
			}
			flags++
			for _, name := range names {
				if section != "" && !mentionsFlag(section, name) && !(inheritsReplay(section) && mentionsFlag(replaySection, name)) {
					t.Errorf("%s: section %s does not name flag %s of %q", cliDoc, heading, dashes(name), cmd.FullName())
				}
			}
			df, ok := f.(cli.DocGenerationFlag)
			if !ok {
				continue
			}
			want := prefix + strings.ToUpper(strings.ReplaceAll(names[0], "-", "_"))
			for _, env := range df.GetEnvVars() {
				if env != want && !strings.Contains(envSection, "`"+env+"`") {
					t.Errorf("%s: flag %s of %q reads %s, which is not %s and not listed under \"Environment variables\"",
						cliDoc, dashes(names[0]), cmd.FullName(), env, want)
				}
			}
		}
		for _, sub := range cmd.Commands {
			next := top
			if cmd == root {
				next = sub.Name
			}
			walk(sub, next, section)
		}
	}
	walk(root, "", "")
	if commands < 10 || flags < 100 {
		t.Fatalf("walked %d commands and %d flags; the command tree is not the binary's", commands, flags)
	}
}

// hasFlags reports whether cmd has a visible flag other than --help.
func hasFlags(cmd *cli.Command) bool {
	for _, f := range cmd.Flags {
		if f.Names()[0] != "help" && visible(f) {
			return true
		}
	}
	return false
}

func visible(f cli.Flag) bool {
	v, ok := f.(cli.VisibleFlag)
	return !ok || v.IsVisible()
}

// docSection returns the part of the Markdown doc from the heading that
// ends with title to the next heading of the same or a higher level, or ""
// when no heading ends with title. Lines in code blocks are not headings.
func docSection(doc, title string) string {
	lines := strings.Split(doc, "\n")
	levels := make([]int, len(lines)) // heading level of each line, 0 if none
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if !fenced && level > 0 && strings.HasPrefix(line[level:], " ") {
			levels[i] = level
		}
	}
	for i, line := range lines {
		if levels[i] == 0 || !strings.HasSuffix(strings.TrimSpace(line), title) {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if levels[j] > 0 && levels[j] <= levels[i] {
				end = j
				break
			}
		}
		return strings.Join(lines[i:end], "\n")
	}
	return ""
}

// mentionsFlag reports whether text names the flag: --name (or -x for a
// one-letter alias) not followed by more of a flag name.
func mentionsFlag(text, name string) bool {
	re := regexp.MustCompile(`(^|[^-\w])` + regexp.QuoteMeta(dashes(name)) + `([^\w-]|$)`)
	return re.MatchString(text)
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// inheritsReplay reports whether a command's section says that the flags
// of reprise replay apply to it (reprise sweep): a flag named in the
// replay section is then documented for it too.
func inheritsReplay(section string) bool {
	return strings.Contains(section, "Every flag of `reprise replay` not listed here applies")
}
