// The renderer's state and the filler text every response is made of (render.go
// renders the events, render_generate.go and render_responses.go the other APIs).

package mockserver

// fillers are the output tokens: cheap, deterministic, JSON-safe words,
// each one token of the builtin tokenizer (o200k_base) alone and in any
// sequence (TestFillersAreTokens), so a client that counts the streamed
// text with it gets exactly completion_tokens. Token k of choice c is
// fillers[(k+7c) mod 64].
var fillers = [64]string{
	" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", ".",
	" Lorem", " ipsum", " dolor", " sit", " amet", ",", " consectetur", " adipiscing", " elit", " sed",
	" do", " eiusmod", " tempor", " incididunt", " ut", " labore", " et", " dolore", " magna", " aliqua",
	" Ut", " enim", " ad", " minim", " veniam", " quis", " time", " exercitation", " people", " laboris",
	" nisi", " year", " ex", " ea", " commodo", " consequat", " Duis", " aute", " way", " in",
	" reprehenderit", " voluptate", " velit", " esse", " day", " eu", " fugiat", " nulla", " pariatur", " world",
	" sint", " school", " state", " non",
}

func filler(k, c int) string { return fillers[(k+7*c)&63] }

// renderer renders one response. Its pieces that vary per response (id,
// model, created) are rendered once in init; every event then appends
// constants, the choice index and the token text. It is not safe for
// concurrent use; each request owns one (pooled with its state).
type renderer struct {
	llama     bool
	chat      bool
	responses bool // the Responses API (render_responses.go renders it)
	msgIndex  int  // Responses: the message item's output_index
	gen       generationAPI
	// prompt and cached are the usage's counts (setUsage), for bodies
	// that spell them on their own (SGLang).
	prompt, cached int
	id             string
	head           []byte // vLLM: `data: {"id":…,"model":…,"object":…,"created":…,`
	tail           []byte // llama.cpp chat: `,"created":…,"id":…,"model":…,"system_fingerprint":…,"object":…`; completions: without id
	usage          []byte // the usage object, rendered by setUsage
	timings        []byte // llama.cpp timings object
	// answer, when not empty, are the pieces of a graded prompt's answer
	// (accuracy.go): choice 0's tokens ansFrom… (after its reasoning).
	answer  []string
	ansFrom int
}

func appendDone(b []byte) []byte { return append(b, "data: [DONE]\n\n"...) }

// choiceText holds one choice of a non-streamed response.
type choiceText struct {
	reasoning, content int // token counts
	finish             string
}

func appendFiller(b []byte, c, from, to int) []byte {
	for k := from; k < to; k++ {
		b = append(b, filler(k, c)...)
	}
	return b
}
