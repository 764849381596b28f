package tokenizer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Identity returns "sha256:" and the hash of t's vocabulary (every id's
// piece, in id order): two tokenizers with equal identities encode alike,
// whatever their names or files. A tokenizer with its own notion
// (an Identity() string method) gives that; one that lists no vocabulary
// gives "".
func Identity(t Tokenizer) string {
	if id, ok := t.(interface{ Identity() string }); ok {
		return id.Identity()
	}
	v, ok := t.(Vocabulary)
	if !ok {
		return ""
	}
	h := sha256.New()
	var n [8]byte
	for id := range v.VocabSize() {
		p, ok := v.Piece(id)
		if !ok {
			continue
		}
		binary.LittleEndian.PutUint64(n[:], uint64(id))
		h.Write(n[:])
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
