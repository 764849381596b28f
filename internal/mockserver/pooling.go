package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// poolingAPI is the shape of an embeddings or rankings endpoint.
type poolingAPI uint8

const (
	apiEmbeddings   poolingAPI = iota // POST /v1/embeddings (OpenAI, vLLM, NIM)
	apiRerankTEI                      // POST /rerank (Hugging Face TEI)
	apiRerankCohere                   // POST /v2/rerank (Cohere)
	apiRankingNIM                     // POST /v1/ranking (NVIDIA NIM)
	apiRerankVLLM                     // POST /v1/rerank (vLLM)
	apiScoreVLLM                      // POST /v1/score and /score (vLLM)
)

// embeddingDims is the length of every vector the mock returns.
const embeddingDims = 8

// poolingRequest is a decoded embeddings or rankings request: the inputs
// (embeddings) or the query and its passages (rankings).
type poolingRequest struct {
	model string
	query string
	texts []string
	media []InputMediaLog // chat-form embeddings' images, audio, video
}

// textOrObject decodes a string or a {"text": ...} object.
type textOrObject string

func (t *textOrObject) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.Text == nil {
			return errors.New(`want {"text": "..."}`)
		}
		*t = textOrObject(*o.Text)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`want a string or {"text": "..."}`)
	}
	*t = textOrObject(s)
	return nil
}

// decodePoolingRequest decodes the body of api. Every spelling of the
// query and passages the served APIs accept is read. It never panics on
// any input (FuzzPoolingRequest).
func decodePoolingRequest(body []byte, api poolingAPI) (poolingRequest, error) {
	var w struct {
		Model     string          `json:"model"`
		Input     json.RawMessage `json:"input"`
		Query     *textOrObject   `json:"query"`
		Queries   *textOrObject   `json:"queries"`
		Text1     *textOrObject   `json:"text_1"`
		Texts     []textOrObject  `json:"texts"`
		Documents []textOrObject  `json:"documents"`
		Passages  []textOrObject  `json:"passages"`
		Items     []textOrObject  `json:"items"`
		Text2     []textOrObject  `json:"text_2"`
		Messages  json.RawMessage `json:"messages"`
		Modality  json.RawMessage `json:"modality"`
	}
	if err := unmarshalBody(body, &w); err != nil {
		return poolingRequest{}, err
	}
	r := poolingRequest{model: w.Model}
	if api == apiEmbeddings && len(w.Messages) > 0 {
		return decodeEmbedMessages(r, w.Messages)
	}
	if api == apiEmbeddings {
		in := bytes.TrimSpace(w.Input)
		switch {
		case len(in) > 0 && in[0] == '"':
			var s string
			if err := json.Unmarshal(in, &s); err != nil {
				return r, &requestError{msg: "input: " + err.Error()}
			}
			r.texts = []string{s}
		case len(in) > 0 && in[0] == '[':
			if err := json.Unmarshal(in, &r.texts); err != nil {
				return r, &requestError{msg: "input: want a string or an array of strings (token-id inputs are not served by the mock server)"}
			}
		}
		if len(r.texts) == 0 {
			return r, &requestError{msg: "input: required: a string or a non-empty array of strings"}
		}
		for i, t := range r.texts {
			if t == "" {
				return r, &requestError{msg: fmt.Sprintf("input[%d]: empty strings are not allowed", i)}
			}
		}
		return decodeNIMImages(r, w.Modality)
	}
	for _, q := range []*textOrObject{w.Query, w.Queries, w.Text1} {
		if q != nil {
			r.query = string(*q)
			break
		}
	}
	for _, d := range [][]textOrObject{w.Texts, w.Documents, w.Passages, w.Items, w.Text2} {
		if len(d) > 0 {
			for _, t := range d {
				r.texts = append(r.texts, string(t))
			}
			break
		}
	}
	if r.query == "" {
		return r, &requestError{msg: "query: required"}
	}
	if len(r.texts) == 0 {
		return r, &requestError{msg: "documents: at least one document is required"}
	}
	return r, nil
}

// servePooling serves an embeddings or rankings endpoint: one JSON body
// written when the latency model's prefill of every input (TTFT + the
// prefill time of the prompt tokens; no prefix cache) is over. The oracle
// logs its prompt tokens as the API reports them and one body event.
func (s *Server) servePooling(w http.ResponseWriter, r *http.Request, api poolingAPI) {
	s.serve(w, r, func(st *reqState, _ int64) { s.pooling(st, w, r, api) })
}

// pooling answers an embeddings or rankings request whose body serve has
// read.
func (s *Server) pooling(st *reqState, w http.ResponseWriter, r *http.Request, api poolingAPI) {
	seq := st.log.Seq
	lg := &st.log
	req, err := decodePoolingRequest(st.body, api)
	if err != nil {
		s.writeRequestError(st, w, err)
		return
	}
	model := s.cfg.Models[0]
	if req.model != "" && api != apiRerankTEI {
		if !slices.Contains(s.cfg.Models, req.model) {
			s.writeError(st, w, 404, "The model `"+req.model+"` does not exist.", "")
			return
		}
		model = req.model
	}
	// Tokens: every input; for rankings every (query, passage) pair, the
	// query counted once per passage (vLLM's usage.prompt_tokens).
	q := 0
	if api != apiEmbeddings {
		st.ids = s.tok.AppendEncode(st.ids[:0], req.query)
		q = len(st.ids)
	}
	prompt := 0
	if s.oracle.enabled() {
		lg.InputTokens, lg.QueryTokens = make([]int, 0, len(req.texts)), q
	}
	for _, t := range req.texts {
		st.ids = s.tok.AppendEncode(st.ids[:0], t)
		if lg.InputTokens != nil {
			lg.InputTokens = append(lg.InputTokens, len(st.ids))
		}
		n := len(st.ids) + q
		if n > s.cfg.MaxModelLen {
			s.writeError(st, w, 400, fmt.Sprintf("input of %d tokens is longer than the maximum context length %d", n, s.cfg.MaxModelLen), "")
			return
		}
		prompt += n
	}
	lg.PromptTokens = prompt
	lg.InputMedia = append(lg.InputMedia[:0], req.media...)
	ctx := r.Context()
	admitted, ok := s.admit(ctx, st)
	if !ok {
		return
	}
	defer s.release()
	s.met.promptTokens.Add(int64(prompt))
	s.met.evaluatedTokens.Add(int64(prompt))
	first := s.timing.firstToken(prompt, st.rng) + st.faults.stall + s.timing.mediaDelay(req.media)
	st.due = admitted + int64(first)
	if !s.sleepUntil(ctx, st, st.due) {
		return
	}
	if st.faults.resetMid {
		lg.Error = "injected reset"
		st.hs.reset()
		s.event(st, EventReset, 0, nil)
		return
	}
	if st.faults.errorEvent {
		s.writeError(st, w, 500, "Internal error while computing (injected by reprise mock-server).", "")
		return
	}
	st.buf = s.renderPooling(st, st.buf[:0], api, model, seq, &req, prompt)
	if st.faults.malformed {
		st.buf = st.buf[:len(st.buf)/2]
	}
	h := w.Header()
	s.setHeaders(h, false)
	if api == apiRerankTEI {
		h["X-Compute-Tokens"] = []string{strconv.Itoa(prompt)}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(st.buf))}
	lg.Status = http.StatusOK
	st.writeStart = s.mono()
	_, err = w.Write(st.buf)
	if err == nil {
		err = st.hs.flush()
	}
	kind := EventBody
	if st.faults.malformed {
		kind = EventMalformed
	}
	if s.event(st, kind, 0, err) {
		lg.FinishReason = "stop"
		s.met.finishedStop.Add(1)
		s.met.e2e.observe(time.Duration(lg.EndNS - lg.ReceivedNS))
	}
}

// poolingScore is one passage's score in a ranking, by its input index.
type poolingScore struct {
	index int
	score float64
}

// poolingBody renders the parts of a pooling response body that every
// shape shares.
type poolingBody struct {
	id      string // the request's sequence number
	model   string
	created int64 // Unix seconds
	prompt  int   // the prompt tokens of the usage
}

// usage appends vLLM's usage object, with completion_tokens (0) when
// completion.
func (p *poolingBody) usage(b []byte, completion bool) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(p.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(p.prompt), 10)
	if completion {
		b = append(b, `,"completion_tokens":0`...)
	}
	return append(b, '}')
}

// list opens vLLM's list object, up to the start of its data array.
func (p *poolingBody) list(b []byte, idPrefix string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, idPrefix...)
	b = append(b, p.id...)
	b = append(b, `","object":"list","created":`...)
	b = strconv.AppendInt(b, p.created, 10)
	b = append(b, `,"model":`...)
	b = jsonx.AppendString(b, p.model)
	return append(b, `,"data":[`...)
}

// renderPooling appends the response body of api. Scores are random in
// [0, 1) (NIM: logits in [-10, 10)); rankings are sorted by score, best
// first, except /v1/score, which keeps the input order.
func (s *Server) renderPooling(st *reqState, b []byte, api poolingAPI, model string, seq uint64, req *poolingRequest, prompt int) []byte {
	p := poolingBody{id: strconv.FormatUint(seq, 10), model: model, created: s.wall(s.mono()) / 1e9, prompt: prompt}
	if api == apiEmbeddings {
		return appendEmbeddings(b, st, &p, len(req.texts))
	}
	sc := make([]poolingScore, len(req.texts))
	drawScores(st, api, sc)
	return appendRanking(b, api, &p, req, sc)
}

// appendEmbeddings appends an embeddings list of n random vectors of
// embeddingDims in [-1, 1).
func appendEmbeddings(b []byte, st *reqState, p *poolingBody, n int) []byte {
	b = p.list(b, "embd-")
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"object":"embedding","embedding":[`...)
		for d := range embeddingDims {
			if d > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, st.rng.Float64()*2-1, 'f', 6, 64)
		}
		b = append(b, "]}"...)
	}
	b = append(b, "],"...)
	b = p.usage(b, true)
	return append(b, '}')
}

// drawScores draws the scores of the passages into sc, one per passage,
// in the order the body of api lists them.
func drawScores(st *reqState, api poolingAPI, sc []poolingScore) {
	for i := range sc {
		sc[i] = poolingScore{i, st.rng.Float64()}
		if api == apiRankingNIM {
			sc[i].score = sc[i].score*20 - 10
		}
	}
	if api != apiScoreVLLM {
		slices.SortStableFunc(sc, func(a, b poolingScore) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return 0
		})
	}
}

// appendScores appends the scores sc, comma-separated, each by f.
func appendScores(b []byte, sc []poolingScore, f func(b []byte, x poolingScore) []byte) []byte {
	for i, x := range sc {
		if i > 0 {
			b = append(b, ',')
		}
		b = f(b, x)
	}
	return b
}

// appendScore appends {"index":i,"key":score}.
func appendScore(b []byte, key string, x poolingScore) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(x.index), 10)
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	b = strconv.AppendFloat(b, x.score, 'f', 6, 64)
	return append(b, '}')
}

// appendRanking appends the rankings or scores body of api.
func appendRanking(b []byte, api poolingAPI, p *poolingBody, req *poolingRequest, sc []poolingScore) []byte {
	switch api {
	case apiRerankTEI:
		b = append(b, '[')
		b = appendScores(b, sc, func(b []byte, x poolingScore) []byte { return appendScore(b, "score", x) })
		return append(b, ']')
	case apiRerankCohere:
		b = append(b, `{"id":"`...)
		b = append(b, p.id...)
		b = append(b, `","results":[`...)
		b = appendScores(b, sc, func(b []byte, x poolingScore) []byte { return appendScore(b, "relevance_score", x) })
		b = append(b, `],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1},"tokens":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(p.prompt), 10)
		return append(b, `,"output_tokens":0}}}`...)
	case apiRankingNIM:
		b = append(b, `{"rankings":[`...)
		b = appendScores(b, sc, func(b []byte, x poolingScore) []byte { return appendScore(b, "logit", x) })
		return append(b, "]}"...)
	case apiRerankVLLM:
		b = append(b, `{"id":"rerank-`...)
		b = append(b, p.id...)
		b = append(b, `","model":`...)
		b = jsonx.AppendString(b, p.model)
		b = append(b, ',')
		b = p.usage(b, false)
		b = append(b, `,"results":[`...)
		b = appendScores(b, sc, func(b []byte, x poolingScore) []byte {
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(x.index), 10)
			b = append(b, `,"document":{"text":`...)
			b = jsonx.AppendString(b, req.texts[x.index])
			b = append(b, `},"relevance_score":`...)
			b = strconv.AppendFloat(b, x.score, 'f', 6, 64)
			return append(b, '}')
		})
		return append(b, "]}"...)
	default: // apiScoreVLLM
		b = p.list(b, "score-")
		b = appendScores(b, sc, func(b []byte, x poolingScore) []byte {
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(x.index), 10)
			b = append(b, `,"object":"score","score":`...)
			b = strconv.AppendFloat(b, x.score, 'f', 6, 64)
			return append(b, '}')
		})
		b = append(b, "],"...)
		b = p.usage(b, true)
		return append(b, '}')
	}
}

// decodeEmbedMessages decodes the chat form of an embeddings request
// (vLLM's multimodal embeddings, design 0022): its messages' texts become
// one input, every media part is decoded and logged as a chat request's.
func decodeEmbedMessages(r poolingRequest, raw json.RawMessage) (poolingRequest, error) {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return r, &requestError{msg: "messages: want an array of messages: " + err.Error()}
	}
	if len(msgs) == 0 {
		return r, &requestError{msg: "messages: at least one message is required"}
	}
	text := ""
	for i, m := range msgs {
		s, err := decodeContentMedia(m.Content, &r.media)
		if err != nil {
			return r, &requestError{msg: fmt.Sprintf("messages[%d].content%v", i, err)}
		}
		text += s
	}
	if text == "" && len(r.media) == 0 {
		return r, &requestError{msg: "messages: no text and no media to embed"}
	}
	r.texts = []string{text}
	return r, nil
}

// nimImageToken stands for an image input of a NIM embeddings request in
// the token count: its prefill is PrefillPerImage, not its base64.
const nimImageToken = "<image>"

// decodeNIMImages decodes the image inputs of a NIM embeddings request
// (NVIDIA's VLM embedding NIMs): an input that is an image data URL, or
// that modality ("text", "image", one for the batch or one per input)
// says is an image, is decoded and logged as a chat request's image, and
// counts as nimImageToken. A modality of another length, or "image" for
// an input that is no image data URL, is refused with 400 as NIM does.
func decodeNIMImages(r poolingRequest, raw json.RawMessage) (poolingRequest, error) {
	var mods []string
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
		var m string
		if err := json.Unmarshal(t, &m); err != nil {
			return r, &requestError{msg: "modality: " + err.Error()}
		}
		mods = []string{m}
	} else if len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &mods); err != nil {
			return r, &requestError{msg: "modality: want a string or an array of strings"}
		}
		if len(mods) != 1 && len(mods) != len(r.texts) {
			return r, &requestError{msg: fmt.Sprintf("modality: %d values for %d inputs (want one per input, or one for the batch)", len(mods), len(r.texts))}
		}
	}
	for i, t := range r.texts {
		mod := ""
		if len(mods) == 1 {
			mod = mods[0]
		} else if len(mods) > 0 {
			mod = mods[i]
		}
		isImage := strings.HasPrefix(t, "data:image/")
		switch mod {
		case "", "text", "image", "text_image":
		default:
			return r, &requestError{msg: fmt.Sprintf("modality[%d]: %q: want text, image or text_image", i, mod)}
		}
		if mod == "image" && !isImage {
			return r, &requestError{msg: fmt.Sprintf("input[%d]: modality image, but the input is no image data URL", i)}
		}
		if !isImage || mod == "text" {
			continue
		}
		l, _, err := decodeMedia("image_url", &wireMedia{ImageURL: jsonx.AppendString(nil, t)})
		if err != nil {
			return r, &requestError{msg: fmt.Sprintf("input[%d]: %v", i, err)}
		}
		r.media = append(r.media, l)
		r.texts[i] = nimImageToken
	}
	return r, nil
}
