package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// checkObject reports whether b is a JSON object.
func checkObject(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("want a JSON object: %w", err)
	}
	return nil
}

// appendMessages appends a conversation as a JSON array of objects that
// open with open (`{"role":` for chat) and carry role and content.
func appendMessages(body []byte, msgs []adapter.Message, open string) []byte {
	body = append(body, '[')
	for i, m := range msgs {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, open...)
		body = jsonx.AppendString(body, m.Role)
		body = append(body, `,"content":`...)
		body = jsonx.AppendString(body, m.Content)
		body = append(body, '}')
	}
	return append(body, ']')
}

// appendLimits appends the token limit under the endpoint's field name and
// ignore_eos when configured.
func (in *Instance) appendLimits(body []byte, b *adapter.BuildInput) []byte {
	if b.MaxTokens > 0 {
		body = append(body, ',', '"')
		body = append(body, in.maxField...)
		body = append(body, '"', ':')
		body = strconv.AppendInt(body, int64(b.MaxTokens), 10)
	}
	if in.cfg.IgnoreEOS && b.MaxTokens > 0 {
		// Without max_tokens the server decides the length: ignore_eos
		// would make the request run to the context limit.
		body = append(body, `,"ignore_eos":true`...)
	}
	if in.cfg.MinTokens && b.MaxTokens > 0 {
		body = append(body, `,"min_tokens":`...)
		body = strconv.AppendInt(body, int64(b.MaxTokens), 10)
	}
	return body
}

// endBody appends --extra-body's members and then the row's extra to an
// open JSON object, closes it and sets it as out's body. Later duplicate
// keys win in every JSON reader servers use, so the merge order endpoint
// defaults < --extra-body < row extra is the append order.
func (in *Instance) endBody(body []byte, b *adapter.BuildInput, raw *rawRow, out *adapter.HTTPRequest) error {
	body = jsonx.AppendMembers(body, in.cfg.ExtraBody)
	if isSet(raw.Extra) {
		if err := checkObject(raw.Extra); err != nil {
			return fmt.Errorf("row %d: extra: %w", b.TraceRow, err)
		}
		body = jsonx.AppendMembers(body, raw.Extra)
	}
	out.Body = append(body, '}')
	return nil
}

// isSet reports whether r holds a value: not empty, not null.
func isSet(r json.RawMessage) bool {
	r = bytes.TrimSpace(r)
	return len(r) > 0 && string(r) != "null"
}

// textInput is a text_input value as text (a JSON string's contents, or
// anything else's JSON text).
func textInput(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// appendTextInput appends a text_input value (a JSON string, or anything
// else rendered as its JSON text) as JSON string contents.
func appendTextInput(dst []byte, v json.RawMessage) []byte {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return jsonx.AppendContents(dst, s)
	}
	return jsonx.AppendContents(dst, string(v))
}
