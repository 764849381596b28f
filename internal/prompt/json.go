package prompt

import "strconv"

// AppendJSONInts appends ids to dst as a JSON array of integers, the
// completions "prompt" of FormatTokenIDs.
func AppendJSONInts(dst []byte, ids []int) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(id), 10)
	}
	return append(dst, ']')
}
