package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/trace/media"
)

func buildBody(t testing.TB, ep Endpoint, b *adapter.BuildInput) string {
	t.Helper()
	in, err := Adapter{Endpoint: ep}.NewInstance(&adapter.Config{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var out adapter.HTTPRequest
	if err := in.Build(b, &out); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out.Body) {
		t.Fatalf("invalid JSON: %s", out.Body)
	}
	return string(out.Body)
}

// TestBuildMedia: a row's media parts and synthetic parts go after the
// text in the user message's content array, in chat and Responses shapes,
// and with a session's history on the last user message only.
func TestBuildMedia(t *testing.T) {
	img := media.Item{Kind: media.Image, Format: "png", Data: []byte{1, 2, 3}}
	aud := media.Item{Kind: media.Audio, Format: "wav", Data: []byte{4, 5}}
	p := media.NewPart(img)
	raw := `{"text_input":"hi","media":[` + string(media.AppendChatPart(nil, &aud)) + `]}`
	b := &adapter.BuildInput{Raw: json.RawMessage(raw), Media: []adapter.MediaPart{{Chat: p.Chat, Responses: p.Responses}}, MaxTokens: 4}
	got := buildBody(t, Chat, b)
	want := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"input_audio","input_audio":{"data":"BAU=","format":"wav"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,AQID"}}]}],"max_tokens":4,"stream":false}`
	if got != want {
		t.Errorf("chat:\n got %s\nwant %s", got, want)
	}
	got = buildBody(t, Responses, b)
	want = `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_file","filename":"audio.wav","file_data":"data:audio/wav;base64,BAU="},{"type":"input_image","image_url":"data:image/png;base64,AQID"}]}]`
	if !strings.Contains(got, want) {
		t.Errorf("responses:\n got %s\nwant it to contain %s", got, want)
	}
	h := &adapter.BuildInput{Flags: adapter.BuildHistory, Media: b.Media, Messages: []adapter.Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}}}
	got = buildBody(t, Chat, h)
	want = `"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"text","text":"c"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AQID"}}]}]`
	if !strings.Contains(got, want) {
		t.Errorf("history:\n got %s\nwant it to contain %s", got, want)
	}
	// A row of media alone: no text part.
	got = buildBody(t, Chat, &adapter.BuildInput{Raw: json.RawMessage(`{"media":[{"type":"video_url","video_url":{"url":"https://x/v.mp4"}}]}`)})
	if !strings.Contains(got, `"content":[{"type":"video_url","video_url":{"url":"https://x/v.mp4"}}]`) {
		t.Errorf("media alone: %s", got)
	}
}

// BenchmarkBuildChat1024PNG is the cost of building a chat request that
// carries one 1024 × 1024 synthetic PNG, its part rendered once before
// (what every request build pays: the copy of the part into the body).
func BenchmarkBuildChat1024PNG(b *testing.B) {
	it, err := media.SynthImage(media.ImageSpec{Width: 1024, Height: 1024, Format: "png", Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p := media.NewPart(it)
	in, _ := Adapter{}.NewInstance(&adapter.Config{Model: "m"})
	bi := &adapter.BuildInput{PromptText: "describe the image", MaxTokens: 16, Media: []adapter.MediaPart{{Chat: p.Chat, Responses: p.Responses}}}
	var out adapter.HTTPRequest
	b.SetBytes(int64(len(p.Chat)))
	b.ReportAllocs()
	for b.Loop() {
		if err := in.Build(bi, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildChatRow1024PNG is BenchmarkBuildChat1024PNG for a trace
// row whose own image (resolved when the trace was read) rides in Raw: the
// build decodes Raw's JSON, which scans the image's base64 once more.
func BenchmarkBuildChatRow1024PNG(b *testing.B) {
	it, err := media.SynthImage(media.ImageSpec{Width: 1024, Height: 1024, Format: "png", Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	raw := append([]byte(`{"text_input":"describe the image","media":[`), media.AppendChatPart(nil, &it)...)
	raw = append(raw, "]}"...)
	in, _ := Adapter{}.NewInstance(&adapter.Config{Model: "m"})
	bi := &adapter.BuildInput{Raw: raw, MaxTokens: 16}
	var out adapter.HTTPRequest
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := in.Build(bi, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCutMedia: the media member is cut from Raw wherever it stands, and
// the rest is the same object without it.
func TestCutMedia(t *testing.T) {
	for _, c := range []struct{ raw, rest, media string }{
		{`{"media":[{"a":"]"}],"text_input":"x"}`, `{"text_input":"x"}`, `[{"a":"]"}]`},
		{`{"text_input":"x","media":[1,[2]]}`, `{"text_input":"x"}`, `[1,[2]]`},
		{`{"text":"t","media":[{"u":"\"]"}],"extra":{}}`, `{"text":"t","extra":{}}`, `[{"u":"\"]"}]`},
		{`{"media":[]}`, `{}`, `[]`},
	} {
		rest, m, ok := media.CutMedia([]byte(c.raw), nil)
		if !ok || string(rest) != c.rest || string(m) != c.media || !json.Valid(rest) {
			t.Errorf("%s: rest %s media %s ok %v", c.raw, rest, m, ok)
		}
	}
	if _, _, ok := media.CutMedia([]byte(`{"text_input":"\"media\":[x"}`), nil); ok {
		t.Error("cut a media key inside a string")
	}
	if _, _, ok := media.CutMedia([]byte(`{"media":[1,2`), nil); ok {
		t.Error("cut an unterminated array")
	}
}
