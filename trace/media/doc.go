// Package media makes, reads and checks the images, audio clips and videos
// that multimodal requests carry (design 0022).
//
// It has three jobs:
//
//   - Probe checks bytes from a dataset (a file, a table cell, a data URL)
//     before a run: the format, an image's size from its header alone
//     (image.DecodeConfig) so that a decompression bomb is refused by its
//     size before any pixel is decoded, then a full decode so that a
//     corrupt file fails here and not at the server; a WAV or MP3 clip's
//     length from its headers.
//   - Synthesize makes seeded images (PNG, JPEG) and audio (WAV in Go; MP3
//     and video through ffmpeg): the same seed gives the same bytes.
//   - AppendChatPart and AppendResponsesPart render an [Item] as an OpenAI
//     content part: image_url, input_audio, video_url; input_image,
//     input_file.
//
// Items are immutable once made and safe to share between goroutines;
// [Cache] encodes each distinct synthetic item once.
package media
