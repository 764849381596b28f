package wasm_test

import (
	"context"
	"fmt"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
)

// Load a shipped adapter, give a worker its own instance, and classify one
// recorded response the way the engine does at the end of a stream.
func ExampleLoad() {
	ctx := context.Background()
	a, err := wasm.Load(ctx, "tgi-generate", wasm.Config{})
	if err != nil {
		panic(err)
	}
	defer a.Close(ctx)
	in, err := a.Instantiate(&adapter.Config{Model: "m", Stream: true})
	if err != nil {
		panic(err)
	}
	defer in.Release()

	rec, _ := wasm.ParseRecording([]byte("data:{\"token\":{\"id\":1,\"text\":\"Hi\",\"special\":false}}\n\n" +
		"data:{\"token\":{\"id\":2,\"text\":\"</s>\",\"special\":true},\"details\":{\"finish_reason\":\"eos_token\",\"generated_tokens\":2}}\n\n"))
	c, err := wasm.Classify(in, 1, rec, a.Info().Framing, 0)
	if err != nil {
		panic(err)
	}
	for _, r := range c.Records {
		fmt.Println(r.Event, r.Kind, r.TextBytes)
	}
	fmt.Printf("%s %d %q\n", c.Final.FinishReason, c.Final.CompletionTokens, c.Final.Text)
	// Output:
	// 0 content 2
	// 1 meta 0
	// 1 finish 0
	// 1 usage 0
	// stop 2 "Hi"
}
