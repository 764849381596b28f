package tokenizer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// tiktokenEncoding describes one embedded tiktoken vocabulary.
type tiktokenEncoding struct {
	name    string
	file    string // in the embedded assets
	pattern string
}

// tiktokenEncodings are the vocabularies embedded by
// github.com/pkoukk/tiktoken-go-loader (OpenAI's .tiktoken files, byte for
// byte; TestEmbeddedVocabularies pins their sha256).
var tiktokenEncodings = [...]tiktokenEncoding{
	{"o200k_base", "o200k_base.tiktoken", patO200k},
	{"cl100k_base", "cl100k_base.tiktoken", patCL100k},
	{"p50k_base", "p50k_base.tiktoken", patGPT2},
	{"r50k_base", "r50k_base.tiktoken", patGPT2},
}

// loadTiktoken parses an embedded .tiktoken file: one "base64(token) rank"
// per line, ranks doubling as ids.
func loadTiktoken(e tiktokenEncoding) (*bpe, error) {
	data, err := assets.Assets.ReadFile(e.file)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", e.name, err)
	}
	t := &bpe{
		name:         e.name,
		vocab:        make(map[string]int32, bytes.Count(data, []byte{'\n'})),
		concatRank:   true,
		ignoreMerges: true,
		byteLevel:    true,
		unk:          -1,
		fast:         fastSplitter(e.pattern),
		cache:        newWordCache(),
	}
	for i := range t.fallback {
		t.fallback[i] = -1
	}
	buf := make([]byte, 0, 256)
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		l, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(l) == 0 {
			continue
		}
		tok, rank, ok := bytes.Cut(l, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("tokenizer %s: %s line %d: want \"base64 rank\"", e.name, e.file, line)
		}
		var derr error
		buf, derr = base64.StdEncoding.AppendDecode(buf[:0], tok)
		r, rerr := strconv.ParseInt(string(rank), 10, 32)
		if derr != nil || rerr != nil || r < 0 {
			return nil, fmt.Errorf("tokenizer %s: %s line %d: bad token or rank", e.name, e.file, line)
		}
		piece := string(buf)
		t.vocab[piece] = int32(r)
		for int(r) >= len(t.pieces) {
			t.pieces = append(t.pieces, "")
		}
		t.pieces[r] = piece
	}
	for b := range 256 {
		id, ok := t.vocab[string([]byte{byte(b)})]
		if !ok {
			return nil, fmt.Errorf("tokenizer %s: vocabulary lacks byte 0x%02x", e.name, b)
		}
		t.byteIDs[b] = id
	}
	t.initBytePairs()
	re, err := newRegexSplitter(e.pattern)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", e.name, err)
	}
	t.slow = re
	return t, nil
}
