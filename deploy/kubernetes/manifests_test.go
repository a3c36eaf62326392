// Package kubernetes holds wasmcp's Kubernetes manifests. Its test decodes
// every manifest strictly into the official API types, so an unknown or
// mistyped field fails here rather than at `kubectl apply`, without the
// network that schema validators such as kubeconform need. It then checks
// what matters for wasmcp: non-root, probes, limits, the arguments, and
// that the pieces (Service, HPA, volumes, Dockerfile) point at each other.
//
// That the config file in configmap.yaml and the Deployment's arguments
// are accepted by `wasmcp serve` is checked by cmd/wasmcp's tests
// (TestDeployManifestsServe), where the flag parser lives.
package kubernetes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// The port the server listens on, everywhere.
const port = 8080

// kinds maps each apiVersion/kind this directory may hold to a new value of
// its API type. Another kind fails the test until it is added here.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                     func() any { return new(appsv1.Deployment) },
	"v1/Service":                             func() any { return new(corev1.Service) },
	"v1/ConfigMap":                           func() any { return new(corev1.ConfigMap) },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
}

// document is one YAML document of a manifest file.
type document struct {
	where string // file and position, for messages
	data  []byte
}

// documents reads every YAML document of every manifest file here.
func documents(t *testing.T) []document {
	t.Helper()
	files, err := filepath.Glob("*.y*ml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found (%v)", err)
	}
	var docs []document
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for i := 1; ; i++ {
			d, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(bytes.TrimSpace(stripComments(d))) == 0 {
				continue
			}
			docs = append(docs, document{fmt.Sprintf("%s (document %d)", f, i), d})
		}
	}
	return docs
}

func stripComments(b []byte) []byte {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAll(b, nil)
}

// decode decodes a document strictly into its API type: an unknown field,
// a duplicate field or a value of the wrong type is an error.
func decode(d document) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(d.data, &tm); err != nil {
		return nil, err
	}
	newObj, ok := kinds[path.Join(tm.APIVersion, tm.Kind)]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q kind %q is not one this test knows: add it to kinds", tm.APIVersion, tm.Kind)
	}
	// As the API server decodes: YAML to JSON (a duplicate key is an
	// error), then JSON with case-sensitive field names (encoding/json
	// would take "readonly" for "readOnly") and no unknown fields.
	js, err := yaml.YAMLToJSONStrict(d.data)
	if err != nil {
		return nil, err
	}
	obj := newObj()
	strict, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(strict...); err != nil {
		return nil, err
	}
	return obj, nil
}

// manifests are the decoded objects, one of each kind.
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	hpa        *autoscalingv2.HorizontalPodAutoscaler
}

func load(t *testing.T) manifests {
	t.Helper()
	var m manifests
	for _, d := range documents(t) {
		obj, err := decode(d)
		if err != nil {
			t.Fatalf("%s: %v", d.where, err)
		}
		var dup bool
		switch o := obj.(type) {
		case *appsv1.Deployment:
			dup, m.deployment = m.deployment != nil, o
		case *corev1.Service:
			dup, m.service = m.service != nil, o
		case *corev1.ConfigMap:
			dup, m.configMap = m.configMap != nil, o
		case *autoscalingv2.HorizontalPodAutoscaler:
			dup, m.hpa = m.hpa != nil, o
		}
		if dup {
			t.Fatalf("%s: a second %T; this test expects one of each", d.where, obj)
		}
		if ns := obj.(metav1.Object).GetNamespace(); ns != "" {
			t.Errorf("%s: namespace %q: the manifests take theirs from `kubectl apply -n`", d.where, ns)
		}
	}
	if m.deployment == nil || m.service == nil || m.configMap == nil || m.hpa == nil {
		t.Fatalf("want a Deployment, a Service, a ConfigMap and a HorizontalPodAutoscaler; got %+v", m)
	}
	return m
}

func TestStrictDecodingCatchesMistakes(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 2\n", `unknown field "spec.replica"`},
		{"field in the wrong case", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  Replicas: 2\n", `unknown field "spec.Replicas"`},
		{"wrong type", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: two\n", "replicas"},
		{"duplicate field", "apiVersion: v1\nkind: Service\nspec:\n  type: ClusterIP\n  type: NodePort\n", "type"},
		{"misplaced field", "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  selector: {}\n", `unknown field "metadata.selector"`},
		{"bad quantity", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n          resources:\n            limits:\n              cpu: two cores\n", "quantities must match"},
		{"unknown kind", "apiVersion: v1\nkind: Pod\n", "add it to kinds"},
	} {
		if _, err := decode(document{tc.name, []byte(tc.doc)}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// flags reads a command line's flags (--name value or --name=value) after
// its command word.
func flags(t *testing.T, args []string) (command string, values map[string]string) {
	t.Helper()
	if len(args) == 0 {
		t.Fatal("no arguments")
	}
	values = map[string]string{}
	for i := 1; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			t.Fatalf("argument %q is not a flag (in %q)", args[i], args)
		}
		if n, v, ok := strings.Cut(name, "="); ok {
			values[n] = v
			continue
		}
		if i+1 == len(args) {
			t.Fatalf("flag --%s has no value (in %q)", name, args)
		}
		values[name] = args[i+1]
		i++
	}
	return args[0], values
}

func TestManifests(t *testing.T) {
	m := load(t)
	d := m.deployment
	pod := d.Spec.Template.Spec

	t.Run("deployment", func(t *testing.T) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			t.Errorf("replicas = %v; want 2", d.Spec.Replicas)
		}
		if d.Spec.Selector == nil || !subset(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) || len(d.Spec.Selector.MatchLabels) == 0 {
			t.Errorf("selector %v does not select the pod template's labels %v", d.Spec.Selector, d.Spec.Template.Labels)
		}
		if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
			t.Error("enableServiceLinks must be false: service links put WASMCP_* variables in the environment, where wasmcp reads its flags")
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Error("automountServiceAccountToken should be false: wasmcp does not call the API server")
		}
	})

	t.Run("non-root", func(t *testing.T) {
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Fatalf("pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", psc)
		}
		if uid := dockerfile(t).user; strconv.FormatInt(*psc.RunAsUser, 10) != uid {
			t.Errorf("runAsUser %d differs from the Dockerfile's USER %s", *psc.RunAsUser, uid)
		}
		for _, c := range allContainers(pod) {
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("container %s: no securityContext", c.Name)
			case sc.RunAsUser != nil && *sc.RunAsUser == 0, sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot:
				t.Errorf("container %s: runs as root", c.Name)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("container %s: allowPrivilegeEscalation must be false", c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("container %s: readOnlyRootFilesystem must be true", c.Name)
			case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
				t.Errorf("container %s: capabilities %+v; want drop [ALL] and nothing added", c.Name, sc.Capabilities)
			case sc.Privileged != nil && *sc.Privileged:
				t.Errorf("container %s: privileged", c.Name)
			}
		}
	})

	t.Run("resources", func(t *testing.T) {
		for _, c := range allContainers(pod) {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[r]
				lim, hasLim := c.Resources.Limits[r]
				if !hasReq || !hasLim {
					t.Errorf("container %s: %s needs a request and a limit (requests %v, limits %v)", c.Name, r, c.Resources.Requests, c.Resources.Limits)
					continue
				}
				if req.Cmp(lim) > 0 {
					t.Errorf("container %s: %s request %s is over its limit %s", c.Name, r, req.String(), lim.String())
				}
			}
		}
	})

	c := server(t, pod)
	cmd, args := flags(t, c.Args)

	t.Run("arguments", func(t *testing.T) {
		if cmd != "serve" {
			t.Errorf("command %q; want serve", cmd)
		}
		if args["http"] != fmt.Sprintf("0.0.0.0:%d", port) {
			t.Errorf("--http %q; want 0.0.0.0:%d", args["http"], port)
		}
		if args["auth-token-file"] == "" {
			t.Error("no --auth-token-file: the server must not serve the cluster without a token")
		}
		for _, f := range []string{"config", "tools", "cache-dir", "store"} {
			if args[f] == "" {
				t.Errorf("no --%s", f)
			}
		}
		if _, ok := args["watch"]; ok {
			t.Error("--watch is a boolean: give it in the config file, not as --watch VALUE")
		}
	})

	t.Run("probes", func(t *testing.T) {
		for _, p := range []struct {
			name  string
			probe *corev1.Probe
			path  string
		}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
			if p.probe == nil || p.probe.HTTPGet == nil {
				t.Errorf("no HTTP %s probe", p.name)
				continue
			}
			g := p.probe.HTTPGet
			if g.Path != p.path || containerPort(t, c, g.Port) != port || (g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP) {
				t.Errorf("%s probe %+v; want GET %s on port %d over HTTP", p.name, g, p.path, port)
			}
		}
	})

	t.Run("volumes", func(t *testing.T) {
		vols := map[string]corev1.Volume{}
		for _, v := range pod.Volumes {
			vols[v.Name] = v
		}
		// mountOf finds the volume mounted over file or directory p.
		mountOf := func(p string) (corev1.VolumeMount, corev1.Volume) {
			for _, vm := range c.VolumeMounts {
				if p == vm.MountPath || strings.HasPrefix(p, strings.TrimSuffix(vm.MountPath, "/")+"/") {
					return vm, vols[vm.Name]
				}
			}
			t.Errorf("%s is on no volume: the root filesystem is read-only", p)
			return corev1.VolumeMount{}, corev1.Volume{}
		}

		vm, v := mountOf(args["tools"])
		if v.EmptyDir == nil || !vm.ReadOnly {
			t.Errorf("--tools %s: want a read-only mount of an emptyDir, got %+v %+v", args["tools"], vm, v)
		}
		filled := false
		for _, ic := range pod.InitContainers {
			for _, m := range ic.VolumeMounts {
				filled = filled || (m.Name == vm.Name && !m.ReadOnly)
			}
		}
		if !filled {
			t.Errorf("no init container fills the tools volume %q", vm.Name)
		}

		vm, v = mountOf(args["cache-dir"])
		if v.EmptyDir == nil || vm.ReadOnly {
			t.Errorf("--cache-dir %s: want a writable emptyDir, got %+v %+v", args["cache-dir"], vm, v)
		}

		vm, v = mountOf(args["store"])
		if v.EmptyDir == nil || vm.ReadOnly {
			t.Errorf("--store %s: want a writable emptyDir, got %+v %+v", args["store"], vm, v)
		}

		// The registry's credentials, for registry-auth-file in the
		// config, are optional: a public registry needs none.
		reg, ok := vols["registry-auth"]
		if !ok || reg.Secret == nil || reg.Secret.Optional == nil || !*reg.Secret.Optional {
			t.Errorf("volume registry-auth: want an optional Secret, got %+v", reg)
		} else if m := reg.Secret.DefaultMode; m == nil || *m&0o007 != 0 {
			t.Errorf("the registry's Secret volume is readable by others (defaultMode %v)", m)
		}
		if vm, _ := mountOf("/var/run/secrets/registry/.dockerconfigjson"); vm.Name != "registry-auth" || !vm.ReadOnly {
			t.Errorf("the registry's credentials: want a read-only mount of registry-auth, got %+v", vm)
		}

		vm, v = mountOf(args["auth-token-file"])
		if v.Secret == nil || !vm.ReadOnly {
			t.Errorf("--auth-token-file %s: want a read-only Secret mount, got %+v %+v", args["auth-token-file"], vm, v)
		} else if m := v.Secret.DefaultMode; m == nil || *m&0o007 != 0 {
			t.Errorf("the token's Secret volume is readable by others (defaultMode %v)", m)
		}

		vm, v = mountOf(args["config"])
		if v.ConfigMap == nil || v.ConfigMap.Name != m.configMap.Name {
			t.Fatalf("--config %s: want a mount of ConfigMap %s, got %+v", args["config"], m.configMap.Name, v)
		}
		key := strings.TrimPrefix(args["config"], strings.TrimSuffix(vm.MountPath, "/")+"/")
		if _, ok := m.configMap.Data[key]; !ok {
			t.Errorf("--config %s: ConfigMap %s has no key %q", args["config"], m.configMap.Name, key)
		}
	})

	t.Run("config", func(t *testing.T) {
		// Its keys and values are checked against `wasmcp serve` in
		// cmd/wasmcp; here, only what ties it to this Deployment.
		var cfg map[string]any
		if err := yaml.UnmarshalStrict([]byte(m.configMap.Data["config.yaml"]), &cfg); err != nil {
			t.Fatalf("config.yaml: %v", err)
		}
		grace, err := time.ParseDuration(fmt.Sprint(cfg["shutdown-grace"]))
		if err != nil {
			t.Fatalf("config.yaml shutdown-grace: %v", err)
		}
		if pod.TerminationGracePeriodSeconds == nil || time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= grace {
			t.Errorf("terminationGracePeriodSeconds must be set and over shutdown-grace %v, or calls are killed mid-drain", grace)
		}
	})

	t.Run("service", func(t *testing.T) {
		s := m.service
		if s.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("type %q; want ClusterIP", s.Spec.Type)
		}
		if len(s.Spec.Selector) == 0 || !subset(s.Spec.Selector, d.Spec.Template.Labels) {
			t.Errorf("selector %v does not match the pods' labels %v", s.Spec.Selector, d.Spec.Template.Labels)
		}
		if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != port || containerPort(t, c, s.Spec.Ports[0].TargetPort) != port {
			t.Errorf("ports %+v; want port %d to the container's %d", s.Spec.Ports, port, port)
		}
		if s.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
			t.Errorf("sessionAffinity %q; 2025-11-25 sessions live in one replica and need ClientIP", s.Spec.SessionAffinity)
		}
	})

	t.Run("hpa", func(t *testing.T) {
		h := m.hpa
		ref := h.Spec.ScaleTargetRef
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
			t.Errorf("scaleTargetRef %+v; want apps/v1 Deployment %s", ref, d.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			t.Errorf("minReplicas %v, maxReplicas %d; want 2 ≤ min ≤ max", h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		cpu := false
		for _, mt := range h.Spec.Metrics {
			cpu = cpu || (mt.Type == autoscalingv2.ResourceMetricSourceType && mt.Resource != nil && mt.Resource.Name == corev1.ResourceCPU)
		}
		if !cpu {
			t.Errorf("metrics %+v; want CPU", h.Spec.Metrics)
		}
	})

	t.Run("dockerfile", func(t *testing.T) {
		df := dockerfile(t)
		cmd, dargs := flags(t, df.cmd)
		if cmd != "serve" || dargs["http"] != fmt.Sprintf("0.0.0.0:%d", port) {
			t.Errorf("Dockerfile CMD %q; want serve --http 0.0.0.0:%d", df.cmd, port)
		}
		if !slices.Equal(df.expose, []string{strconv.Itoa(port)}) {
			t.Errorf("Dockerfile EXPOSE %q; want %d", df.expose, port)
		}
		for _, f := range []string{"tools", "cache-dir"} {
			if dargs[f] != args[f] {
				t.Errorf("--%s is %q in the Dockerfile and %q in the Deployment", f, dargs[f], args[f])
			}
			if !slices.Contains(df.volumes, dargs[f]) {
				t.Errorf("--%s %s is not a VOLUME of the Dockerfile (%q)", f, dargs[f], df.volumes)
			}
		}
	})
}

// server is the pod's wasmcp container.
func server(t *testing.T, pod corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	return pod.Containers[0]
}

func allContainers(pod corev1.PodSpec) []corev1.Container {
	return append(slices.Clone(pod.InitContainers), pod.Containers...)
}

// containerPort resolves a port by number or by the container's port name.
func containerPort(t *testing.T, c corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	t.Errorf("container %s has no port named %q", c.Name, p.StrVal)
	return 0
}

func subset(small, big map[string]string) bool {
	for k, v := range small {
		if big[k] != v {
			return false
		}
	}
	return true
}

// dockerfileFacts is what the tests compare in the repository's Dockerfile,
// from its final stage.
type dockerfileFacts struct {
	user    string
	cmd     []string
	expose  []string
	volumes []string
}

func dockerfile(t *testing.T) dockerfileFacts {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var f dockerfileFacts
	for _, line := range strings.Split(string(b), "\n") {
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(word) {
		case "FROM": // a new stage: only the last one counts
			f = dockerfileFacts{}
		case "USER":
			f.user, _, _ = strings.Cut(rest, ":")
		case "CMD":
			if err := json.Unmarshal([]byte(rest), &f.cmd); err != nil {
				t.Fatalf("Dockerfile CMD %s: want the JSON (exec) form: %v", rest, err)
			}
		case "EXPOSE":
			f.expose = strings.Fields(rest)
		case "VOLUME":
			if err := json.Unmarshal([]byte(rest), &f.volumes); err != nil {
				f.volumes = strings.Fields(rest)
			}
		}
	}
	if f.user == "" || f.user == "0" || f.user == "root" {
		t.Errorf("Dockerfile's final stage runs as %q; want a non-root numeric USER", f.user)
	}
	if _, err := strconv.Atoi(f.user); err != nil {
		t.Errorf("Dockerfile USER %q is not numeric: runAsNonRoot cannot check a name", f.user)
	}
	return f
}
