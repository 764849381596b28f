package wasm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
	"github.com/reprise-bench/reprise/wasm/scaffold"
)

// guestPackages are the Debian packages each rebuild test needs (the
// AssemblyScript compiler comes from npm ci in sdk-wasm/assemblyscript).
// TestNeedToolsListsGuestPackages checks that scripts/need-tools.sh installs
// every one of them, so the two lists cannot drift apart.
var guestPackages = map[string][]string{
	// scripts/wasm.sh --check rebuilds the shipped C, Rust, AssemblyScript
	// and WAT modules and runs wasm-opt over them.
	"TestWasmDrift": {"clang", "lld", "wasi-libc", "libclang-rt-dev-wasm32", "binaryen", "wabt", "rustc", "libstd-rust-dev-wasm32"},
	// The C and Rust templates built with their generated Makefiles.
	"TestTemplates": {"clang", "lld", "wasi-libc", "libclang-rt-dev-wasm32", "rustc", "libstd-rust-dev-wasm32"},
	"TestRustBuild": {"rustc", "libstd-rust-dev-wasm32"},
}

// needToolchains skips (loudly) unless every guest toolchain is installed,
// naming what is missing as scripts/need-tools.sh --missing-guests finds it
// (a Debian package, or asc): the script's probes are the one check. They
// are Debian packages and npm modules that a machine may lack; the
// committed .wasm files keep every other test independent of them, and
// under CI make test refuses to start without them.
func needToolchains(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("SKIP: -short: not rebuilding guests")
	}
	var missing []string
	for _, tool := range []string{"go", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	cmd := exec.Command("scripts/need-tools.sh", "--missing-guests")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/need-tools.sh --missing-guests: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			missing = append(missing, line)
		}
	}
	if len(missing) > 0 {
		t.Skipf("SKIP: guest toolchains missing: %s (as root, make test installs them; see sdk-wasm/README.md)", strings.Join(missing, ", "))
	}
}

// TestNeedToolsListsGuestPackages checks that scripts/need-tools.sh
// installs every Debian package a rebuild test needs, and installs nothing
// that no test needs.
func TestNeedToolsListsGuestPackages(t *testing.T) {
	cmd := exec.Command("scripts/need-tools.sh", "--guest-packages")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/need-tools.sh --guest-packages: %v", err)
	}
	installs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		installs[p] = true
	}
	needed := map[string]bool{}
	for test, pkgs := range guestPackages {
		for _, p := range pkgs {
			needed[p] = true
			if !installs[p] {
				t.Errorf("%s needs Debian package %s, which scripts/need-tools.sh does not install", test, p)
			}
		}
	}
	for p := range installs {
		if !needed[p] {
			t.Errorf("scripts/need-tools.sh installs %s, which no rebuild test needs (guestPackages)", p)
		}
	}
}

// TestWasmDrift rebuilds every committed module from source
// (scripts/wasm.sh --check) and fails on any difference.
func TestWasmDrift(t *testing.T) {
	needToolchains(t)
	cmd := exec.Command("scripts/wasm.sh", "--check")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/wasm.sh --check: %v\n%s", err, out)
	}
}

// TestTemplates scaffolds an adapter in every SDK language (reprise
// adapters new), builds it with its generated Makefile, and checks that
// all four produce the same records on the sample stream: the SDKs agree.
func TestTemplates(t *testing.T) {
	needToolchains(t)
	asc, _ := filepath.Abs("../sdk-wasm/assemblyscript/node_modules")
	var first []byte
	for _, lang := range scaffold.Languages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tpl")
			if _, err := scaffold.Write(dir, lang, "tpl-"+lang[:1]); err != nil {
				t.Fatal(err)
			}
			if lang == "assemblyscript" {
				if err := os.Symlink(asc, filepath.Join(dir, "node_modules")); err != nil {
					t.Fatal(err)
				}
			}
			mod := "tpl-" + lang[:1] + ".wasm"
			cmd := exec.Command("make", mod)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "npm_config_offline=true")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("make: %v\n%s", err, out)
			}
			a, err := wasm.Load(context.Background(), filepath.Join(dir, mod), wasm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(context.Background())
			in, err := a.Instantiate(&adapter.Config{Model: "m", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			rec, err := wasm.ReadRecording(filepath.Join(dir, "sample.http"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := wasm.Classify(in, 1, rec, adapter.FramingSSE, 2)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			wasm.WriteClassified(&buf, c)
			var r adapter.HTTPRequest
			if err := in.Build(&adapter.BuildInput{Flags: adapter.BuildStream, MaxTokens: 9}, &r); err != nil {
				t.Fatal(err)
			}
			buf.WriteString(r.Method.String() + " " + r.Path + "\n" + string(r.Body) + "\n")
			if first == nil {
				first = buf.Bytes()
				t.Logf("%s output:\n%s", lang, first)
			} else if !bytes.Equal(first, buf.Bytes()) {
				t.Errorf("%s template differs from the go template:\n%s\nwant:\n%s", lang, buf.Bytes(), first)
			}
		})
	}
}

// TestRustcWasmTarget checks how sdk-wasm/rust/rustc-wasm.sh picks a
// toolchain and target, with stand-in rustc scripts that answer --version
// and --print like rustup's rustc 1.95 (wasm32-wasip1 only), Debian
// bookworm's rustc 1.63 (wasm32-wasi only) and a rustc that knows both.
func TestRustcWasmTarget(t *testing.T) {
	script, err := filepath.Abs("../sdk-wasm/rust/rustc-wasm.sh")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	// rustc makes a stand-in rustc in dir: version, known targets, the
	// sysroot, and the targets whose std is installed there.
	rustc := func(dir, version, sysroot string, targets, std []string) string {
		t.Helper()
		d := filepath.Join(root, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range std {
			if err := os.MkdirAll(filepath.Join(sysroot, "lib", "rustlib", s, "lib"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		sh := "#!/bin/sh\ncase \"$1 $2\" in\n" +
			"'--version ') echo '" + version + "' ;;\n" +
			"'--print target-list') echo x86_64-unknown-linux-gnu; echo " + strings.Join(targets, "; echo ") + " ;;\n" +
			"'--print sysroot') echo '" + sysroot + "' ;;\n" +
			"*) for a in \"$@\"; do echo \"$a\"; done > \"${0%/*}/args\" ;;\nesac\n"
		if err := os.WriteFile(filepath.Join(d, "rustc"), []byte(sh), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	rustup := filepath.Join(root, "home", ".rustup", "toolchains", "stable")
	newer := rustc("rustup", "rustc 1.95.0 (59807616e 2026-04-14)", rustup, []string{"wasm32-wasip1", "wasm32-wasip2"}, nil)
	newStd := rustc("rustup-std", "rustc 1.95.0 (59807616e 2026-04-14)", rustup+"-std", []string{"wasm32-wasip1", "wasm32-wasip2"}, []string{"wasm32-wasip1"})
	old := rustc("debian", "rustc 1.63.0", "/usr/wasmfix-no-such-sysroot", []string{"wasm32-wasi"}, nil)
	oldStd := rustc("debian-std", "rustc 1.63.0", filepath.Join(root, "usr-std"), []string{"wasm32-wasi"}, []string{"wasm32-wasi"})
	both := rustc("both", "rustc 1.80.1", filepath.Join(root, "both"), []string{"wasm32-wasi", "wasm32-wasip1"}, []string{"wasm32-wasi", "wasm32-wasip1"})
	bothOld := rustc("both-old-std", "rustc 1.80.1", filepath.Join(root, "both-old"), []string{"wasm32-wasi", "wasm32-wasip1"}, []string{"wasm32-wasi"})
	for _, tt := range []struct {
		name   string
		path   []string
		rustc  string // $RUSTC
		want   string // stdout of --print: rustc, version, target
		failed string // in stderr, exit 3
	}{
		{name: "rustup 1.95 with the wasip1 std", path: []string{newStd}, want: newStd + "/rustc\trustc 1.95.0 (59807616e 2026-04-14)\twasm32-wasip1"},
		{name: "Debian 1.63 with the wasi std", path: []string{oldStd}, want: oldStd + "/rustc\trustc 1.63.0\twasm32-wasi"},
		{name: "both targets: wasip1 first", path: []string{both}, want: both + "/rustc\trustc 1.80.1\twasm32-wasip1"},
		{name: "both targets, only the wasi std", path: []string{bothOld}, want: bothOld + "/rustc\trustc 1.80.1\twasm32-wasi"},
		// rustup's rustc comes first on PATH but has no WASI std: Debian's serves.
		{name: "first rustc on PATH lacks the std", path: []string{newer, oldStd}, want: oldStd + "/rustc\trustc 1.63.0\twasm32-wasi"},
		{name: "RUSTC wins", path: []string{newStd}, rustc: oldStd + "/rustc", want: oldStd + "/rustc\trustc 1.63.0\twasm32-wasi"},
		{name: "RUSTC without std", path: []string{oldStd}, rustc: newer + "/rustc",
			failed: newer + "/rustc (rustc 1.95.0 (59807616e 2026-04-14)): the wasm32-wasip1 standard library is not installed (" + rustup + "/lib/rustlib/wasm32-wasip1); rustup target add wasm32-wasip1"},
		{name: "Debian without std", path: []string{old},
			failed: old + "/rustc (rustc 1.63.0): the wasm32-wasi standard library is not installed (/usr/wasmfix-no-such-sysroot/lib/rustlib/wasm32-wasi); apt-get install libstd-rust-dev-wasm32 (Debian)"},
		{name: "no rustc", path: []string{filepath.Join(root, "empty")}, failed: "no rustc on PATH and RUSTC is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", script, "--print")
			cmd.Env = []string{"PATH=" + strings.Join(tt.path, ":")}
			if tt.rustc != "" {
				cmd.Env = append(cmd.Env, "RUSTC="+tt.rustc)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tt.failed != "" {
				if cmd.ProcessState.ExitCode() != 3 || !strings.Contains(stderr.String(), tt.failed) {
					t.Fatalf("exit %v, stderr:\n%s\nwant exit 3 and %q", err, stderr.String(), tt.failed)
				}
				if !strings.HasPrefix(stderr.String(), "rustc-wasm.sh: no Rust toolchain can build a WASI module:") {
					t.Errorf("stderr %q lacks the headline", stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			if got := strings.TrimSpace(stdout.String()); got != tt.want {
				t.Errorf("--print = %q, want %q", got, tt.want)
			}
		})
	}
	// A build passes the chosen target and makes a reactor.
	cmd := exec.Command("/bin/sh", script, "out.wasm", "src/main.rs")
	cmd.Env = []string{"PATH=" + newer + ":" + both}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	args, err := os.ReadFile(filepath.Join(both, "args"))
	if err != nil {
		t.Fatal(err)
	}
	want := "-Z\nwasi-exec-model=reactor\n--edition\n2021\n--target\nwasm32-wasip1\n--crate-type\nbin\n-C\nopt-level=3\n-C\nstrip=symbols\n-o\nout.wasm\nsrc/main.rs\n"
	if string(args) != want {
		t.Errorf("rustc got arguments:\n%s\nwant:\n%s", args, want)
	}
}

// rustToolchain returns the rustc and target sdk-wasm/rust/rustc-wasm.sh
// picks ("RUSTC\tVERSION\tTARGET"), false when none can build.
func rustToolchain(t *testing.T) (string, bool) {
	t.Helper()
	out, err := exec.Command("/bin/sh", "../sdk-wasm/rust/rustc-wasm.sh", "--print").Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// TestRustBuild builds the shipped Rust adapter from source with the
// toolchain rustc-wasm.sh picks and checks the module against the
// adapter's golden files; built by the rustc the committed module comes
// from (Debian's 1.63), it must also be byte-identical.
func TestRustBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: -short: not building the Rust guest")
	}
	tc, ok := rustToolchain(t)
	if !ok {
		t.Skip("SKIP: no rustc with a WASI std (sh sdk-wasm/rust/rustc-wasm.sh --print says what to install)")
	}
	t.Logf("toolchain: %s", tc)
	out := filepath.Join(t.TempDir(), "anthropic-messages.wasm")
	cmd := exec.Command("/bin/sh", "../../../sdk-wasm/rust/rustc-wasm.sh", out, "main.rs")
	cmd.Dir = filepath.Join("adapters", "anthropic-messages")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tc, "\trustc 1.63.0\t") {
		committed, err := os.ReadFile(filepath.Join("adapters", "anthropic-messages.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(built, committed) {
			t.Errorf("rebuilt with rustc 1.63: %d bytes, differs from the committed %d-byte module", len(built), len(committed))
		}
	}
	a, err := wasm.LoadBytes(context.Background(), "rebuilt anthropic-messages", built, wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	in, err := a.Instantiate(&adapter.Config{Model: "test-model", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	recs, _ := filepath.Glob(filepath.Join("testdata", "recordings", "anthropic-*.http"))
	if len(recs) == 0 {
		t.Fatal("no anthropic recordings")
	}
	for _, f := range recs {
		rec, err := wasm.ReadRecording(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := wasm.Classify(in, 7, rec, a.Info().Framing, 0)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var buf bytes.Buffer
		if err := wasm.WriteClassified(&buf, c); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "TestShippedGolden", "anthropic-messages", strings.TrimSuffix(filepath.Base(f), ".http")+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, buf.Bytes()) {
			t.Errorf("%s: the rebuilt module's output differs from the golden file:\n%s", f, buf.Bytes())
		}
	}
}
