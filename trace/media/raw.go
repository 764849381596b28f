package media

import "bytes"

// rawMediaKey opens the media member the trace reader writes into a row's
// Raw (trace.Row.Raw). Inside
// a JSON string a quote is escaped, so these bytes only occur as a key.
var rawMediaKey = []byte(`"media":[`)

// CutMedia splits raw's "media" array from the rest of the object, so that
// decoding the rest does not scan the media's base64 (engine/adapter/openai's BenchmarkBuildChatRow1024PNG):
// rest is raw without the member (built in buf), media the array. ok is
// false when raw has no media member or its array does not end.
func CutMedia(raw, buf []byte) (rest, media []byte, ok bool) {
	i := bytes.Index(raw, rawMediaKey)
	if i < 0 {
		return nil, nil, false
	}
	start := i + len(rawMediaKey) - 1
	depth, inStr := 0, false
	end := -1
	for k := start; k < len(raw) && end < 0; k++ {
		c := raw[k]
		switch {
		case inStr && c == '\\':
			k++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				end = k + 1
			}
		}
	}
	if end < 0 {
		return nil, nil, false
	}
	media = raw[start:end]
	before, after := bytes.TrimRight(raw[:i], " \t\r\n"), raw[end:]
	if a := bytes.TrimLeft(after, " \t\r\n"); len(a) > 0 && a[0] == ',' {
		after = a[1:]
	} else if len(before) > 0 && before[len(before)-1] == ',' {
		before = before[:len(before)-1]
	}
	rest = append(append(buf[:0], before...), after...)
	return rest, media, true
}
