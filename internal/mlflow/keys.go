package mlflow

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Metric is one metric of a run, logged at step 0.
type Metric struct {
	Key   string
	Value float64
}

// Param is one parameter of a run.
type Param struct{ Key, Value string }

// Key returns k with every character MLflow refuses in a metric or
// parameter name (anything but letters, digits, _ - . space and /)
// replaced by _.
func Key(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_-. /", r):
			return r
		}
		return '_'
	}, k)
}

// SummaryMetrics returns the metrics of a summary.json (js): each
// statistic of a distribution as TAG_STAT (time_to_first_token_p99),
// each scalar (an object with only an avg) as TAG, in the order of the
// tags, then the statistics'. Non-finite values, units, an empty tag and every
// key that holds no statistics are left out.
func SummaryMetrics(js []byte) ([]Metric, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		return nil, err
	}
	var out []Metric
	for _, tag := range sortedKeys(top) {
		raw := top[tag]
		if tag == "" || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			continue
		}
		var stats map[string]any
		if json.Unmarshal(raw, &stats) != nil {
			continue
		}
		if _, ok := stats["unit"]; !ok {
			continue
		}
		nums := map[string]float64{}
		for k, v := range stats {
			if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
				nums[k] = f
			}
		}
		if v, ok := nums["avg"]; ok && len(nums) == 1 {
			out = append(out, Metric{Key: tag, Value: v})
			continue
		}
		for _, k := range sortedKeys(nums) {
			out = append(out, Metric{Key: tag + "_" + k, Value: nums[k]})
		}
	}
	return out, nil
}

// Params returns the scalar leaves of a JSON object (a manifest.json) as
// parameters, nested keys joined with dots (host.os), arrays and empty
// objects as their JSON, in key order.
func Params(js []byte) ([]Param, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var out []Param
	flatten("", v, &out)
	return out, nil
}

func flatten(prefix string, v any, out *[]Param) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && prefix != "" {
			*out = append(*out, Param{prefix, "{}"})
		}
		for _, k := range sortedKeys(x) {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x[k], out)
		}
	case []any:
		b, _ := json.Marshal(x)
		*out = append(*out, Param{prefix, string(b)})
	case string:
		*out = append(*out, Param{prefix, x})
	case json.Number:
		*out = append(*out, Param{prefix, x.String()})
	case bool:
		*out = append(*out, Param{prefix, strconv.FormatBool(x)})
	case nil:
		*out = append(*out, Param{prefix, "null"})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// truncate cuts s to at most n bytes, on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
