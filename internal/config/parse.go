package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse reads the config file data (named path in errors) under schema s
// and returns the flags it sets, in file order, and its warnings. Every
// problem is reported at once (errors.Join of [*Error]s).
func Parse(path string, data []byte, s *Schema) ([]Arg, []Warning, error) {
	p := &parser{path: path, s: s}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, []Warning{{Path: path, Err: errors.New("the file is empty: it sets no flag")}}, nil
		}
		return nil, nil, &Error{Path: path, Line: yamlErrorLine(err), Err: fmt.Errorf("not YAML: %v", yamlErrorText(err))}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, nil, &Error{Path: path, Line: extra.Line, Err: errors.New("a second YAML document (---): a config file holds one")}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, []Warning{{Path: path, Err: errors.New("the file is empty: it sets no flag")}}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, &Error{Path: path, Line: root.Line, Err: errors.New("want a mapping of keys to values at the top")}
	}
	if s.sections == nil {
		p.flat(root)
	} else {
		p.sectioned(root)
	}
	return p.args, p.warnings, errors.Join(p.errs...)
}

// flat maps the top-level keys of a flat file, the command's own flag
// names, to their flags.
func (p *parser) flat(root *yaml.Node) {
	keys, vals := p.pairs(root, "")
	names := mapKeys(p.s.extra)
	for i, k := range keys {
		name := normalize(k.Value)
		if !p.s.extra[name] {
			p.unknown(k, k.Value, k.Value, names)
			continue
		}
		p.value(name, k.Value, vals[i])
	}
}

// sectioned maps the sections of a sectioned file (the schema's, the
// reprise section and, where the schema has one, the sweep section) to
// their flags; a key at the top or in another section than its own is
// reported with where it belongs.
func (p *parser) sectioned(root *yaml.Node) {
	keys, vals := p.pairs(root, "")
	var sections []string
	for name := range p.s.sections {
		sections = append(sections, name)
	}
	sections = append(sections, "reprise")
	if p.s.sweep {
		sections = append(sections, "sweep")
	}
	slices.Sort(sections)
	for i, k := range keys {
		sec := strings.ReplaceAll(strings.ToLower(k.Value), "-", "_")
		v := vals[i]
		switch {
		case sec == "schemaversion" || sec == "benchmark" || sec == "benchmarks":
			p.fail(k, k.Value, errors.New("AIPerf's v2 config (schemaVersion, benchmark, phases) is not read: "+
				"write its settings in the sections endpoint, input, loadgen, output, tokenizer (reprise config init writes a starting file)"))
			continue
		case sec == "sweep" && p.s.sweep:
			p.sweepSection(k, v)
			continue
		case sec == "reprise":
			p.repriseSection(k, v)
			continue
		}
		known, ok := p.s.sections[sec]
		if !ok {
			if flag, where := p.anySection(normalize(k.Value)); where != "" {
				p.fail(k, k.Value, fmt.Errorf("%w at the top: %s (--%s) is a key of the %s section", ErrUnknownKey, k.Value, flag, where))
				continue
			}
			p.unknown(k, k.Value, k.Value, sections)
			continue
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			p.warnings = append(p.warnings, Warning{Path: p.path, Line: k.Line, Key: k.Value, Err: errors.New("an empty section; ignored")})
			continue
		}
		if v.Kind != yaml.MappingNode {
			p.fail(v, k.Value, errors.New("want a mapping of keys to values"))
			continue
		}
		names := mapKeys(known)
		skeys, svals := p.pairs(v, k.Value)
		for j, sk := range skeys {
			dotted := k.Value + "." + sk.Value
			flag, ok := known[normalize(sk.Value)]
			if !ok {
				if _, where := p.anySection(normalize(sk.Value)); where != "" && where != sec {
					p.fail(sk, dotted, fmt.Errorf("%w; %s belongs in the %s section", ErrUnknownKey, sk.Value, where))
					continue
				}
				p.unknown(sk, dotted, sk.Value, names)
				continue
			}
			p.value(flag, dotted, svals[j])
		}
	}
}

// repriseSection maps the reprise section, the command's own flag
// names, to their flags.
func (p *parser) repriseSection(k, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		p.fail(v, k.Value, errors.New("want a mapping of reprise's flag names to values"))
		return
	}
	names := mapKeys(p.s.extra)
	skeys, svals := p.pairs(v, k.Value)
	for j, sk := range skeys {
		dotted := k.Value + "." + sk.Value
		name := normalize(sk.Value)
		if !p.s.extra[name] {
			p.unknown(sk, dotted, sk.Value, names)
			continue
		}
		p.value(name, dotted, svals[j])
	}
}
