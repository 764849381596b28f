package reprise

import "testing"

func TestSecretKey(t *testing.T) {
	for k, want := range map[string]bool{
		"api_key": true, "X-API-KEY": true, "apiKey": true, "hf_token": true, "access_token": true, "Secret_Token": true,
		"password": true, "client_secret": true, "Authorization": true, "key": true, "auth": true, "credentials": true,
		"max_tokens": false, "max_completion_tokens": false, "stop_token_ids": false, "temperature": false, "top_k": false,
		"prompt_cache_key": false, "author": false, "monkey": false, "tokens": false,
	} {
		if got := secretKey(k); got != want {
			t.Errorf("secretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestExtraBodyForFiles(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{`{"temperature":0.70,"n":1e2}`, `{"n":1e2,"temperature":0.70}`},
		{`{"api_key":"s","nested":{"list":[{"token":"s"},{"max_tokens":5}]}}`,
			`{"api_key":"<redacted>","nested":{"list":[{"token":"<redacted>"},{"max_tokens":5}]}}`},
		{`{"auth":{"user":"u","pass":"p"}}`, `{"auth":"<redacted>"}`},
		{`{"html":"<b>"}`, `{"html":"<b>"}`},
		{`not json sk-123`, `<redacted>`},
	}
	for _, tt := range tests {
		if got := extraBodyForFiles(tt.in); got != tt.want {
			t.Errorf("extraBodyForFiles(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestURLForFiles(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000"},
		{"http://u:p@h:1/v1", "http://h:1/v1"},
		{"https://h/metrics?token=x#f", "https://h/metrics"},
		{"http://h/a%2Fb", "http://h/a%2Fb"},
		{"http://[::1", redacted},
	}
	for _, tt := range tests {
		if got := urlForFiles(tt.in); got != tt.want {
			t.Errorf("urlForFiles(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
