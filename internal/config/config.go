package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The errors exposed.
var (
	// ErrUnknownKey is wrapped by the [*Error] of a key no schema knows.
	ErrUnknownKey = errors.New("unknown key")
)

// Version is the version of the config file format
// (docs/format/config.md).
const Version = "1.0"

// Arg is one flag that a file sets: Path is the file, Flag is the flag's name as the
// command takes it, without dashes; Value is its value as the command
// line would spell it ("true" or "false" for a switch). Key is the dotted
// key that set it (loadgen.concurrency) and Line its line in the file.
type Arg struct {
	Path  string
	Flag  string
	Value string
	Key   string
	Line  int
}

// Error is a problem at one key of a config file: Path:Line: Key: Err.
type Error struct {
	Path string
	Line int
	Key  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Warning is a remark on a file that does not stop it from being used (a
// key with no value, which is ignored).
type Warning = Error

// Schema says which keys a file may have and how their values become
// flags. Build one with [AIPerf] or [Flat]; the zero value knows no key.
type Schema struct {
	// sections maps a section name to its keys (dashed spelling) and the
	// flag each sets; nil for a flat schema.
	sections map[string]map[string]string
	// extra are the command's own flag names: the keys of a flat file, or
	// of the reprise section of a sectioned one.
	extra map[string]bool
	// repeatable flags take one value per list item; other flags take a
	// list as one comma-separated value (a sweep's list).
	repeatable map[string]bool
	// sweep: the file may have a sweep section.
	sweep bool
}

// Flat is the schema of a file whose top-level keys are the command's own
// flag names (replay, sweep). names are every name and alias the command
// takes; repeatable those of its flags that are given once per value.
func Flat(names, repeatable []string) *Schema {
	s := &Schema{extra: map[string]bool{}, repeatable: map[string]bool{}}
	for _, n := range names {
		s.extra[n] = true
	}
	for _, n := range repeatable {
		s.repeatable[n] = true
	}
	return s
}

// parser maps the YAML nodes of one file to Args, collecting its
// warnings and errors.
type parser struct {
	path     string
	s        *Schema
	args     []Arg
	warnings []Warning
	errs     []error
}

func (p *parser) fail(n *yaml.Node, key string, err error) {
	p.errs = append(p.errs, &Error{Path: p.path, Line: n.Line, Key: key, Err: err})
}

// pairs returns a mapping node's keys and values; a non-scalar key is an
// error.
func (p *parser) pairs(m *yaml.Node, at string) (keys []*yaml.Node, vals []*yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.fail(k, at, errors.New("a key must be a plain name"))
			continue
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals
}

// anySection returns the flag a key sets and the section it belongs to,
// or "" when no section knows it.
func (p *parser) anySection(key string) (flag, section string) {
	for _, name := range mapKeys(p.s.sections) {
		if f, ok := p.s.sections[name][key]; ok {
			return f, name
		}
	}
	return "", ""
}

// unknown reports an unknown key with the nearest of names, spelled as
// the key was (underscores for underscores).
func (p *parser) unknown(n *yaml.Node, dotted, key string, names []string) {
	got := normalize(key)
	best := Closest(got, names)
	if best == "" {
		p.fail(n, dotted, ErrUnknownKey)
		return
	}
	if strings.Contains(key, "_") {
		best = strings.ReplaceAll(best, "-", "_")
	}
	p.fail(n, dotted, fmt.Errorf("%w; did you mean %s?", ErrUnknownKey, best))
}

// value turns a key's value into the flag's Args.
func (p *parser) value(flag, key string, v *yaml.Node) {
	add := func(val string) {
		p.args = append(p.args, Arg{Path: p.path, Flag: flag, Value: val, Key: key, Line: v.Line})
	}
	switch v.Kind {
	case yaml.AliasNode:
		p.value(flag, key, v.Alias)
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			p.warnings = append(p.warnings, Warning{Path: p.path, Line: v.Line, Key: key, Err: errors.New("no value; ignored")})
			return
		}
		add(v.Value)
	case yaml.SequenceNode:
		var items []string
		for _, it := range v.Content {
			if it.Kind == yaml.AliasNode {
				it = it.Alias
			}
			if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
				p.fail(it, key, errors.New("want a list of plain values"))
				return
			}
			items = append(items, it.Value)
		}
		if len(items) == 0 {
			p.warnings = append(p.warnings, Warning{Path: p.path, Line: v.Line, Key: key, Err: errors.New("an empty list; ignored")})
			return
		}
		if p.s.repeatable[flag] {
			for _, it := range items {
				add(it)
			}
			return
		}
		for _, it := range items {
			if strings.Contains(it, ",") {
				p.fail(v, key, fmt.Errorf("list item %q holds a comma: the list is given as one comma-separated value", it))
				return
			}
		}
		add(strings.Join(items, ","))
	case yaml.MappingNode:
		p.mapping(flag, key, v, add)
	default:
		p.fail(v, key, errors.New("want a value, a list or a mapping"))
	}
}

// mapping turns a mapping value into its flag's values: a JSON object for
// the body flags, "K:V" pairs for the others (one value each for a
// repeatable flag, space-joined for --goodput), "K=V" for
// --dataset-filter.
func (p *parser) mapping(flag, key string, v *yaml.Node, add func(string)) {
	switch flag {
	case "extra-inputs", "extra-body":
		var obj map[string]any
		if err := v.Decode(&obj); err != nil {
			p.fail(v, key, fmt.Errorf("want a mapping of body fields: %v", yamlErrorText(err)))
			return
		}
		b, err := json.Marshal(jsonable(obj))
		if err != nil {
			p.fail(v, key, fmt.Errorf("cannot be sent as JSON: %v", err))
			return
		}
		add(string(b))
		return
	}
	keys, vals := p.pairs(v, key)
	var pairs []string
	for i, k := range keys {
		val := vals[i]
		if val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
			p.fail(val, key+"."+k.Value, errors.New("want a plain value"))
			return
		}
		sep := ":"
		if flag == "dataset-filter" {
			sep = "="
		}
		pairs = append(pairs, k.Value+sep+val.Value)
	}
	switch {
	case flag == "goodput":
		add(strings.Join(pairs, " "))
	case p.s.repeatable[flag]:
		for _, pr := range pairs {
			add(pr)
		}
	default:
		p.fail(v, key, errors.New("want a value or a list, not a mapping"))
	}
}

// jsonable converts what yaml decodes into values encoding/json takes
// (maps with non-string keys become maps with string keys).
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}

// normalize is a key's dashed, lower-case spelling.
func normalize(key string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimLeft(strings.TrimSpace(key), "-")), "_", "-")
}

// mapKeys returns m's keys, sorted.
func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// yamlErrorLine returns the line a yaml error names ("yaml: line 3: …"),
// or 0.
func yamlErrorLine(err error) int {
	var line int
	if _, e := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); e == nil {
		return line
	}
	return 0
}

// yamlErrorText is a yaml error without its "yaml: line N:" prefix.
func yamlErrorText(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(s, ": "); strings.HasPrefix(s, "line ") && i > 0 {
		s = s[i+2:]
	}
	return s
}

// Closest returns the name in names that got was most likely a typo of:
// within an edit distance of a third of its length (of equal distances,
// the nearest in length), or the only name that got (3 characters or
// more) begins. "" when none is.
func Closest(got string, names []string) string {
	n := utf8.RuneCountInString(got)
	best, bestD, bestL := "", n/3+1, 0
	var prefixed []string
	for _, name := range names {
		d := editDistance(got, name)
		l := max(utf8.RuneCountInString(name)-n, n-utf8.RuneCountInString(name))
		if d < bestD || d == bestD && best != "" && l < bestL {
			best, bestD, bestL = name, d, l
		}
		if len(got) >= 3 && strings.HasPrefix(name, got) {
			prefixed = append(prefixed, name)
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b in
// runes (a swap of neighbours is one edit).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
