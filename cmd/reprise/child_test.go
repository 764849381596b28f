package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"testing"
)

// cliChildEnv holds the JSON argument list of a CLI run in a child process:
// the test binary re-executed, calling run as main does, so a test can kill
// it or limit it without touching the test process.
const cliChildEnv = "REPRISE_CLI_CHILD"

// cliChildArgv, as cliChildEnv's value, makes the child take the CLI's
// arguments from its command line after "--" (cliChildCommand).
const cliChildArgv = "argv"

// TestCLIChild is the child process of the tests that start one with
// cliChild. It does nothing in a normal run.
func TestCLIChild(t *testing.T) {
	spec := os.Getenv(cliChildEnv)
	if spec == "" {
		t.Skip("child process of tests that kill or limit a replay")
	}
	var args []string
	if spec == cliChildArgv {
		args = flag.Args() // after -- on the command line
	} else if err := json.Unmarshal([]byte(spec), &args); err != nil {
		t.Fatal(err)
	}
	if setup := childSetup[os.Getenv(cliChildEnv+"_SETUP")]; setup != nil {
		setup(t)
	}
	// As main runs it: the first SIGINT or SIGTERM stops a replay, a server
	// or a recording gracefully.
	os.Exit(runMain(append([]string{"reprise"}, args...), os.Stdin, os.Stdout, os.Stderr))
}

// childSetup are things a child does before it runs the CLI, by name.
var childSetup = map[string]func(t *testing.T){}

// cliChild returns the command that runs the CLI with args in a child
// process, after childSetup[setup] ("" for none).
func cliChild(t *testing.T, setup string, args ...string) *exec.Cmd {
	t.Helper()
	spec, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), cliChildEnv+"="+string(spec), cliChildEnv+"_SETUP="+setup)
	return cmd
}

// cliChildCommand returns the command line prefix that runs the CLI in a
// child process (the test binary), for code that appends its own
// arguments, such as the selftest's mock server. The test's environment
// must hold cliChildEnv=cliChildArgv.
func cliChildCommand(args ...string) []string {
	return append([]string{os.Args[0], "-test.run=^TestCLIChild$", "-test.count=1", "--"}, args...)
}
