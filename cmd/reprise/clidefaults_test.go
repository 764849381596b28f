package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"
)

// defaultStatement matches a default stated in a flag's help line: the
// "(default: X)" that the help appends, or one written in the usage text
// ("(default 1, or …)", "the format's default: 512", "; default 30").
var defaultStatement = regexp.MustCompile(`\(default\b|\bdefault:|; default\b`)

// TestCLIHelpDefaults fails when a flag's line in some command's --help
// states its default twice (the usage text's own and the one the help
// appends), when a flag that is on by default shows no default, or when
// docs/format/cli.md gives a flag a default value (`X`, a number, on, off)
// that its --help line does not show or that is not the flag's.
func TestCLIHelpDefaults(t *testing.T) {
	data, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, abort: context.Background()}
	root := newRoot(a)
	if err := root.Run(context.Background(), []string{"reprise", "--help"}); err != nil {
		t.Fatal(err)
	}
	replayDefaults := docDefaults(docSection(doc, "`reprise replay`"))
	var walk func(cmd *cli.Command)
	checked := 0
	walk = func(cmd *cli.Command) {
		if cmd.Name == "help" || cmd.Hidden {
			return
		}
		heading := "`" + cmd.FullName() + "`"
		if cmd == root {
			heading = "Global flags"
		}
		section := docSection(doc, heading)
		defaults := docDefaults(ownSection(section))
		for _, f := range cmd.Flags {
			names := f.Names()
			if names[0] == "help" || !visible(f) {
				continue
			}
			checked++
			line := helpLine(f)
			where := cmd.FullName() + " --help: " + dashes(names[0])
			if n := len(defaultStatement.FindAllString(line, -1)); n > 1 {
				t.Errorf("%s states %d defaults in %q: state it once (DefaultText, or the usage text with HideDefault)", where, n, line)
			}
			if b, ok := f.(*cli.BoolFlag); ok && b.Value && !defaultStatement.MatchString(line) {
				t.Errorf("%s is on by default but its help line %q does not say so: set DefaultText", where, line)
			}
			cell, ok := defaults[names[0]]
			if !ok && inheritsReplay(section) {
				cell, ok = replayDefaults[names[0]]
			}
			want, isLit := literal(cell)
			if !ok || !isLit {
				continue // not in a table with a default, or a default in words ("the format's")
			}
			if b, isBool := f.(*cli.BoolFlag); isBool {
				if strconv.FormatBool(b.Value) != want {
					t.Errorf("%s: %s gives the default %s, the flag's is %v: fix the flag's Value or the table", where, cliDoc, cell, b.Value)
				}
				continue
			}
			df, _ := f.(cli.DocGenerationFlag)
			if !defaultStatement.MatchString(line) {
				t.Errorf("%s: %s gives the default %s, but the help line %q shows none: set the flag's Value or DefaultText", where, cliDoc, cell, line)
			} else if df != nil && df.IsDefaultVisible() && df.GetDefaultText() == "" && df.GetValue() != "" && !sameDefault(want, unquote(df.GetValue())) {
				// The help shows the flag's value: it must be the documented one.
				t.Errorf("%s: %s gives the default %s, the flag's is %s: fix the flag's Value or the table", where, cliDoc, cell, df.GetValue())
			}
		}
		for _, sub := range cmd.Commands {
			walk(sub)
		}
	}
	walk(root)
	if checked < 100 {
		t.Fatalf("checked %d flags; the command tree is not the binary's", checked)
	}
}

// helpLine is the flag's line as --help prints it, without its
// environment variables.
func helpLine(f cli.Flag) string {
	s := f.(interface{ String() string }).String()
	if i := strings.Index(s, " [$"); i >= 0 {
		s = s[:i]
	}
	return s
}

// unquote returns v without the quotes that the help puts around a
// string default.
func unquote(v string) string {
	if u, err := strconv.Unquote(v); err == nil {
		return u
	}
	return v
}

// sameDefault reports whether the documented default want is the flag's
// value got, as a string, a duration or a number.
func sameDefault(want, got string) bool {
	if want == got {
		return true
	}
	if a, err := time.ParseDuration(want); err == nil {
		b, err := time.ParseDuration(got)
		return err == nil && a == b
	}
	if a, err := strconv.ParseFloat(want, 64); err == nil {
		b, err := strconv.ParseFloat(got, 64)
		return err == nil && a == b
	}
	return false
}

// literal returns the value of a default cell that is one value: `X`, a
// number, on (true) or off (false).
func literal(cell string) (string, bool) {
	switch cell {
	case "on":
		return "true", true
	case "off":
		return "false", true
	}
	if m := backticked.FindStringSubmatch(cell); m != nil && !strings.ContainsAny(m[1], "<$") && !strings.HasPrefix(m[1], "--") {
		return m[1], true
	}
	if _, err := strconv.ParseFloat(cell, 64); err == nil {
		return cell, true
	}
	return "", false
}

// ownSection is a command's section without the sections of its
// subcommands ("### `reprise adapters test`").
func ownSection(section string) string {
	if i := regexp.MustCompile("(?m)^#+ `reprise ").FindAllStringIndex(section, 2); len(i) == 2 {
		return section[:i[1][0]]
	}
	return section
}

var (
	backticked = regexp.MustCompile("^`([^`]*)`$")
	tableRule  = regexp.MustCompile(`^\|[\s:|-]+$`)
	flagName   = regexp.MustCompile("`(--[a-z0-9][a-z0-9-]*)")
)

// docDefaults reads the tables of a cli.md section that have a "flag" and
// a "default" column, and returns the default cell of each flag named in
// a row's flag cell (without its dashes). A row of several flags whose
// default cell lists as many values gives each its own; an empty cell,
// none, required or (required) claims no default and is kept as "".
func docDefaults(section string) map[string]string {
	defaults := map[string]string{}
	lines := strings.Split(section, "\n")
	flagCol, defCol := -1, -1
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			flagCol, defCol = -1, -1
			continue
		}
		cells := splitRow(line)
		if i+1 < len(lines) && tableRule.MatchString(lines[i+1]) {
			flagCol, defCol = -1, -1
			for j, c := range cells {
				switch c {
				case "flag":
					flagCol = j
				case "default":
					defCol = j
				}
			}
			continue
		}
		if flagCol < 0 || defCol < 0 || flagCol >= len(cells) || defCol >= len(cells) {
			continue
		}
		var names []string
		for _, m := range flagName.FindAllStringSubmatch(cells[flagCol], -1) {
			names = append(names, strings.TrimPrefix(m[1], "--"))
		}
		def := cells[defCol]
		switch def {
		case "none", "required", "(required)":
			def = "" // documented here, without a default
		}
		parts := strings.Split(def, ", ")
		for k, name := range names {
			if len(names) > 1 && len(parts) == len(names) {
				defaults[name] = parts[k]
			} else {
				defaults[name] = def
			}
		}
	}
	return defaults
}

// splitRow returns the trimmed cells of a Markdown table row, with \| as
// a literal bar.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var cells []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}

// TestCLIEnvTable fails when the table of docs/format/cli.md's
// "Environment variables" does not name a command whose flags read
// variables in exactly one row, or names it in the row of another prefix
// than the one its flags read.
func TestCLIEnvTable(t *testing.T) {
	data, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	env := docSection(string(data), "Environment variables")
	// rows: the variable pattern (REPRISE_MOCK_<FLAG>) of each row that has
	// one, with the commands its first cell names.
	type row struct{ prefix, commands string }
	var rows []row
	for _, line := range strings.Split(env, "\n") {
		cells := splitRow(line)
		if !strings.HasPrefix(line, "|") || len(cells) < 2 {
			continue
		}
		if m := regexp.MustCompile("^`(REPRISE_(?:[A-Z]+_)?)<FLAG>`$").FindStringSubmatch(cells[1]); m != nil {
			rows = append(rows, row{m[1], cells[0]})
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no row of the form | COMMANDS | `REPRISE_<FLAG>` | under \"Environment variables\"", cliDoc)
	}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, abort: context.Background()}
	root := newRoot(a)
	if err := root.Run(context.Background(), []string{"reprise", "--help"}); err != nil {
		t.Fatal(err)
	}
	var walk func(cmd *cli.Command)
	walk = func(cmd *cli.Command) {
		for _, sub := range cmd.Commands {
			if sub.Hidden {
				continue
			}
			name := strings.TrimPrefix(sub.FullName(), root.Name+" ")
			if prefix, ok := envPrefix(sub, env); ok {
				var named []string
				for _, r := range rows {
					if regexp.MustCompile("`" + regexp.QuoteMeta(name) + "`").MatchString(r.commands) {
						named = append(named, r.prefix)
					}
				}
				switch {
				case len(named) != 1:
					t.Errorf("%s: %q reads %s<FLAG>, and the table under \"Environment variables\" names it in %d rows (%v): name it in one",
						cliDoc, name, prefix, len(named), named)
				case named[0] != prefix:
					t.Errorf("%s: %q reads %s<FLAG>, and the table under \"Environment variables\" gives it %s<FLAG>", cliDoc, name, prefix, named[0])
				}
			}
			walk(sub)
		}
	}
	walk(root)
}

// envPrefix returns the prefix of the variables that most of cmd's flags
// read by the rule (the variable of --block-size is PREFIX + BLOCK_SIZE),
// if any does; a variable that section names literally is an exception
// and not counted.
func envPrefix(cmd *cli.Command, section string) (string, bool) {
	count := map[string]int{}
	best := ""
	for _, f := range cmd.Flags {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		suffix := "_" + strings.ToUpper(strings.ReplaceAll(f.Names()[0], "-", "_"))
		for _, env := range df.GetEnvVars() {
			if strings.Contains(section, "`"+env+"`") {
				continue
			}
			if p, ok := strings.CutSuffix(env, suffix); ok && strings.HasPrefix(p+"_", "REPRISE_") {
				p += "_"
				count[p]++
				if count[p] > count[best] {
					best = p
				}
			}
		}
	}
	return best, best != ""
}
