package mockserver

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// FuzzChatRequest feeds arbitrary bodies to the request decoder (chat and
// completions). It must never panic; an accepted request must satisfy the
// decoder's invariants and survive a round trip: re-encoded and decoded
// again, it gives the same request.
func FuzzChatRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":16,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}],"n":3}`,
		`{"messages":[{"role":"user","content":null}],"max_completion_tokens":2}`,
		`{"prompt":"Once upon a time","max_tokens":16}`,
		`{"prompt":[7454,2402,257,640]}`,
		`{"prompt":[[1,2,3]]}`,
		`{"prompt":["x"]}`,
		`{"model":"sim-model","messages":[{"role":"user","content":"hi"}],"stream":true`,
		`{"prompt":[1e3]}`, `{"n":-1}`, `[]`, `null`, ``, `{"messages":"x"}`, `{"max_tokens":1e400}`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		r, err := decodeRequest(body, chat)
		if err != nil {
			if _, ok := errors.AsType[*requestError](err); !ok {
				t.Fatalf("error %v is not a *requestError", err)
			}
			return
		}
		if r.n < 1 || r.n > maxN || r.maxTokens == 0 || r.maxTokens < -1 || r.chat != chat {
			t.Fatalf("accepted a request breaking the invariants: %+v", r)
		}
		if chat && len(r.texts) == 0 {
			t.Fatalf("chat request without messages: %+v", r)
		}
		if !chat && (r.hasIDs == (r.texts != nil) || (r.hasIDs && len(r.ids) == 0)) {
			t.Fatalf("completions request needs exactly one prompt form: %+v", r)
		}
		again, err := decodeRequest(encodeRequest(r), chat)
		if err != nil {
			t.Fatalf("re-encoded request rejected: %v", err)
		}
		if !sameRequest(r, again) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", r, again)
		}
	})
}

// encodeRequest writes r back as a request body.
func encodeRequest(r request) []byte {
	m := map[string]any{"model": r.model, "ignore_eos": r.ignoreEOS, "stream": r.stream, "n": r.n,
		"stream_options": map[string]bool{"include_usage": r.includeUsage}}
	if r.maxTokens > 0 {
		m["max_tokens"] = r.maxTokens
	}
	switch {
	case r.chat:
		msgs := make([]map[string]string, len(r.texts))
		for i, t := range r.texts {
			msgs[i] = map[string]string{"role": "user", "content": t}
		}
		m["messages"] = msgs
	case r.hasIDs:
		m["prompt"] = r.ids
	default:
		m["prompt"] = r.texts[0]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic("BUG: " + err.Error())
	}
	return b
}

func sameRequest(a, b request) bool {
	return a.chat == b.chat && a.model == b.model && slices.Equal(a.texts, b.texts) && slices.Equal(a.ids, b.ids) &&
		a.hasIDs == b.hasIDs && a.maxTokens == b.maxTokens && a.ignoreEOS == b.ignoreEOS && a.stream == b.stream &&
		a.includeUsage == b.includeUsage && a.n == b.n
}

// FuzzCompletionHandler runs whole requests through the handler of both
// flavors: whatever the body and fault header, it must answer without
// panicking and leave no request running.
func FuzzCompletionHandler(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true},"n":2}`), true, false, "")
	f.Add([]byte(`{"prompt":[1,2,3],"max_tokens":3,"ignore_eos":true}`), false, true, "malformed-sse")
	f.Add([]byte(`{"prompt":"x","stream":true}`), false, false, "error-event,stall=0s")
	f.Add([]byte(`{"messages":[`), true, true, "503")
	servers := map[bool]*Server{}
	for _, llama := range []bool{false, true} {
		servers[llama] = newTestServer(f, func(c *Config) {
			c.MaxModelLen = 64
			c.ReasoningTokens = 2
			if llama {
				c.Flavor = FlavorLlamaCPP
			}
		})
	}
	f.Fuzz(func(t *testing.T, body []byte, chat, llama bool, fault string) {
		s := servers[llama]
		path := "/v1/completions"
		if chat {
			path = "/v1/chat/completions"
		}
		run, w := serveOnce(t, s, path, string(body))
		if fault != "" {
			// Keep the fuzzer from stalling: only zero delays.
			var fs faultSet
			if parseFaultHeader(fault, &fs) != nil || fs.stall > 0 || fs.slowHeaders > 0 {
				return
			}
			run, w = serveOnceHeader(t, s, path, string(body), FaultHeader, fault)
		}
		run()
		if w.n == 0 && w.status == 0 && !hijackFault(fault) && !(llama && json.Valid(body)) {
			t.Fatalf("no response written for %q", body)
		}
		if r, q := s.adm.counts(); r != 0 || q != 0 {
			t.Fatalf("running %d waiting %d after the request", r, q)
		}
	})
}

func hijackFault(f string) bool {
	var fs faultSet
	return parseFaultHeader(f, &fs) == nil && (fs.resetBefore || fs.resetMid)
}

// FuzzResponsesRequest: the /v1/responses decoder never panics, returns
// only *requestError, and what it accepts survives a round trip.
func FuzzResponsesRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","input":[{"type":"message","role":"user","content":"Hello"}],"max_output_tokens":16,"stream":true}`,
		`{"input":"Hello","instructions":"Be brief."}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"}]}]}`,
		`{"input":[]}`, `{"input":7}`, `{"max_output_tokens":0,"input":"x"}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeResponsesRequest(body)
		if err != nil {
			if _, ok := errors.AsType[*requestError](err); !ok {
				t.Fatalf("error %v is not a *requestError", err)
			}
			return
		}
		if r.n != 1 || r.maxTokens == 0 || r.maxTokens < -1 || !r.chat || len(r.texts) == 0 {
			t.Fatalf("accepted a request breaking the invariants: %+v", r)
		}
		m := map[string]any{"model": r.model, "ignore_eos": r.ignoreEOS, "stream": r.stream}
		if r.maxTokens > 0 {
			m["max_output_tokens"] = r.maxTokens
		}
		items := make([]map[string]string, len(r.texts))
		for i, t := range r.texts {
			items[i] = map[string]string{"type": "message", "role": "user", "content": t}
		}
		m["input"] = items
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeResponsesRequest(b)
		if err != nil {
			t.Fatalf("re-encoded request rejected: %v", err)
		}
		if !sameRequest(r, again) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", r, again)
		}
	})
}

// FuzzResponsesHandler runs whole /v1/responses requests through the
// handler: whatever the body and fault header, it answers without
// panicking and leaves no request running.
func FuzzResponsesHandler(f *testing.F) {
	f.Add([]byte(`{"input":"hi","max_output_tokens":4,"stream":true}`), "")
	f.Add([]byte(`{"input":[{"role":"user","content":"hi"}],"max_output_tokens":3,"ignore_eos":true}`), "malformed-sse")
	f.Add([]byte(`{"input":"x","stream":true}`), "error-event")
	f.Add([]byte(`{"input":[`), "503")
	s := newTestServer(f, func(c *Config) {
		c.MaxModelLen = 64
		c.ReasoningTokens = 2
	})
	f.Fuzz(func(t *testing.T, body []byte, fault string) {
		run, w := serveOnce(t, s, "/v1/responses", string(body))
		if fault != "" {
			var fs faultSet
			if parseFaultHeader(fault, &fs) != nil || fs.stall > 0 || fs.slowHeaders > 0 {
				return
			}
			run, w = serveOnceHeader(t, s, "/v1/responses", string(body), FaultHeader, fault)
		}
		run()
		if w.n == 0 && w.status == 0 && !hijackFault(fault) {
			t.Fatalf("no response written for %q", body)
		}
		if r, q := s.adm.counts(); r != 0 || q != 0 {
			t.Fatalf("running %d waiting %d after the request", r, q)
		}
	})
}

// FuzzPoolingRequest: the embeddings and rankings decoder never panics,
// returns only *requestError, and accepts only requests with inputs (and,
// for rankings, a query).
func FuzzPoolingRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","input":["a","b"],"encoding_format":"float"}`, `{"input":"a"}`, `{"input":[]}`, `{"input":[1,2]}`,
		`{"query":"q","texts":["a"]}`, `{"query":{"text":"q"},"passages":[{"text":"a"}]}`,
		`{"queries":"q","documents":["a"]}`, `{"text_1":"q","text_2":["a"]}`, `{"query":"q","documents":[{"x":1}]}`, `[]`, ``,
		`{"input":["a","data:image/png;base64,iVBORw0KGgo="],"modality":["text","image"]}`, `{"input":["a"],"modality":"image"}`, `{"input":["a","b"],"modality":[1]}`,
	} {
		for api := range 6 {
			f.Add([]byte(seed), uint8(api))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, api uint8) {
		a := poolingAPI(api % 6)
		r, err := decodePoolingRequest(body, a)
		if err != nil {
			if _, ok := errors.AsType[*requestError](err); !ok {
				t.Fatalf("error %v is not a *requestError", err)
			}
			return
		}
		if len(r.texts) == 0 || (a != apiEmbeddings && r.query == "") {
			t.Fatalf("accepted a request without inputs: %+v", r)
		}
	})
}

// FuzzGenerateRequest: the SGLang and TGI decoder never panics, returns
// only *requestError, and what it accepts has exactly one prompt form and
// a positive output limit.
func FuzzGenerateRequest(f *testing.F) {
	for _, seed := range []string{
		`{"text":"hi","sampling_params":{"max_new_tokens":3,"ignore_eos":true},"stream":true}`, `{"input_ids":[1,2,3]}`,
		`{"inputs":"hi","parameters":{"max_new_tokens":2,"details":true}}`, `{"inputs":"x","text":"y"}`, `{"input_ids":[-1]}`,
		`{"sampling_params":{"max_new_tokens":0},"text":"a"}`, `[]`, ``,
	} {
		for api := range 3 {
			f.Add([]byte(seed), uint8(api))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		api := [...]generationAPI{apiSGLang, apiTGI, apiTGIStream}[which%3]
		r, err := decodeGenerateRequest(body, api)
		if err != nil {
			if _, ok := errors.AsType[*requestError](err); !ok {
				t.Fatalf("error %v is not a *requestError", err)
			}
			return
		}
		if r.maxTokens < 1 || r.n != 1 || r.hasIDs == (r.texts != nil) || (r.hasIDs && len(r.ids) == 0) {
			t.Fatalf("accepted a request breaking the invariants: %+v", r)
		}
		if api == apiTGIStream && (!r.tgi || !r.stream) {
			t.Fatalf("a /generate_stream request not streamed as TGI: %+v", r)
		}
	})
}

// FuzzLogLine feeds arbitrary lines to the oracle log's reader. It must
// never panic; a line it accepts, written again by the server's encoder,
// reads back the same (the reader and the writer agree on every field).
func FuzzLogLine(f *testing.F) {
	r := RequestLog{Seq: 3, ClientRequestID: "7", ResponseID: "chatcmpl-1", Endpoint: "/v1/chat/completions", Stream: true,
		Status: 200, FinishReason: "length", ReceivedNS: 10, AdmittedNS: 11, EndNS: 40, PromptTokens: 5, OutputTokens: 2,
		Events: []Event{{Kind: EventRole, StartNS: 20, TimeNS: 21, DueNS: 20}, {Kind: EventContent, StartNS: 22, TimeNS: 23, DueNS: 22},
			{Kind: EventDone, Choice: 1, StartNS: 30, TimeNS: 31}}}
	f.Add(appendLogLine(nil, &r))
	f.Add([]byte(`{"v":1,"seq":0,"events":[{"kind":"bogus"}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`{"v":1,"endpoint":"/rerank","input_tokens":[3,9,6],"query_tokens":5,"events":[]}`))
	f.Add([]byte(`{"v":1,"seq":-1}`))
	f.Add([]byte(`{"v":1,"request_id":"\u00e9\n","events":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseLogLine(b, 1)
		if err != nil {
			if _, ok := errors.AsType[*LogLineError](err); !ok {
				t.Fatalf("error %v is not a *LogLineError", err)
			}
			return
		}
		again, err := ParseLogLine(appendLogLine(nil, &got), 1)
		if err != nil {
			t.Fatalf("the server's encoding of an accepted line does not read back: %v", err)
		}
		if !slices.Equal(got.Events, again.Events) {
			t.Fatalf("events changed on a round trip: %+v → %+v", got.Events, again.Events)
		}
		if !reflect.DeepEqual(got, again) {
			// Strings that are not valid UTF-8 are written with U+FFFD,
			// as encoding/json decodes them: compare after one round.
			third, _ := ParseLogLine(appendLogLine(nil, &again), 1)
			if !reflect.DeepEqual(third, again) {
				t.Fatalf("line changed on a round trip: %+v → %+v", got, again)
			}
		}
	})
}
