package prompt

import "testing"

func TestAppendJSONInts(t *testing.T) {
	if got := string(AppendJSONInts(nil, []int{1, 22, 333})); got != "[1,22,333]" {
		t.Errorf("got %s", got)
	}
	if got := string(AppendJSONInts(nil, nil)); got != "[]" {
		t.Errorf("got %s", got)
	}
}
