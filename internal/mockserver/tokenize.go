package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
)

// The tokenizer endpoints answer with the server's own tokenizer (the one
// that counts usage.prompt_tokens), in the flavor's shapes:
//
//   - vLLM: POST /tokenize {"model", "prompt"} or {"model", "messages"}
//     → {"count", "max_model_len", "tokens", "token_strs"}; POST
//     /detokenize {"model", "tokens"} → {"prompt"}. The messages form
//     counts the chat template's tokens as a chat request does, so its
//     count equals that request's usage.prompt_tokens.
//   - llama.cpp: POST /tokenize {"content", "with_pieces"} → {"tokens"}
//     (with pieces: [{"id", "piece"}]); a body without "content" is
//     empty text, 200 {"tokens":[]}, as llama.cpp answers; POST
//     /detokenize {"tokens"} → {"content"}.
//
// The mock's tokenizer adds no special tokens, so add_special_tokens and
// add_special change nothing. They are not completion requests: they are
// not in the oracle log and take no scheduler slot.

type tokenizeRequest struct {
	Model          string          `json:"model"`
	Prompt         *string         `json:"prompt"`
	Messages       []wireMessage   `json:"messages"`
	Content        *string         `json:"content"`
	WithPieces     bool            `json:"with_pieces"`
	ReturnTokenStr bool            `json:"return_token_strs"`
	Tokens         json.RawMessage `json:"tokens"`
}

// decoder is what /detokenize and token strings need of the tokenizer.
type decoder interface{ Decode(ids []int) string }

// maxTokenizeBody bounds a /tokenize or /detokenize body.
const maxTokenizeBody = 16 << 20

func (s *Server) readTokenizeRequest(w http.ResponseWriter, r *http.Request) (tokenizeRequest, bool) {
	var req tokenizeRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTokenizeBody))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		s.writeJSON(w, http.StatusBadRequest, errorJSON(s.cfg.Flavor, http.StatusBadRequest, "Failed to read and parse request body, "+err.Error()))
		return req, false
	}
	if s.cfg.Flavor != FlavorLlamaCPP && req.Model != "" && !slices.Contains(s.cfg.Models, req.Model) {
		s.writeJSON(w, http.StatusNotFound, errorJSON(s.cfg.Flavor, http.StatusNotFound, "The model `"+req.Model+"` does not exist."))
		return req, false
	}
	return req, true
}

func (s *Server) serveTokenize(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readTokenizeRequest(w, r)
	if !ok {
		return
	}
	var ids []int
	switch {
	case s.cfg.Flavor == FlavorLlamaCPP && req.Content != nil:
		ids = s.tok.AppendEncode(nil, *req.Content)
	case s.cfg.Flavor != FlavorLlamaCPP && req.Prompt != nil:
		ids = s.tok.AppendEncode(nil, *req.Prompt)
	case s.cfg.Flavor != FlavorLlamaCPP && len(req.Messages) > 0:
		for i, m := range req.Messages {
			t, err := decodeContent(m.Content)
			if err != nil {
				s.writeJSON(w, http.StatusBadRequest, errorJSON(s.cfg.Flavor, http.StatusBadRequest, "messages["+strconv.Itoa(i)+"].content: "+err.Error()))
				return
			}
			for range s.cfg.ChatTemplateTokens {
				ids = append(ids, templateToken)
			}
			ids = s.tok.AppendEncode(ids, t)
		}
	case s.cfg.Flavor == FlavorLlamaCPP:
		// llama.cpp takes a body without "content" (vLLM's {"prompt"})
		// for empty text: 200 {"tokens":[]} (recorded in
		// internal/servertok/testdata/llamacpp-tokenize.jsonl.gz).
		ids = []int{}
	default:
		want := `"prompt" or "messages"`
		s.writeJSON(w, http.StatusBadRequest, errorJSON(s.cfg.Flavor, http.StatusBadRequest, "tokenize: "+want+" is required"))
		return
	}
	if ids == nil {
		ids = []int{}
	}
	dec, _ := s.tok.(decoder)
	if s.cfg.Flavor == FlavorLlamaCPP {
		if !req.WithPieces {
			s.writeJSON(w, http.StatusOK, map[string]any{"tokens": ids})
			return
		}
		type piece struct {
			ID    int    `json:"id"`
			Piece string `json:"piece"`
		}
		ps := make([]piece, len(ids))
		for i, id := range ids {
			ps[i] = piece{ID: id}
			if dec != nil {
				ps[i].Piece = dec.Decode(ids[i : i+1])
			}
		}
		s.writeJSON(w, http.StatusOK, map[string]any{"tokens": ps})
		return
	}
	var strs []string
	if req.ReturnTokenStr && dec != nil {
		strs = make([]string, len(ids))
		for i := range ids {
			strs[i] = dec.Decode(ids[i : i+1])
		}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": s.cfg.MaxModelLen, "tokens": ids, "token_strs": strs})
}

func (s *Server) serveDetokenize(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readTokenizeRequest(w, r)
	if !ok {
		return
	}
	var ids []int
	if err := json.Unmarshal(req.Tokens, &ids); err != nil || req.Tokens == nil {
		s.writeJSON(w, http.StatusBadRequest, errorJSON(s.cfg.Flavor, http.StatusBadRequest, "detokenize: \"tokens\" must be an array of token ids"))
		return
	}
	dec, ok := s.tok.(decoder)
	if !ok {
		s.writeJSON(w, http.StatusNotImplemented, errorJSON(s.cfg.Flavor, http.StatusNotImplemented, "detokenize: this server's tokenizer cannot decode"))
		return
	}
	text := dec.Decode(ids)
	if s.cfg.Flavor == FlavorLlamaCPP {
		s.writeJSON(w, http.StatusOK, map[string]any{"content": text})
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"prompt": text})
}

// errorJSON is an error body in the flavor's shape.
func errorJSON(f Flavor, code int, msg string) map[string]any {
	if f == FlavorLlamaCPP {
		return map[string]any{"error": map[string]any{"code": code, "message": msg, "type": "invalid_request_error"}}
	}
	return map[string]any{"object": "error", "message": msg, "type": http.StatusText(code), "param": nil, "code": code}
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	s.setHeaders(w.Header(), false)
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// templateToken is the id standing for one chat-template token.
const templateToken = 199_999
