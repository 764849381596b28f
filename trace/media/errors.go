package media

import "errors"

// The errors exposed.
var (
	// ErrFormat, ErrCorrupt and ErrTooBig are the errors of Probe, of
	// the readers it uses (ParseWAV, the MP4 and WebM track readers) and,
	// for a format they cannot make, of the Synth functions, wrapped with
	// detail.
	ErrFormat  = errors.New("unsupported format")
	ErrCorrupt = errors.New("corrupt")
	ErrTooBig  = errors.New("too large")

	// ErrNoFFmpeg is returned when MP3 audio or a video is asked for and no
	// ffmpeg binary is on $PATH.
	ErrNoFFmpeg = errors.New("ffmpeg not found on $PATH: synthetic MP3 audio and video are made with ffmpeg; install it (Debian: apt-get install ffmpeg) or ask for --audio-format wav")
)
