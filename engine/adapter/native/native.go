// Package native lists the endpoint adapters compiled into reprise (as
// opposed to the sandboxed Wasm adapters of package wasm): the names
// --endpoint accepts for them, what each speaks and its default path.
// [List] builds the table on every call; there is no global registry.
package native

import (
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/mediagen"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/adapter/retrieval"
)

// Endpoint is one native endpoint adapter.
type Endpoint struct {
	// Name is what --endpoint takes, e.g. "responses".
	Name string
	// API says in a few words what the adapter speaks.
	API string
	// Adapter is the adapter; it is safe for concurrent use.
	Adapter adapter.Adapter
}

// List returns the native endpoints in the order `reprise adapters list`
// shows them. The caller owns the slice.
func List() []Endpoint {
	return []Endpoint{
		{Name: "chat", API: "OpenAI chat completions", Adapter: openai.Adapter{Endpoint: openai.Chat}},
		{Name: "completions", API: "OpenAI completions", Adapter: openai.Adapter{Endpoint: openai.Completions}},
		{Name: "responses", API: "OpenAI Responses API", Adapter: openai.Adapter{Endpoint: openai.Responses}},
		{Name: "sglang", API: "SGLang native /generate", Adapter: openai.Adapter{Endpoint: openai.SGLang}},
		{Name: "tgi", API: "HF TGI /generate_stream (native)", Adapter: openai.Adapter{Endpoint: openai.TGI}},
		{Name: "embeddings", API: "OpenAI embeddings (vLLM, TEI, SGLang)", Adapter: retrieval.Adapter{API: retrieval.Embeddings}},
		{Name: "chat-embeddings", API: "vLLM chat-form embeddings (messages with image, audio, video parts)", Adapter: retrieval.ChatEmbeddings{}},
		{Name: "nim-embeddings", API: "NVIDIA NIM embeddings", Adapter: retrieval.Adapter{API: retrieval.NIMEmbeddings}},
		{Name: "rerank-tei", API: "Hugging Face TEI rerank", Adapter: retrieval.Adapter{API: retrieval.RerankTEI}},
		{Name: "rerank-cohere", API: "Cohere rerank v2", Adapter: retrieval.Adapter{API: retrieval.RerankCohere}},
		{Name: "ranking-nim", API: "NVIDIA NIM ranking", Adapter: retrieval.Adapter{API: retrieval.RankingNIM}},
		{Name: "rerank-vllm", API: "vLLM rerank", Adapter: retrieval.Adapter{API: retrieval.RerankVLLM}},
		{Name: "score-vllm", API: "vLLM score", Adapter: retrieval.Adapter{API: retrieval.ScoreVLLM}},
		{Name: "image_generation", API: "OpenAI images generations (b64_json, URL, streamed partial images)", Adapter: mediagen.Adapter{API: mediagen.Images}},
		{Name: "video_generation", API: "OpenAI videos (async job: submit, poll, download)", Adapter: mediagen.Adapter{API: mediagen.Video}},
		{Name: "transcription", API: "OpenAI audio transcriptions (multipart upload)", Adapter: mediagen.Adapter{API: mediagen.Transcription}},
		{Name: "speech-sse", API: "OpenAI audio speech streamed as speech.audio.delta events (stream_format sse)", Adapter: mediagen.Adapter{API: mediagen.SpeechSSE}},
		{Name: "speech", API: "OpenAI audio speech (text to speech, streamed audio)", Adapter: mediagen.Adapter{API: mediagen.Speech}},
	}
}

// Lookup returns the native endpoint called name.
func Lookup(name string) (Endpoint, bool) {
	for _, e := range List() {
		if e.Name == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Names returns the native endpoints' names.
func Names() []string {
	l := List()
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = e.Name
	}
	return out
}
