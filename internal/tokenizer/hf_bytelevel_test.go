package tokenizer

import "testing"

// Every byte maps to a distinct printable rune and back (GPT-2's
// bytes_to_unicode), so byte-level vocabularies can spell any input.
func TestByteLevelAlphabetRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	enc := byteLevelEncode(string(all))
	if got, ok := byteLevelDecode(enc); !ok || got != string(all) {
		t.Fatalf("round trip of all 256 bytes failed (ok=%v)", ok)
	}
	if _, ok := byteLevelDecode("\u4e2d"); ok {
		t.Error("a rune outside the byte alphabet decoded")
	}
	if byteLevelEncode(" hello") != "Ġhello" {
		t.Errorf("space maps to %q, want Ġ", byteLevelEncode(" "))
	}
}
