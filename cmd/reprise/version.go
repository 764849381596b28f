package main

import "github.com/reprise-bench/reprise"

// versionString reports the module version, commit and Go version.
func versionString() string { return reprise.Version() }
