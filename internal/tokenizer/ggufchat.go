package tokenizer

import (
	"fmt"
	"os"
)

// GGUFChat is the chat template a GGUF file carries, with the tokens it
// names.
type GGUFChat struct {
	// Template is tokenizer.chat_template ("" when the file has none).
	Template string
	// BOS and EOS are the texts of the bos and eos tokens ("" when the
	// file names none).
	BOS, EOS string
	// Added lists the control and user-defined tokens (token types 3 and
	// 4), which a server splits out before encoding.
	Added []string
}

// ReadGGUFChat reads the chat template from the metadata of the GGUF
// file at path; ok is false when the file is no GGUF file.
func ReadGGUFChat(path string) (c GGUFChat, ok bool, err error) {
	if !isGGUF(path) {
		return c, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return c, true, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	defer f.Close()
	m, err := readGGUFMeta(path, f)
	if err != nil {
		return c, true, err
	}
	text := func(id int64) string {
		if id < 0 || id >= int64(len(m.tokens)) {
			return ""
		}
		return m.tokens[id]
	}
	c = GGUFChat{Template: m.chatTemplate, BOS: text(m.bos), EOS: text(m.eos)}
	for id, t := range m.types {
		if (t == 3 || t == 4) && id < len(m.tokens) {
			c.Added = append(c.Added, m.tokens[id])
		}
	}
	return c, true, nil
}
