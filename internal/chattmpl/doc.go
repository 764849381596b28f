// Package chattmpl renders a model's chat template, the Jinja program a
// tokenizer_config.json (or a GGUF file) carries that turns chat messages
// into the text the model reads, and counts the tokens that text has as a
// server would: every added token (<|im_start|>, <|eot_id|>, …) is one
// token, the text between them goes through the tokenizer.
//
// reprise uses it for --apply-chat-template: the synthesized prompt is
// shortened by the template's tokens ([Template.Overhead]) so that the
// server's usage.prompt_tokens equals the asked input length.
//
// Templates are rendered with github.com/ardanlabs/jinja, which keeps
// Hugging Face's settings (trim_blocks and lstrip_blocks on) and has the
// helpers transformers adds to Jinja (raise_exception, strftime_now).
package chattmpl
