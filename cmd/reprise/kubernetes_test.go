package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/replay"
)

// kubeDir is the Kubernetes deployment this test checks.
const kubeDir = "../../deploy/kubernetes"

// kubeStart is the ConfigMap the README has users make before each run,
// with the shards' common start instant (as `kubectl create configmap
// reprise-start --from-literal=REPRISE_START_AT=…` makes it).
var kubeStart = map[string]string{"REPRISE_START_AT": "2026-11-25T18:00:00Z"}

// kustomization is the part of a kustomization.yaml the deployment
// uses; decoding it strictly rejects any other field.
type kustomization struct {
	APIVersion       string   `json:"apiVersion"`
	Kind             string   `json:"kind"`
	Resources        []string `json:"resources"`
	GeneratorOptions struct {
		DisableNameSuffixHash bool `json:"disableNameSuffixHash"`
	} `json:"generatorOptions"`
	ConfigMapGenerator []struct {
		Name     string   `json:"name"`
		Files    []string `json:"files"`
		Literals []string `json:"literals"`
	} `json:"configMapGenerator"`
}

// strict decodes a YAML file into v, failing on unknown fields (a typo in
// a manifest is an error, not a field Kubernetes would drop).
func strict(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestKubernetesDeployment decodes every manifest of deploy/kubernetes
// strictly into the Kubernetes API types, checks that they fit together
// (an Indexed Job of N shards, N shard directories merged, the ConfigMaps
// and the volume they name), and parses each shard's and the merge's
// command line with reprise's own flags, in each pod's environment,
// without running anything.
func TestKubernetesDeployment(t *testing.T) {
	// The decoder is strict: a misspelt field fails.
	var typo batchv1.Job
	if err := yaml.UnmarshalStrict([]byte("kind: Job\nspec:\n  completionsMode: Indexed\n"), &typo); err == nil {
		t.Fatal("a misspelt field decoded without an error")
	}
	var k kustomization
	strict(t, filepath.Join(kubeDir, "kustomization.yaml"), &k)
	if k.Kind != "Kustomization" || !k.GeneratorOptions.DisableNameSuffixHash {
		t.Errorf("kustomization: kind %q, disableNameSuffixHash %v", k.Kind, k.GeneratorOptions.DisableNameSuffixHash)
	}
	configMaps := map[string]map[string]string{} // name → data (file keys with "")
	for _, g := range k.ConfigMapGenerator {
		data := map[string]string{}
		for _, f := range g.Files {
			if _, err := os.Stat(filepath.Join(kubeDir, f)); err != nil {
				t.Errorf("configMapGenerator %s: %v", g.Name, err)
			}
			data[filepath.Base(f)] = ""
		}
		for _, l := range g.Literals {
			key, val, _ := strings.Cut(l, "=")
			data[key] = val
		}
		configMaps[g.Name] = data
	}
	if configMaps["reprise-start"] != nil {
		t.Errorf("the kustomization makes reprise-start: the start instant must be made with each run")
	}
	configMaps["reprise-start"] = kubeStart
	var shards, merge *batchv1.Job
	var pvcs []string
	for _, r := range k.Resources {
		path := filepath.Join(kubeDir, r)
		var meta struct {
			Kind string `json:"kind"`
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch meta.Kind {
		case "Job":
			var j batchv1.Job
			strict(t, path, &j)
			if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
				shards = &j
			} else {
				merge = &j
			}
		case "PersistentVolumeClaim":
			var p corev1.PersistentVolumeClaim
			strict(t, path, &p)
			pvcs = append(pvcs, p.Name)
		default:
			t.Fatalf("%s: kind %q is not expected here", path, meta.Kind)
		}
	}
	if shards == nil || merge == nil {
		t.Fatalf("want an Indexed Job of shards and a merge Job")
	}
	n := int(*shards.Spec.Completions)
	if n < 2 || shards.Spec.Parallelism == nil || int(*shards.Spec.Parallelism) != n {
		t.Fatalf("shards: completions %d, parallelism %v: every shard must run at once", n, shards.Spec.Parallelism)
	}
	for _, j := range []*batchv1.Job{shards, merge} {
		ps := j.Spec.Template.Spec
		if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			t.Errorf("%s: must run as a non-root user", j.Name)
		}
		for _, v := range ps.Volumes {
			switch {
			case v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil:
				t.Errorf("%s: volume %s names ConfigMap %s, which the kustomization does not make", j.Name, v.Name, v.ConfigMap.Name)
			case v.PersistentVolumeClaim != nil && !slices.Contains(pvcs, v.PersistentVolumeClaim.ClaimName):
				t.Errorf("%s: volume %s names claim %s, which is not a resource", j.Name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		if c := ps.Containers[0]; c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("%s: no CPU or memory request", j.Name)
		}
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil || !strings.Contains(string(dockerfile), fmt.Sprintf("USER %d", *shards.Spec.Template.Spec.SecurityContext.RunAsUser)) ||
		!strings.Contains(string(dockerfile), "CGO_ENABLED=0") {
		t.Errorf("Dockerfile (%v) must build a static binary and run as the pods' user", err)
	}

	// Each shard's command line, in its pod's environment.
	c := shards.Spec.Template.Spec.Containers[0]
	var outs []string
	for i := range n {
		env := podEnv(t, c, configMaps, i)
		args := expand(c.Args, env)
		for k, v := range env {
			t.Setenv(k, v)
		}
		o := parseReplay(t, args)
		if want := (replay.Shard{Index: i, Count: n}); o.Replay.Shard != want {
			t.Errorf("pod %d: shard %v, want %v", i, o.Replay.Shard, want)
		}
		if o.Replay.StartAt.Format(time.RFC3339) != kubeStart["REPRISE_START_AT"] || o.Model == "" || o.URL == reprise.DefaultURL {
			t.Errorf("pod %d: start-at %v, model %q, url %q: the run's settings are not set", i, o.Replay.StartAt, o.Model, o.URL)
		}
		if err := o.Replay.Validate(); err != nil {
			t.Errorf("pod %d: %v", i, err)
		}
		if !mounted(c, o.Trace.Path, "trace.jsonl") || !mounted(c, o.Output.Dir, "") {
			t.Errorf("pod %d: trace %s or --out %s is not on a mounted volume", i, o.Trace.Path, o.Output.Dir)
		}
		outs = append(outs, o.Output.Dir)
		checkScrape(t, shards, o)
		for k := range env {
			os.Unsetenv(k)
		}
	}
	if len(slices.Compact(slices.Clone(outs))) != n {
		t.Errorf("shards write to %v: want one directory each", outs)
	}

	// The merge's command line names exactly those directories.
	mc := merge.Spec.Template.Spec.Containers[0]
	var got reprise.MergeOptions
	root := newRoot(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, abort: context.Background()})
	for _, sub := range root.Commands {
		if sub.Name == "merge" {
			sub.Action = func(_ context.Context, cmd *cli.Command) error {
				got = reprise.MergeOptions{Dirs: cmd.Args().Slice(), Out: cmd.String("out"), Wait: cmd.Duration("wait")}
				return nil
			}
		}
	}
	if err := root.Run(context.Background(), append([]string{"reprise"}, mc.Args...)); err != nil {
		t.Fatalf("merge args %q: %v", mc.Args, err)
	}
	if !slices.Equal(got.Dirs, outs) || got.Out == "" || slices.Contains(outs, got.Out) || got.Wait <= 0 || !mounted(mc, got.Out, "") {
		t.Errorf("merge of %v into %s (wait %v); the shards write %v", got.Dirs, got.Out, got.Wait, outs)
	}
}

// podMonitor is the part of a Prometheus Operator PodMonitor that
// podmonitor.yaml uses; decoding it strictly rejects any other field.
type podMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		PodMetricsEndpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// checkScrape checks that a shard's pod is scraped where it serves its
// metrics (o, parsed from its command line and environment): the
// prometheus.io annotations and podmonitor.yaml name the container port
// of --metrics-addr, and the shard lingers for a scrape.
func checkScrape(t *testing.T, shards *batchv1.Job, o reprise.Options) {
	t.Helper()
	tmpl := shards.Spec.Template
	_, port, err := net.SplitHostPort(o.Telemetry.MetricsAddr)
	if err != nil {
		t.Fatalf("shards: --metrics-addr %q: %v", o.Telemetry.MetricsAddr, err)
	}
	a := tmpl.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != port || a["prometheus.io/path"] != livemetrics.Path {
		t.Errorf("shards: annotations %v do not scrape --metrics-addr %s at %s", a, o.Telemetry.MetricsAddr, livemetrics.Path)
	}
	named := ""
	for _, p := range tmpl.Spec.Containers[0].Ports {
		if strconv.Itoa(int(p.ContainerPort)) == port {
			named = p.Name
		}
	}
	if named == "" {
		t.Errorf("shards: no container port %s (--metrics-addr)", port)
	}
	if o.Telemetry.MetricsLinger <= 0 {
		t.Errorf("shards: --metrics-linger %v: a shard would end before its last scrape", o.Telemetry.MetricsLinger)
	}
	var pm podMonitor
	strict(t, filepath.Join(kubeDir, "podmonitor.yaml"), &pm)
	if pm.Kind != "PodMonitor" || pm.APIVersion != "monitoring.coreos.com/v1" || len(pm.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("podmonitor.yaml: kind %q, apiVersion %q, selector %v", pm.Kind, pm.APIVersion, pm.Spec.Selector.MatchLabels)
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		if tmpl.Labels[k] != v {
			t.Errorf("podmonitor.yaml selects %s=%s; the shards' pods are labelled %v", k, v, tmpl.Labels)
		}
	}
	if eps := pm.Spec.PodMetricsEndpoints; len(eps) != 1 || eps[0].Port != named || eps[0].Path != livemetrics.Path {
		t.Errorf("podmonitor.yaml endpoints %+v: want port %q, path %s", eps, named, livemetrics.Path)
	} else if d, err := time.ParseDuration(eps[0].Interval); err != nil || d >= o.Telemetry.MetricsLinger {
		t.Errorf("podmonitor.yaml interval %q (%v): want one shorter than the shards' linger %v", eps[0].Interval, err, o.Telemetry.MetricsLinger)
	}
}

// podEnv is container c's environment in pod i of the Indexed Job:
// its ConfigMaps' keys, its own variables, and the completion index.
func podEnv(t *testing.T, c corev1.Container, configMaps map[string]map[string]string, i int) map[string]string {
	t.Helper()
	env := map[string]string{flagmap.ShardIndexEnv: fmt.Sprint(i)}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil || configMaps[from.ConfigMapRef.Name] == nil {
			t.Fatalf("envFrom %+v: not a ConfigMap of the kustomization", from)
		}
		for k, v := range configMaps[from.ConfigMapRef.Name] {
			env[k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']":
			env[e.Name] = fmt.Sprint(i)
		default:
			t.Fatalf("env %s: a source this test cannot resolve", e.Name)
		}
	}
	return env
}

// expand replaces $(VAR) in args as Kubernetes does.
func expand(args []string, env map[string]string) []string {
	re := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = re.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}

// parseReplay parses a replay command line with the replay command's
// flags, environment variables included, into Options, as the command
// would before it runs; it sends nothing.
func parseReplay(t *testing.T, args []string) reprise.Options {
	t.Helper()
	var o reprise.Options
	root := newRoot(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, abort: context.Background()})
	for _, sub := range root.Commands {
		if sub.Name != "replay" {
			continue
		}
		sub.Action = func(_ context.Context, cmd *cli.Command) error {
			rc, err := flagmap.Timing(cmd)
			if err != nil {
				return err
			}
			tc, err := flagmap.Telemetry(cmd)
			if err != nil {
				return err
			}
			o = replayOptions(cmd)
			o.Replay, o.Telemetry = rc, tc
			if a := cmd.Args().Slice(); len(a) == 1 {
				o.Trace.Path = a[0]
			} else {
				return fmt.Errorf("want one TRACE, got %q", a)
			}
			return nil
		}
	}
	if err := root.Run(context.Background(), append([]string{"reprise"}, args...)); err != nil {
		t.Fatalf("replay args %q: %v", args, err)
	}
	return o
}

// mounted reports whether path lies under a volume mount of c (and, when
// file is not empty, ends in it).
func mounted(c corev1.Container, path, file string) bool {
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(path, m.MountPath+"/") && (file == "" || filepath.Base(path) == file) {
			return true
		}
	}
	return false
}
