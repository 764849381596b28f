package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// sweepable are the profile flags that take a comma list, which makes the
// run a sweep (the keys of a sweep section's lists and dimensions).
var sweepable = []string{
	"concurrency", "request-rate", "isl", "isl-stddev", "osl", "osl-stddev", "conversation-turn-mean",
}

// sweepKeys are the sweep section's own keys (dashed).
var sweepKeys = []string{"type", "variants", "scenarios", "sampling", "samples", "dimensions", "sweep-list", "sweep-range"}

// sweepTypes are the values of a sweep section's type: AIPerf's, then
// GenAI-Perf's settings swept by sweep_list or sweep_range.
var sweepTypes = []string{"grid", "zip", "concurrency", "request_rate", "input_sequence_length", "batch_size", "num_dataset_entries"}

// searchFlags are the profile flags of recipes and model-based searches,
// which a sweep section takes by their names (search_space,
// optuna_sampler, ttft_sla_ms, …) and searchAliases by the names of
// AIPerf's adaptive-search block.
var searchFlags = []string{
	"search-recipe", "ttft-sla-ms", "itl-sla-ms", "e2e-sla-ms", "error-rate-sla", "slo-attainment-fraction", "degradation-threshold",
	"concurrency-min", "concurrency-max", "concurrency-steps", "isl-min", "isl-max", "isl-steps", "osl-min", "osl-max", "osl-steps",
	"isl-osl-pairs", "search-space", "search-metric", "search-stat", "search-direction", "search-sla", "search-max-iterations",
	"search-initial-points", "search-random-seed", "search-planner", "optuna-sampler", "optuna-acquisition", "optuna-terminator",
	"search-percentile-pooling", "bo-constraint-mode", "search-style", "tpot-sla-ms", "search-sla-tier",
}

var searchAliases = map[string]string{
	"planner": "search-planner", "constraint-mode": "bo-constraint-mode", "n-initial-points": "search-initial-points",
	"max-iterations": "search-max-iterations", "recipe": "search-recipe",
}

// searchFlag returns the search flag a sweep key names, or "" (also
// when the command has no such flag).
func (p *parser) searchFlag(key string) string {
	k := normalize(key)
	if f, ok := searchAliases[k]; ok {
		k = f
	}
	if slices.Contains(searchFlags, k) && p.s.extra[k] {
		return k
	}
	return ""
}

// sweepFlag returns the sweepable flag a key names (any spelling the
// input and loadgen sections take), or "".
func (p *parser) sweepFlag(key string) string {
	k := normalize(key)
	for _, sec := range []string{"loadgen", "input"} {
		if f, ok := p.s.sections[sec][k]; ok && slices.Contains(sweepable, f) {
			return f
		}
	}
	return ""
}

// sweepSection maps the sweep section onto profile's sweep flags:
//
//	type: grid|zip              --sweep-type
//	type: concurrency, sweep_list: [1, 2, 4] (or sweep_range: "1:64")
//	                            GenAI-Perf's --sweep-type, --sweep-list, --sweep-range
//	concurrency: [10, 50]       --concurrency 10,50 (any sweepable flag)
//	variants: (or scenarios)    --variant 'name: key=value, …' per item
//	sampling: sobol|latin_hypercube, samples: N
//	                            --sweep-sampling, --sweep-samples
//	dimensions: {FLAG: [LO, HI]} or {FLAG: {low, high, type}}
//	                            --sweep-dimension 'FLAG:LO,HI[:TYPE]' per key
//	search_space: [concurrency:1,64], optuna_sampler: gp, …
//	                            the search and recipe flags (searchFlags)
func (p *parser) sweepSection(k, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		p.fail(v, k.Value, errors.New("want a mapping: type, the swept flags' lists, variants, sampling, samples, dimensions"))
		return
	}
	var names []string
	names = append(names, sweepKeys...)
	names = append(names, sweepable...)
	names = append(names, searchFlags...)
	keys, vals := p.pairs(v, k.Value)
	for i, sk := range keys {
		dotted := k.Value + "." + sk.Value
		val := vals[i]
		switch normalize(sk.Value) {
		case "type":
			if val.Kind != yaml.ScalarNode || !slices.Contains(sweepTypes, val.Value) {
				p.fail(val, dotted, errors.New("want grid or zip (or GenAI-Perf's setting with sweep_list or sweep_range: "+strings.Join(sweepTypes[2:], ", ")+")"))
				continue
			}
			p.value("sweep-type", dotted, val)
		case "sweep-list", "sweep-range":
			p.value(normalize(sk.Value), dotted, val)
		case "sampling":
			if val.Kind != yaml.ScalarNode || val.Value != "sobol" && val.Value != "latin_hypercube" {
				p.fail(val, dotted, errors.New("want sobol or latin_hypercube"))
				continue
			}
			p.value("sweep-sampling", dotted, val)
		case "samples":
			if val.Kind != yaml.ScalarNode || val.Tag != "!!int" {
				p.fail(val, dotted, errors.New("want a whole number of samples"))
				continue
			}
			p.value("sweep-samples", dotted, val)
		case "variants", "scenarios":
			p.variants(dotted, val)
		case "dimensions":
			p.dimensions(dotted, val)
		default:
			if flag := p.searchFlag(sk.Value); flag != "" {
				p.value(flag, dotted, val)
				continue
			}
			flag := p.sweepFlag(sk.Value)
			if flag == "" {
				p.unknown(sk, dotted, sk.Value, names)
				continue
			}
			if val.Kind != yaml.SequenceNode {
				p.fail(val, dotted, errors.New("want a list of the values to sweep"))
				continue
			}
			p.value(flag, dotted, val)
		}
	}
}

// variants maps a list of variants, each a mapping of flag names to
// values with an optional name, to --variant values.
func (p *parser) variants(key string, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		p.fail(v, key, errors.New("want a list of variants, each a mapping of flags to values (name: optional)"))
		return
	}
	for i, item := range v.Content {
		at := fmt.Sprintf("%s[%d]", key, i)
		if item.Kind != yaml.MappingNode {
			p.fail(item, at, errors.New("want a mapping of flags to values"))
			continue
		}
		var name string
		var parts []string
		keys, vals := p.pairs(item, at)
		for j, ik := range keys {
			val := vals[j]
			if val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
				p.fail(val, at+"."+ik.Value, errors.New("want a plain value"))
				continue
			}
			if normalize(ik.Value) == "name" {
				name = val.Value
				continue
			}
			flag, ok := p.anyFlag(ik.Value)
			if !ok {
				p.unknown(ik, at+"."+ik.Value, ik.Value, p.allKeys())
				continue
			}
			if strings.ContainsAny(val.Value, ",=") {
				p.fail(val, at+"."+ik.Value, fmt.Errorf("value %q holds a comma or '=': a variant's values are plain", val.Value))
				continue
			}
			parts = append(parts, flag+"="+val.Value)
		}
		if len(parts) == 0 {
			p.fail(item, at, errors.New("a variant sets no flag"))
			continue
		}
		s := strings.Join(parts, ", ")
		if name != "" {
			if strings.ContainsAny(name, ":,=") {
				p.fail(item, at+".name", fmt.Errorf("name %q holds ':', ',' or '='", name))
				continue
			}
			s = name + ": " + s
		}
		p.args = append(p.args, Arg{Path: p.path, Flag: "variant", Value: s, Key: at, Line: item.Line})
	}
}

// dimensions maps the sampling dimensions to --sweep-dimension values.
func (p *parser) dimensions(key string, v *yaml.Node) {
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		p.fail(v, key, errors.New("want a mapping of swept flags to [LOW, HIGH] or {low, high, type}"))
		return
	}
	keys, vals := p.pairs(v, key)
	for i, dk := range keys {
		at := key + "." + dk.Value
		flag := p.sweepFlag(dk.Value)
		if flag == "" {
			p.unknown(dk, at, dk.Value, sweepable)
			continue
		}
		val := vals[i]
		var lo, hi, typ *yaml.Node
		switch val.Kind {
		case yaml.SequenceNode:
			if len(val.Content) != 2 && len(val.Content) != 3 {
				p.fail(val, at, errors.New("want [LOW, HIGH] or [LOW, HIGH, int|float]"))
				continue
			}
			lo, hi = val.Content[0], val.Content[1]
			if len(val.Content) == 3 {
				typ = val.Content[2]
			}
		case yaml.MappingNode:
			mk, mv := p.pairs(val, at)
			for j, m := range mk {
				switch normalize(m.Value) {
				case "low", "lo", "min":
					lo = mv[j]
				case "high", "hi", "max":
					hi = mv[j]
				case "type":
					typ = mv[j]
				default:
					p.unknown(m, at+"."+m.Value, m.Value, []string{"low", "high", "type"})
				}
			}
		default:
			p.fail(val, at, errors.New("want [LOW, HIGH] or {low, high, type}"))
			continue
		}
		if lo == nil || hi == nil || !number(lo) || !number(hi) {
			p.fail(val, at, errors.New("want numbers for low and high"))
			continue
		}
		s := flag + ":" + lo.Value + "," + hi.Value
		if typ != nil {
			if typ.Kind != yaml.ScalarNode || typ.Value != "int" && typ.Value != "float" {
				p.fail(typ, at+".type", errors.New("want int or float"))
				continue
			}
			s += ":" + typ.Value
		}
		p.args = append(p.args, Arg{Path: p.path, Flag: "sweep-dimension", Value: s, Key: at, Line: val.Line})
	}
}

// number reports whether a node is a plain integer or float.
func number(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float")
}

// anyFlag returns the flag a key of any section (or a reprise flag) names.
func (p *parser) anyFlag(key string) (string, bool) {
	k := normalize(key)
	if f, sec := p.anySection(k); sec != "" {
		return f, true
	}
	if p.s.extra[k] {
		return k, true
	}
	return "", false
}

// allKeys are every key of every section and reprise's flag names.
func (p *parser) allKeys() []string {
	var out []string
	for _, keys := range p.s.sections {
		out = append(out, mapKeys(keys)...)
	}
	out = append(out, mapKeys(p.s.extra)...)
	slices.Sort(out)
	return slices.Compact(out)
}
