// Package mediagen is the native endpoint adapter for the OpenAI-shaped
// generation endpoints that make media rather than text (design 0023):
// image generation (/v1/images/generations, whole or streamed as partial
// images), video generation (/v1/videos, an asynchronous job that the
// engine polls through [adapter.Job]), transcription
// (/v1/audio/transcriptions, a multipart upload of an audio clip, whole
// or streamed as transcript.text.delta events) and text to speech
// (/v1/audio/speech, the audio bytes streamed as they are made).
//
// An adapter counts what each response carried in [adapter.Final].Media:
// images and their decoded bytes (base64 lengths are computed, never
// decoded), the audio bytes and seconds of speech (from the WAV header,
// or 24 kHz 16-bit mono for raw PCM), a video's downloaded bytes; and the
// event that carried the first media, so the engine can time the first
// partial image or the first audio byte. The transcription clip is given
// once per run ([Adapter].Clip) and shared read-only by every request.
//
// Responses are small JSON objects or bodies parsed with encoding/json;
// these endpoints send a few events per second at most, so nothing here
// is on a per-token hot path.
package mediagen
