// Tests of what deploy/ ships: the Helm chart rendered with the pinned helm
// (the one `make lint` runs), and the systemd env file, each checked against
// the settings registry so a renamed or mistyped setting fails here rather
// than at an operator's start-up.
package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hubctl/hubctl/internal/config"
)

const chartDir = "helm/hubctl"

// helmBin is the pinned helm, built once for the whole package.
var helmBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hubctl-helm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	helmBin, err = buildHelm(dir)
	if err != nil {
		helmBin = ""
		fmt.Fprintln(os.Stderr, "helm unavailable:", err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildHelm installs the helm the Makefile pins into dir. After the first
// build the Go build cache makes this a link step of a few seconds.
func buildHelm(dir string) (string, error) {
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^HELM\s*:=\s*(\S+@v\S+)\s*$`).FindSubmatch(makefile)
	if m == nil {
		return "", errors.New("the Makefile pins no HELM := <module path>@<version>")
	}
	cmd := exec.Command("go", "install", string(m[1]))
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", m[1], err, out)
	}
	return filepath.Join(dir, "helm"), nil
}

func requireHelm(t *testing.T) {
	t.Helper()
	if helmBin != "" {
		return
	}
	msg := "the pinned helm could not be built (see the start of the output); it needs the Go module proxy once"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// render runs helm template with the chart's ci/<values> file and extra
// --set flags, and decodes every manifest.
func render(t *testing.T, values string, set ...string) manifests {
	t.Helper()
	out, err := helmTemplate(t, values, set...)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, out)
}

func helmTemplate(t *testing.T, values string, set ...string) ([]byte, error) {
	t.Helper()
	requireHelm(t)
	args := []string{"template", "hub", chartDir, "--namespace", "streaming"}
	if values != "" {
		args = append(args, "-f", filepath.Join(chartDir, "ci", values))
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helmBin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// The parts of Kubernetes objects these tests look at.
type object struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas    int              `yaml:"replicas"`
		ServiceName string           `yaml:"serviceName"`
		Selector    selector         `yaml:"selector"`
		Template    podTemplate      `yaml:"template"`
		Endpoints   []map[string]any `yaml:"endpoints"`
		ClusterIP   string           `yaml:"clusterIP"`
		Ports       []map[string]any `yaml:"ports"`
	} `yaml:"spec"`
	StringData map[string]string `yaml:"stringData"`
}

type selector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
	Labels      map[string]string `yaml:",inline"`
}

type podTemplate struct {
	Metadata struct {
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		InitContainers                []container `yaml:"initContainers"`
		Containers                    []container `yaml:"containers"`
		TerminationGracePeriodSeconds int         `yaml:"terminationGracePeriodSeconds"`
		Volumes                       []struct {
			Name   string `yaml:"name"`
			Secret struct {
				SecretName string `yaml:"secretName"`
			} `yaml:"secret"`
		} `yaml:"volumes"`
		AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
		SecurityContext              struct {
			RunAsNonRoot bool `yaml:"runAsNonRoot"`
			RunAsUser    int  `yaml:"runAsUser"`
		} `yaml:"securityContext"`
	} `yaml:"spec"`
}

type container struct {
	Name           string   `yaml:"name"`
	Image          string   `yaml:"image"`
	Args           []string `yaml:"args"`
	Env            []envVar `yaml:"env"`
	LivenessProbe  *probe   `yaml:"livenessProbe"`
	ReadinessProbe *probe   `yaml:"readinessProbe"`
	StartupProbe   *probe   `yaml:"startupProbe"`
	Ports          []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	SecurityContext struct {
		ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
	} `yaml:"securityContext"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
		SecretKeyRef *struct {
			Name     string `yaml:"name"`
			Key      string `yaml:"key"`
			Optional bool   `yaml:"optional"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type probe struct {
	HTTPGet struct {
		Path   string `yaml:"path"`
		Port   string `yaml:"port"`
		Scheme string `yaml:"scheme"`
	} `yaml:"httpGet"`
}

type manifests []object

// decode reads every YAML document; each must be a mapping with a kind.
func decode(t *testing.T, out []byte) manifests {
	t.Helper()
	var all manifests
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rendered manifests do not decode: %v", err)
		}
		if len(node.Content) == 0 { // an empty document between separators
			continue
		}
		var generic map[string]any
		if err := node.Decode(&generic); err != nil {
			t.Fatalf("a rendered document is not a mapping: %v", err)
		}
		var obj object
		if err := node.Decode(&obj); err != nil {
			t.Fatalf("rendered %v does not decode as a Kubernetes object: %v", generic["kind"], err)
		}
		if obj.Kind == "" || obj.Metadata.Name == "" {
			t.Fatalf("rendered document without kind or name: %v", generic)
		}
		all = append(all, obj)
	}
	return all
}

func (m manifests) get(t *testing.T, kind, name string) object {
	t.Helper()
	for _, o := range m {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	t.Fatalf("no %s %s among %v", kind, name, m.names())
	return object{}
}

func (m manifests) count(kind string) int {
	n := 0
	for _, o := range m {
		if o.Kind == kind {
			n++
		}
	}
	return n
}

func (m manifests) names() []string {
	var names []string
	for _, o := range m {
		names = append(names, o.Kind+"/"+o.Metadata.Name)
	}
	return names
}

func (c container) env(name string) (envVar, bool) {
	i := slices.IndexFunc(c.Env, func(e envVar) bool { return e.Name == name })
	if i < 0 {
		return envVar{}, false
	}
	return c.Env[i], true
}

func mainContainer(t *testing.T, o object) container {
	t.Helper()
	for _, c := range o.Spec.Template.Spec.Containers {
		if c.Name == "hubctl" {
			return c
		}
	}
	t.Fatalf("%s %s has no hubctl container", o.Kind, o.Metadata.Name)
	return container{}
}

// checkServe checks what every hubctl serve pod needs, whatever its role.
func checkServe(t *testing.T, o object, role string) container {
	t.Helper()
	name := o.Kind + " " + o.Metadata.Name
	c := mainContainer(t, o)
	if !slices.Equal(c.Args, []string{"serve"}) {
		t.Errorf("%s runs %v, want serve", name, c.Args)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port != "http" {
		t.Errorf("%s liveness probe %+v, want GET /healthz on the http port", name, c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port != "http" {
		t.Errorf("%s readiness probe %+v, want GET /readyz on the http port", name, c.ReadinessProbe)
	}
	if c.StartupProbe == nil || c.StartupProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("%s startup probe %+v, want GET /healthz", name, c.StartupProbe)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("%s ports %+v, want http 8080", name, c.Ports)
	}
	if v, _ := c.env("STREAMING_HUB_ROLE"); v.Value != role {
		t.Errorf("%s STREAMING_HUB_ROLE = %q, want %s", name, v.Value, role)
	}
	if v, _ := c.env("STREAMING_HUB_HTTP_LISTEN_ADDR"); v.Value != ":8080" {
		t.Errorf("%s listens on %q, want :8080 (the probes' port)", name, v.Value)
	}
	// The KEK comes from the Secret, through the variable KEK_REF names.
	ref, _ := c.env("STREAMING_HUB_KEK_REF")
	kek, ok := c.env(ref.Value)
	if ref.Value == "" || !ok || kek.ValueFrom == nil || kek.ValueFrom.SecretKeyRef == nil || kek.ValueFrom.SecretKeyRef.Key != "kek" || kek.ValueFrom.SecretKeyRef.Optional {
		t.Errorf("%s KEK: STREAMING_HUB_KEK_REF=%q and that variable = %+v; want it read from the Secret's kek key", name, ref.Value, kek)
	}
	if dsn, _ := c.env("STREAMING_HUB_POSTGRES_DSN"); dsn.ValueFrom == nil || dsn.ValueFrom.SecretKeyRef == nil || dsn.ValueFrom.SecretKeyRef.Key != "postgres-dsn" {
		t.Errorf("%s reads the DSN from %+v, want the Secret's postgres-dsn key", name, dsn)
	}
	if !o.Spec.Template.Spec.SecurityContext.RunAsNonRoot || o.Spec.Template.Spec.SecurityContext.RunAsUser == 0 {
		t.Errorf("%s may run as root", name)
	}
	if !c.SecurityContext.ReadOnlyRootFilesystem || c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("%s container security context %+v, want a read-only root and no privilege escalation", name, c.SecurityContext)
	}
	if a := o.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("%s mounts a service account token it never uses", name)
	}
	if grace := o.Spec.Template.Spec.TerminationGracePeriodSeconds; grace <= 30 {
		t.Errorf("%s termination grace %ds leaves no room after the 30s shutdown timeout", name, grace)
	}
	if !subset(o.Spec.Selector.MatchLabels, o.Spec.Template.Metadata.Labels) {
		t.Errorf("%s selector %v does not select its own pods %v", name, o.Spec.Selector.MatchLabels, o.Spec.Template.Metadata.Labels)
	}
	checkSettings(t, name, o.Metadata.Name+"-0", c)
	return c
}

// checkInstanceID checks the static Kafka member id: the pod's namespace
// and name, from variables defined before it (Kubernetes expands $(VAR)
// only from earlier entries).
func checkInstanceID(t *testing.T, name string, c container) {
	t.Helper()
	i := slices.IndexFunc(c.Env, func(e envVar) bool { return e.Name == "STREAMING_HUB_KAFKA_INSTANCE_ID" })
	if i < 0 {
		t.Errorf("%s has no STREAMING_HUB_KAFKA_INSTANCE_ID", name)
		return
	}
	if c.Env[i].Value != "$(POD_NAMESPACE).$(POD_NAME)" {
		t.Errorf("%s instance id = %q", name, c.Env[i].Value)
	}
	for field, v := range map[string]string{"metadata.name": "POD_NAME", "metadata.namespace": "POD_NAMESPACE"} {
		j := slices.IndexFunc(c.Env, func(e envVar) bool { return e.Name == v })
		if j < 0 || j > i || c.Env[j].ValueFrom == nil || c.Env[j].ValueFrom.FieldRef == nil || c.Env[j].ValueFrom.FieldRef.FieldPath != field {
			t.Errorf("%s: %s must come from %s before the instance id", name, v, field)
		}
	}
}

// chartOnly are variables the chart sets that are not hubctl settings: the
// pod's identity, and the KEK itself (named by STREAMING_HUB_KEK_REF).
var chartOnly = []string{"POD_NAME", "POD_NAMESPACE", "HUB_KEK"}

// checkSettings checks that every variable is a setting hubctl knows and
// that the values given inline are valid for it, by loading them as serve
// would: $(VAR) references expanded as Kubernetes does (from variables
// defined earlier), the pod's fields for pod, secrets filled in with
// placeholders.
func checkSettings(t *testing.T, name, pod string, c container) {
	t.Helper()
	known := map[string]bool{}
	for _, s := range config.Settings() {
		known[s.Env] = true
	}
	fields := map[string]string{"metadata.name": pod, "metadata.namespace": "streaming"}
	defined := map[string]string{}
	env := map[string]string{}
	for _, e := range c.Env {
		value := reference.ReplaceAllStringFunc(e.Value, func(ref string) string {
			if v, ok := defined[ref[2:len(ref)-1]]; ok {
				return v
			}
			return ref // Kubernetes leaves an unknown reference as written
		})
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			value = fields[e.ValueFrom.FieldRef.FieldPath]
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			value = placeholders[e.Name]
		}
		defined[e.Name] = value
		switch {
		case slices.Contains(chartOnly, e.Name):
		case !known[e.Name]:
			t.Errorf("%s sets %s, which is not a hubctl setting", name, e.Name)
		default:
			env[e.Name] = value
		}
	}
	if _, err := config.Load(config.LoadOptions{LookupEnv: mapEnv(env)}); err != nil {
		t.Errorf("%s: hubctl refuses the chart's settings: %v", name, err)
	}
}

// reference is a $(VAR) reference in a container's env value.
var reference = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`)

var placeholders = map[string]string{
	"STREAMING_HUB_POSTGRES_DSN":              "postgres://hubctl@db:5432/hubctl",
	"STREAMING_HUB_ADMIN_TOKEN":               "an-admin-token-of-enough-length",
	"STREAMING_HUB_KAFKA_SASL_PASSWORD":       "sasl-password",
	"STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET": "oauth-client-secret",
	"STREAMING_HUB_KAFKA_SCRAM_PASSWORD":      "scram-password",
}

func mapEnv(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

func subset(small, big map[string]string) bool {
	if len(small) == 0 {
		return false
	}
	for k, v := range small {
		if big[k] != v {
			return false
		}
	}
	return true
}

func TestChartDefaults(t *testing.T) {
	m := render(t, "default-values.yaml")
	sts := m.get(t, "StatefulSet", "hub-hubctl-all")
	if sts.Spec.Replicas != 2 || sts.Spec.ServiceName != "hub-hubctl-pods" {
		t.Errorf("StatefulSet replicas %d serviceName %q", sts.Spec.Replicas, sts.Spec.ServiceName)
	}
	c := checkServe(t, sts, "all")
	checkInstanceID(t, "StatefulSet hub-hubctl-all", c)
	if !strings.HasPrefix(c.Image, "ghcr.io/hubctl/hubctl:") {
		t.Errorf("image %q", c.Image)
	}
	if got := m.get(t, "Service", "hub-hubctl-pods"); got.Spec.ClusterIP != "None" {
		t.Errorf("the StatefulSet's governing Service is not headless: clusterIP %q", got.Spec.ClusterIP)
	}

	// Migrations run first in every pod.
	inits := sts.Spec.Template.Spec.InitContainers
	if len(inits) != 1 || !slices.Equal(inits[0].Args, []string{"migrate", "up"}) {
		t.Fatalf("init containers %+v, want one running migrate up", inits)
	}
	if _, ok := inits[0].env("STREAMING_HUB_POSTGRES_DSN"); !ok || len(inits[0].Env) != 1 {
		t.Errorf("the migrations container gets %v; it needs the DSN and nothing else", inits[0].Env)
	}

	pdb := m.get(t, "PodDisruptionBudget", "hub-hubctl-all")
	if !subset(pdb.Spec.Selector.MatchLabels, sts.Spec.Template.Metadata.Labels) {
		t.Errorf("the PodDisruptionBudget %v does not select the pods %v", pdb.Spec.Selector.MatchLabels, sts.Spec.Template.Metadata.Labels)
	}
	svc := m.get(t, "Service", "hub-hubctl")
	if !subset(svc.Spec.Selector.Labels, sts.Spec.Template.Metadata.Labels) {
		t.Errorf("the Service %v does not select the pods %v", svc.Spec.Selector.Labels, sts.Spec.Template.Metadata.Labels)
	}
	for _, kind := range []string{"Secret", "Job", "ServiceMonitor", "Deployment"} {
		if n := m.count(kind); n != 0 {
			t.Errorf("the defaults render %d %s; want none", n, kind)
		}
	}
}

// TestChartServesTLSFromASecret: tls.secretName mounts the Secret as a
// volume (so renewals reach the pod), points the listener at it and
// switches the probes and the scrape to HTTPS.
func TestChartServesTLSFromASecret(t *testing.T) {
	m := render(t, "split-roles-values.yaml", "tls.secretName=hub-tls")
	for _, o := range []object{m.get(t, "StatefulSet", "hub-hubctl-ingest"), m.get(t, "Deployment", "hub-hubctl-delivery")} {
		c := o.Spec.Template.Spec.Containers[0]
		for name, want := range map[string]string{
			"STREAMING_HUB_HTTP_TLS_CERT_FILE": "/etc/hubctl/tls/tls.crt",
			"STREAMING_HUB_HTTP_TLS_KEY_FILE":  "/etc/hubctl/tls/tls.key",
		} {
			if v, _ := c.env(name); v.Value != want {
				t.Errorf("%s: %s = %q, want %q", o.Metadata.Name, name, v.Value, want)
			}
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/hubctl/tls" {
			t.Errorf("%s mounts %+v, want the TLS Secret at /etc/hubctl/tls", o.Metadata.Name, c.VolumeMounts)
		}
		if v := o.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Secret.SecretName != "hub-tls" {
			t.Errorf("%s volumes %+v, want the Secret hub-tls", o.Metadata.Name, v)
		}
		for _, p := range []*probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
			if p == nil || p.HTTPGet.Scheme != "HTTPS" {
				t.Errorf("%s probe %+v, want HTTPS", o.Metadata.Name, p)
			}
		}
	}
	if scheme := m.get(t, "ServiceMonitor", "hub-hubctl").Spec.Endpoints[0]["scheme"]; scheme != "https" {
		t.Errorf("the ServiceMonitor scrapes over %v, want https", scheme)
	}
	if _, err := helmTemplate(t, "split-roles-values.yaml", "tls.secretName=hub-tls", "config.HTTP_TLS_CERT_FILE=/x"); err == nil || !strings.Contains(err.Error(), "set by the chart itself") {
		t.Error("config.HTTP_TLS_CERT_FILE beside tls.secretName was accepted")
	}

	plain := render(t, "split-roles-values.yaml").get(t, "Deployment", "hub-hubctl-delivery").Spec.Template.Spec.Containers[0]
	if plain.ReadinessProbe.HTTPGet.Scheme != "HTTP" || len(plain.VolumeMounts) != 0 {
		t.Errorf("without tls.secretName: probe scheme %q, mounts %+v; want HTTP and none", plain.ReadinessProbe.HTTPGet.Scheme, plain.VolumeMounts)
	}
}

// Kafka's TLS files come from a Secret mounted in every role, beside the
// listener's own certificate; keys left empty set no file.
func TestChartMountsKafkaTLSFromASecret(t *testing.T) {
	m := render(t, "split-roles-values.yaml", "kafka.tls.secretName=kafka-client", "tls.secretName=hub-tls")
	for _, o := range []object{m.get(t, "StatefulSet", "hub-hubctl-ingest"), m.get(t, "Deployment", "hub-hubctl-delivery")} {
		c := o.Spec.Template.Spec.Containers[0]
		for name, want := range map[string]string{
			"STREAMING_HUB_KAFKA_TLS_CA_FILE":   "/etc/hubctl/kafka-tls/ca.crt",
			"STREAMING_HUB_KAFKA_TLS_CERT_FILE": "/etc/hubctl/kafka-tls/tls.crt",
			"STREAMING_HUB_KAFKA_TLS_KEY_FILE":  "/etc/hubctl/kafka-tls/tls.key",
		} {
			if v, _ := c.env(name); v.Value != want {
				t.Errorf("%s: %s = %q, want %q", o.Metadata.Name, name, v.Value, want)
			}
		}
		mounts := map[string]string{}
		for _, vm := range c.VolumeMounts {
			mounts[vm.Name] = vm.MountPath
		}
		if mounts["kafka-tls"] != "/etc/hubctl/kafka-tls" || mounts["tls"] != "/etc/hubctl/tls" || len(mounts) != 2 {
			t.Errorf("%s mounts %+v, want kafka-tls at /etc/hubctl/kafka-tls and tls at /etc/hubctl/tls", o.Metadata.Name, c.VolumeMounts)
		}
		secrets := map[string]string{}
		for _, v := range o.Spec.Template.Spec.Volumes {
			secrets[v.Name] = v.Secret.SecretName
		}
		if secrets["kafka-tls"] != "kafka-client" || secrets["tls"] != "hub-tls" || len(secrets) != 2 {
			t.Errorf("%s volumes %+v, want the Secrets kafka-client and hub-tls", o.Metadata.Name, o.Spec.Template.Spec.Volumes)
		}
	}

	// Brokers that ask for no client certificate: the authority alone.
	caOnly := render(t, "default-values.yaml", "kafka.tls.secretName=kafka-ca", "kafka.tls.certKey=", "kafka.tls.keyKey=", "kafka.tls.caKey=bundle.pem").
		get(t, "StatefulSet", "hub-hubctl-all").Spec.Template.Spec.Containers[0]
	if v, _ := caOnly.env("STREAMING_HUB_KAFKA_TLS_CA_FILE"); v.Value != "/etc/hubctl/kafka-tls/bundle.pem" {
		t.Errorf("KAFKA_TLS_CA_FILE = %q, want the Secret's bundle.pem", v.Value)
	}
	for _, name := range []string{"STREAMING_HUB_KAFKA_TLS_CERT_FILE", "STREAMING_HUB_KAFKA_TLS_KEY_FILE"} {
		if _, ok := caOnly.env(name); ok {
			t.Errorf("%s set with certKey and keyKey empty", name)
		}
	}

	plain := render(t, "default-values.yaml").get(t, "StatefulSet", "hub-hubctl-all").Spec.Template.Spec.Containers[0]
	if _, ok := plain.env("STREAMING_HUB_KAFKA_TLS_CA_FILE"); ok || len(plain.VolumeMounts) != 0 {
		t.Errorf("without kafka.tls.secretName: KAFKA_TLS_CA_FILE set (%v) or mounts %+v; want neither", ok, plain.VolumeMounts)
	}
}

func TestChartSplitRoles(t *testing.T) {
	m := render(t, "split-roles-values.yaml")
	ingest := m.get(t, "StatefulSet", "hub-hubctl-ingest")
	if ingest.Spec.Replicas != 3 {
		t.Errorf("ingest replicas %d, want 3", ingest.Spec.Replicas)
	}
	checkInstanceID(t, "StatefulSet hub-hubctl-ingest", checkServe(t, ingest, "ingest"))

	delivery := m.get(t, "Deployment", "hub-hubctl-delivery")
	if delivery.Spec.Replicas != 4 {
		t.Errorf("delivery replicas %d, want 4", delivery.Spec.Replicas)
	}
	c := checkServe(t, delivery, "delivery")
	if _, ok := c.env("STREAMING_HUB_KAFKA_INSTANCE_ID"); ok {
		t.Error("the delivery role joins no consumer group, yet has a Kafka instance id")
	}
	if v, _ := c.env("STREAMING_HUB_DISPATCH_WORKERS"); v.Value != "32" {
		t.Errorf("delivery DISPATCH_WORKERS = %q, want the role's own 32", v.Value)
	}
	if v, _ := c.env("STREAMING_HUB_KAFKA_SASL_MECHANISM"); v.Value != "SCRAM-SHA-512" {
		t.Errorf("the shared settings did not reach delivery: SASL mechanism %q", v.Value)
	}
	for _, o := range []object{ingest, delivery} {
		if n := len(o.Spec.Template.Spec.InitContainers); n != 0 {
			t.Errorf("%s has %d init containers; with migrations.mode job it needs none", o.Metadata.Name, n)
		}
		pdb := m.get(t, "PodDisruptionBudget", o.Metadata.Name)
		if !subset(pdb.Spec.Selector.MatchLabels, o.Spec.Template.Metadata.Labels) || subset(pdb.Spec.Selector.MatchLabels, other(ingest, delivery, o).Spec.Template.Metadata.Labels) {
			t.Errorf("the PodDisruptionBudget of %s must select its pods and only those", o.Metadata.Name)
		}
	}
	if n := m.count("StatefulSet") + m.count("Deployment"); n != 2 {
		t.Errorf("%d workloads; want ingest and delivery only: %v", n, m.names())
	}

	job := m.get(t, "Job", "hub-hubctl-migrate")
	if hook := job.Metadata.Annotations["helm.sh/hook"]; hook != "pre-install,pre-upgrade" {
		t.Errorf("the migrations Job's hook is %q; it must run before pods change", hook)
	}
	if jc := job.Spec.Template.Spec.Containers; len(jc) != 1 || !slices.Equal(jc[0].Args, []string{"migrate", "up"}) {
		t.Errorf("the migrations Job runs %+v", jc)
	}

	sm := m.get(t, "ServiceMonitor", "hub-hubctl")
	if sm.Metadata.Labels["release"] != "prometheus" || len(sm.Spec.Endpoints) != 1 ||
		sm.Spec.Endpoints[0]["port"] != "http" || sm.Spec.Endpoints[0]["path"] != "/metrics" {
		t.Errorf("ServiceMonitor labels %v endpoints %v", sm.Metadata.Labels, sm.Spec.Endpoints)
	}
}

func other(a, b, o object) object {
	if o.Metadata.Name == a.Metadata.Name {
		return b
	}
	return a
}

func TestChartCreatesTheSecretFromValues(t *testing.T) {
	m := render(t, "inline-secrets-values.yaml")
	secret := m.get(t, "Secret", "hub-hubctl-secrets")
	for _, key := range []string{"postgres-dsn", "kek", "admin-token"} {
		if secret.StringData[key] == "" {
			t.Errorf("the Secret lacks %s", key)
		}
	}
	for _, key := range []string{"kafka-sasl-password", "kafka-oauth-client-secret", "kafka-scram-password"} {
		if _, ok := secret.StringData[key]; ok {
			t.Errorf("the Secret holds %s, which no value gave", key)
		}
	}
	sts := m.get(t, "StatefulSet", "hub-hubctl-all")
	if sts.Spec.Template.Metadata.Annotations["checksum/secret"] == "" {
		t.Error("pods do not roll when the chart's Secret changes: no checksum/secret annotation")
	}
	c := checkServe(t, sts, "all")
	// Whole numbers in values files reach hubctl as integers, not 2.097152e+06.
	for name, want := range map[string]string{"STREAMING_HUB_MAX_EVENT_BYTES": "2097152", "STREAMING_HUB_DISPATCH_CLAIM_BATCH": "128", "STREAMING_HUB_PULL_RATE": "12.5"} {
		if v, _ := c.env(name); v.Value != want {
			t.Errorf("%s = %q, want %s", name, v.Value, want)
		}
	}
}

func TestChartRefusesBadValues(t *testing.T) {
	cases := []struct {
		name   string
		values string
		set    []string
		want   string
	}{
		{"no secrets at all", "", nil, "hubctl needs its secrets (secrets.postgresDSN and secrets.kek missing): add --set secrets.existingSecret=hubctl-secrets"},
		{"a KEK missing", "", []string{"secrets.postgresDSN=postgres://db/hub"}, "(secrets.kek missing)"},
		{"a DSN missing", "", []string{"secrets.kek=a2Vr"}, "(secrets.postgresDSN missing)"},
		{"hook migrations with the chart's Secret", "inline-secrets-values.yaml", []string{"migrations.mode=job"}, "migrations.mode job runs before the chart's own Secret exists"},
		{"an unknown migrations mode", "default-values.yaml", []string{"migrations.mode=sometimes"}, `migrations.mode "sometimes"`},
		{"a setting the chart owns", "default-values.yaml", []string{"config.ROLE=ingest"}, "config.ROLE is set by the chart itself"},
		{"a prefixed setting", "default-values.yaml", []string{"config.STREAMING_HUB_LOG_LEVEL=debug"}, "without the STREAMING_HUB_ prefix"},
		{"an unknown role", "default-values.yaml", []string{"roles.relay.enabled=true"}, "roles.relay: hubctl's roles are all, ingest and delivery"},
		{"no role", "default-values.yaml", []string{"roles.all.enabled=false"}, "no role is enabled"},
		{"a shutdown timeout in milliseconds", "default-values.yaml", []string{"shutdownTimeout=1500ms"}, "write it as whole seconds, minutes or hours"},
		{"a Kafka client certificate without its key", "default-values.yaml", []string{"kafka.tls.secretName=kafka-tls", "kafka.tls.keyKey="}, "kafka.tls: certKey and keyKey go together"},
		{"a Kafka TLS Secret naming no file", "default-values.yaml", []string{"kafka.tls.secretName=kafka-tls", "kafka.tls.caKey=", "kafka.tls.certKey=", "kafka.tls.keyKey="}, "kafka.tls.secretName names no file"},
		{"a Kafka TLS file set beside the chart's", "default-values.yaml", []string{"kafka.tls.secretName=kafka-tls", "config.KAFKA_TLS_CA_FILE=/x"}, "config.KAFKA_TLS_CA_FILE is set by the chart itself"},
		{"metrics off under a ServiceMonitor", "default-values.yaml", []string{"serviceMonitor.enabled=true", "config.METRICS_ENABLED=false"}, "serviceMonitor.enabled needs the metrics endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := helmTemplate(t, c.values, c.set...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("helm template = %v; want an error saying %q", err, c.want)
			}
		})
	}
}

// A newcomer's first `helm install` has no values: the first line helm
// prints must say what to add, and what the chart's README gives as the
// fix must render.
func TestChartWithoutSecretsSaysTheFixFirst(t *testing.T) {
	_, err := helmTemplate(t, "")
	if err == nil {
		t.Fatal("the chart rendered without secrets")
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "helm template hub "+chartDir+" --namespace streaming: exit status 1\n"), "\n")
	if !strings.Contains(first, "hubctl needs its secrets") || !strings.Contains(first, "--set secrets.existingSecret=") {
		t.Errorf("first line of helm's output = %q; want the missing secrets and the fix", first)
	}

	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	install := regexp.MustCompile(`(?m)^helm install hub deploy/helm/hubctl((?: --set \S+)+)$`).FindSubmatch(readme)
	if install == nil {
		t.Fatal("the chart's README shows no one-line helm install with --set")
	}
	sets := strings.Fields(strings.ReplaceAll(string(install[1]), "--set", ""))
	if !slices.Contains(sets, "secrets.existingSecret=hubctl-secrets") {
		t.Errorf("README install sets %v; want the fix the error names", sets)
	}
	m := render(t, "", sets...)
	m.get(t, "StatefulSet", "hub-hubctl-all")

	// make lint renders ci/default-values.yaml: the README's minimal values.
	ci, err := os.ReadFile(filepath.Join(chartDir, "ci", "default-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Secrets map[string]string `yaml:"secrets"`
	}
	if err := yaml.Unmarshal(ci, &values); err != nil {
		t.Fatal(err)
	}
	if len(values.Secrets) != 1 || values.Secrets["existingSecret"] != "hubctl-secrets" {
		t.Errorf("ci/default-values.yaml secrets = %v; want the README's minimal values", values.Secrets)
	}
}

func TestChartShutdownGraceFollowsTheTimeout(t *testing.T) {
	m := render(t, "default-values.yaml", "shutdownTimeout=2m", "terminationGraceMargin=20")
	sts := m.get(t, "StatefulSet", "hub-hubctl-all")
	if got := sts.Spec.Template.Spec.TerminationGracePeriodSeconds; got != 140 {
		t.Errorf("termination grace %ds, want 2m + 20s = 140s", got)
	}
	if v, _ := mainContainer(t, sts).env("STREAMING_HUB_SHUTDOWN_TIMEOUT"); v.Value != "2m" {
		t.Errorf("STREAMING_HUB_SHUTDOWN_TIMEOUT = %q", v.Value)
	}
}
