package flagmap

import (
	"fmt"
	"strconv"
	"strings"
)

// genaiSweepTypes maps GenAI-Perf analyze's --sweep-type names to the
// profile flag whose comma list is the same sweep ("" for the two reprise
// cannot sweep, with their sentence in genaiUnswept).
var genaiSweepTypes = map[string]string{
	"concurrency": "concurrency", "request_rate": "request-rate", "input_sequence_length": "isl",
	"batch_size": "", "num_dataset_entries": "",
}

var genaiUnswept = map[string]string{
	"batch_size":          "the batch size is no sweep setting here: run one profile per --batch-size",
	"num_dataset_entries": "the dataset size is no sweep setting here: run one profile per --num-dataset-entries",
}

// genaiSweep reads GenAI-Perf analyze's sweep (--sweep-type NAME with
// --sweep-list A,B,… or --sweep-range MIN:MAX[:STEP]; NAME concurrency by
// default, as in GenAI-Perf) as the comma list of the profile flag it
// sweeps: flag is "" without one. A range's values are MIN, MIN+STEP, …
// up to MAX; a concurrency range without STEP is the powers of 2 from MIN
// to MAX (both powers of 2), as GenAI-Perf's.
func genaiSweep(v Values) (flag, list string, err error) {
	typ := v.String("sweep-type")
	_, genai := genaiSweepTypes[typ]
	given := v.IsSet("sweep-list") || v.IsSet("sweep-range")
	switch {
	case !given && !genai:
		return "", "", nil
	case !given:
		return "", "", fmt.Errorf("--sweep-type %s (GenAI-Perf's) needs --sweep-list A,B,… or --sweep-range MIN:MAX[:STEP]", typ)
	case v.IsSet("sweep-list") && v.IsSet("sweep-range"):
		return "", "", fmt.Errorf("--sweep-list and --sweep-range are two forms of one sweep: give one")
	case !v.IsSet("sweep-type"):
		typ = "concurrency" // GenAI-Perf's default
	case !genai:
		return "", "", fmt.Errorf("--sweep-type %q with --sweep-list or --sweep-range: want GenAI-Perf's concurrency, request_rate, input_sequence_length, batch_size or num_dataset_entries", typ)
	}
	if why := genaiUnswept[typ]; why != "" {
		return "", "", fmt.Errorf("GenAI-Perf's --sweep-type %s is not supported: %s", typ, why)
	}
	flag = genaiSweepTypes[typ]
	if spec := strings.TrimSpace(v.String(flag)); strings.Contains(spec, ",") {
		return "", "", fmt.Errorf("--sweep-type %s sweeps --%s, which has its own list %q: give one of them", typ, flag, spec)
	}
	if v.IsSet("sweep-list") {
		return flag, v.String("sweep-list"), nil
	}
	list, err = genaiRange(typ, v.String("sweep-range"))
	return flag, list, err
}

// genaiMaxValues bounds a range's values (a sweep axis takes 1000).
const genaiMaxValues = 1000

// genaiRange expands GenAI-Perf's MIN:MAX[:STEP] (whole numbers, 0 < MIN
// < MAX) into a comma list.
func genaiRange(typ, spec string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("--sweep-range %q: %s", spec, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("want MIN:MAX or MIN:MAX:STEP")
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return bad("%q is not a whole number ≥ 1", p)
		}
		n[i] = v
	}
	lo, hi, step := n[0], n[1], n[2]
	if lo >= hi {
		return bad("MAX must be greater than MIN")
	}
	var vals []string
	switch {
	case step > 0:
		if (hi-lo)/step >= genaiMaxValues {
			return bad("more than %d values", genaiMaxValues)
		}
		for x := lo; x <= hi; x += step {
			vals = append(vals, strconv.Itoa(x))
		}
	case typ != "concurrency":
		return bad("a %s range needs a STEP (MIN:MAX:STEP); only concurrency doubles without one", typ)
	case lo&(lo-1) != 0 || hi&(hi-1) != 0:
		return bad("MIN and MAX must be powers of 2 when sweeping concurrency without a STEP")
	default:
		for x := lo; x <= hi; x *= 2 {
			vals = append(vals, strconv.Itoa(x))
		}
	}
	return strings.Join(vals, ","), nil
}
