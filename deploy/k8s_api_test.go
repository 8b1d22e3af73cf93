package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// namespace is the namespace the manifests are validated in, as
// `kubectl apply -k deploy/k8s -n platform` (deploy/README.md) would set it.
const namespace = "platform"

// scheme holds the API types of the kinds deploy/k8s may hold. A manifest
// of any other kind, or of a version not registered here, fails to decode.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// manifestDecoder decodes YAML into the API's Go types as the API server's
// strict field validation does: an unknown field (a typo, or a field in
// the wrong place or the wrong case), a duplicate field or a value of the
// wrong type is an error.
var manifestDecoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})

// kustomization is the part of kustomize's Kustomization that renderK8s
// renders. Any other field fails the decoding, rather than going
// unrendered.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
		IncludeTemplates bool              `json:"includeTemplates"`
	} `json:"labels"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
		Digest  string `json:"digest"`
	} `json:"images"`
}

// decodeStrict decodes a YAML document into v, rejecting duplicate keys
// and, case-sensitively, keys that v has no field for.
func decodeStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// k8sObject is a rendered manifest decoded into its API type.
type k8sObject struct {
	file string
	obj  runtime.Object
}

func (o k8sObject) String() string {
	m, _ := meta.Accessor(o.obj)
	return fmt.Sprintf("%s: %s %s", o.file, o.obj.GetObjectKind().GroupVersionKind().Kind, m.GetName())
}

// renderK8s renders the kustomization in fsys as `kubectl apply -k` would
// before sending it: the documents of the files its resources list, in
// that order, each decoded strictly into its API type (manifestDecoder),
// with the kustomization's labels and images applied and the namespace
// set. It refuses what kustomize refuses (a resource outside the
// directory, one object twice) and an images entry that matches no
// container, which kustomize ignores but is a mistake here.
func renderK8s(fsys fs.FS) ([]k8sObject, error) {
	b, err := fs.ReadFile(fsys, "kustomization.yaml")
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := decodeStrict(b, &k); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return nil, fmt.Errorf("kustomization.yaml: apiVersion %q kind %q, want kustomize.config.k8s.io/v1beta1 Kustomization", k.APIVersion, k.Kind)
	}
	var out []k8sObject
	ids := map[string]bool{}
	for _, r := range k.Resources {
		if !fs.ValidPath(r) || path.Clean(r) != r {
			return nil, fmt.Errorf("kustomization.yaml: resource %q is not a file of the kustomization's directory", r)
		}
		data, err := fs.ReadFile(fsys, r)
		if err != nil {
			return nil, fmt.Errorf("kustomization.yaml: resource %q: %w", r, err)
		}
		objs, err := decodeManifests(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		for _, obj := range objs {
			o := k8sObject{r, obj}
			m, _ := meta.Accessor(obj)
			if m.GetNamespace() != "" {
				return nil, fmt.Errorf("%s: sets namespace %q, which `kubectl apply -n` would refuse to override", o, m.GetNamespace())
			}
			m.SetNamespace(namespace)
			id := obj.GetObjectKind().GroupVersionKind().GroupKind().String() + "/" + m.GetName()
			if ids[id] {
				return nil, fmt.Errorf("%s: declared twice", o)
			}
			ids[id] = true
			out = append(out, o)
		}
	}
	for _, l := range k.Labels {
		for _, o := range out {
			m, _ := meta.Accessor(o.obj)
			m.SetLabels(withLabels(m.GetLabels(), l.Pairs))
			if t := podTemplate(o.obj); t != nil && (l.IncludeTemplates || l.IncludeSelectors) {
				t.Labels = withLabels(t.Labels, l.Pairs)
			}
			if l.IncludeSelectors {
				addSelectorLabels(o.obj, l.Pairs)
			}
		}
	}
	for _, img := range k.Images {
		var matched bool
		for _, o := range out {
			if t := podTemplate(o.obj); t != nil {
				for _, cs := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
					for i := range cs {
						name, tag, digest := splitImage(cs[i].Image)
						if name != img.Name {
							continue
						}
						matched = true
						if img.NewName != "" {
							name = img.NewName
						}
						if img.NewTag != "" {
							tag, digest = img.NewTag, ""
						}
						if img.Digest != "" {
							tag, digest = "", img.Digest
						}
						cs[i].Image = name
						if tag != "" {
							cs[i].Image += ":" + tag
						}
						if digest != "" {
							cs[i].Image += "@" + digest
						}
					}
				}
			}
		}
		if !matched {
			return nil, fmt.Errorf("kustomization.yaml: images: %s matches no container's image", img.Name)
		}
	}
	return out, nil
}

// decodeManifests decodes each YAML document of a manifest file into its
// API type; documents that are empty or only comments are skipped, as
// kustomize skips them.
func decodeManifests(data []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if j, err := yaml.YAMLToJSON(doc); err == nil && string(j) == "null" {
			continue
		}
		obj, _, err := manifestDecoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, obj)
	}
}

func withLabels(labels, pairs map[string]string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, pairs)
	return labels
}

// podTemplate is a workload's pod template, or nil.
func podTemplate(obj runtime.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.Deployment:
		return &o.Spec.Template
	}
	return nil
}

// addSelectorLabels adds pairs to the selectors of the kinds that have one.
func addSelectorLabels(obj runtime.Object, pairs map[string]string) {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		if o.Spec.Selector != nil {
			o.Spec.Selector.MatchLabels = withLabels(o.Spec.Selector.MatchLabels, pairs)
		}
	case *appsv1.Deployment:
		if o.Spec.Selector != nil {
			o.Spec.Selector.MatchLabels = withLabels(o.Spec.Selector.MatchLabels, pairs)
		}
	case *corev1.Service:
		o.Spec.Selector = withLabels(o.Spec.Selector, pairs)
	case *policyv1.PodDisruptionBudget:
		if o.Spec.Selector != nil {
			o.Spec.Selector.MatchLabels = withLabels(o.Spec.Selector.MatchLabels, pairs)
		}
	}
}

// splitImage splits an image reference into name, tag and digest. The
// tag's colon is the last one after the last slash (a registry's port
// has its colon before a slash).
func splitImage(image string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// k8sFS is deploy/k8s as an fs.FS that a test may change.
func k8sFS(t *testing.T) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	entries, err := os.ReadDir("k8s")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			fsys[e.Name()] = &fstest.MapFile{Data: readFile(t, "k8s/"+e.Name())}
		}
	}
	return fsys
}

// checkK8s renders and validates the kustomization in fsys.
func checkK8s(fsys fs.FS) ([]k8sObject, error) {
	objs, err := renderK8s(fsys)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, o := range objs {
		if err := validateObject(o.obj).ToAggregate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o, err))
		}
	}
	return objs, errors.Join(errs...)
}

// TestDeployKubernetesAPI renders deploy/k8s as `kubectl apply -k` would
// and decodes every manifest strictly into the Kubernetes API's Go types
// (k8s.io/api), then validates each object (validateObject): what a
// typo, a misplaced field or a wrong type would make the API server
// refuse, or silently drop, fails here without a cluster.
func TestDeployKubernetesAPI(t *testing.T) {
	objs, err := checkK8s(os.DirFS("k8s"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.obj.GetObjectKind().GroupVersionKind().Kind)
		m, _ := meta.Accessor(o.obj)
		if m.GetLabels()["app.kubernetes.io/part-of"] != "platform" {
			t.Errorf("%s: the kustomization's labels are not applied: %v", o, m.GetLabels())
		}
	}
	slices.Sort(kinds)
	if want := []string{"ConfigMap", "PodDisruptionBudget", "Service", "Service", "StatefulSet"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
	// Every manifest file but the kustomization and the NATS chart's
	// values is a resource of the kustomization (TestDeployKubernetes
	// checks the list itself).
	files := map[string]bool{}
	for _, o := range objs {
		files[o.file] = true
	}
	entries, err := os.ReadDir("k8s")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); n != "kustomization.yaml" && n != "nats-values.yaml" && !files[n] {
			t.Errorf("k8s/%s is rendered by no resource of the kustomization", n)
		}
	}
}

// TestDeployKubernetesRenderImages checks that renderK8s applies the
// kustomization's images as kustomize does: a new name (here with a
// registry's port) and tag, or a digest in place of the tag.
func TestDeployKubernetesRenderImages(t *testing.T) {
	for _, tc := range []struct{ images, want string }{
		{"    newTag: dev\n", "wasmstream/platform:dev"},
		{"    newName: registry.example:5000/platform\n    newTag: v1.2.3\n", "registry.example:5000/platform:v1.2.3"},
		{"    digest: sha256:0123\n", "wasmstream/platform@sha256:0123"},
	} {
		fsys := k8sFS(t)
		k := fsys["kustomization.yaml"]
		k.Data = []byte(strings.Replace(string(k.Data), "    newTag: dev\n", tc.images, 1))
		objs, err := renderK8s(fsys)
		if err != nil {
			t.Fatal(err)
		}
		var images []string
		for _, o := range objs {
			if pt := podTemplate(o.obj); pt != nil {
				for _, c := range pt.Spec.Containers {
					images = append(images, c.Image)
				}
			}
		}
		if !slices.Equal(images, []string{tc.want}) {
			t.Errorf("images %q with %q, want %q", images, tc.images, tc.want)
		}
	}
}

// TestDeployKubernetesAPIRejects shows what checkK8s catches: each case is
// deploy/k8s with one change to one file, which must fail with an error
// that names the problem.
func TestDeployKubernetesAPIRejects(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new, err string
	}{
		// Decoding: unknown fields, duplicates, wrong types, bad values.
		{"misspelt field", "statefulset.yaml", "  replicas: 3\n", "  replica: 3\n", `unknown field "spec.replica"`},
		{"field in the wrong case", "statefulset.yaml", "  replicas: 3\n", "  Replicas: 3\n", `unknown field "spec.Replicas"`},
		{"misplaced field", "statefulset.yaml", "      terminationGracePeriodSeconds: 45\n", "      terminationGracePeriod: 45\n", `unknown field "spec.template.spec.terminationGracePeriod"`},
		{"duplicate field", "statefulset.yaml", "  replicas: 3\n", "  replicas: 3\n  replicas: 4\n", `"replicas" already set`},
		{"string for an integer", "statefulset.yaml", "containerPort: 8080", `containerPort: "8080"`, "containerPort"},
		{"string for a boolean", "statefulset.yaml", "readOnlyRootFilesystem: true", `readOnlyRootFilesystem: "yes"`, "readOnlyRootFilesystem"},
		{"list for a string", "service.yaml", "  type: ClusterIP\n", "  type: [ClusterIP]\n", "type"},
		{"bad quantity", "statefulset.yaml", "memory: 2Gi", "memory: 2GB", "quantities must match"},
		{"unknown version", "poddisruptionbudget.yaml", "apiVersion: policy/v1\n", "apiVersion: policy/v1beta2\n", `no kind "PodDisruptionBudget" is registered for version "policy/v1beta2"`},
		{"unknown kind", "configmap.yaml", "kind: ConfigMap\n", "kind: ConfigMaps\n", `no kind "ConfigMaps"`},
		// Rendering.
		{"unknown kustomization field", "kustomization.yaml", "images:\n", "image:\n", `unknown field "image"`},
		{"missing resource", "kustomization.yaml", "  - statefulset.yaml\n", "  - statefulsets.yaml\n", "statefulsets.yaml"},
		{"resource outside the directory", "kustomization.yaml", "  - statefulset.yaml\n", "  - ../statefulset.yaml\n", "not a file of the kustomization's directory"},
		{"image of no container", "kustomization.yaml", "  - name: wasmstream/platform\n", "  - name: wasmstream/platfrom\n", "matches no container"},
		{"namespace in a manifest", "configmap.yaml", "  name: platform-config\n", "  name: platform-config\n  namespace: default\n", "sets namespace"},
		// Validation.
		{"bad object name", "statefulset.yaml", "  name: platform\n  labels:", "  name: Platform\n  labels:", "metadata.name"},
		{"bad annotation key", "statefulset.yaml", "        prometheus.io/path: /metrics\n", "        prometheus.io/path: /metrics\n        bad key!: x\n", "spec.template.metadata.annotations"},
		{"selector not matching the template", "statefulset.yaml", "      labels:\n        app.kubernetes.io/name: platform\n", "      labels:\n        app.kubernetes.io/name: platfrom\n", "does not match template labels"},
		{"unsupported enum value", "statefulset.yaml", "podManagementPolicy: Parallel", "podManagementPolicy: Paralel", "spec.podManagementPolicy: Unsupported value"},
		{"negative grace period", "statefulset.yaml", "terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: -1", "terminationGracePeriodSeconds"},
		{"probe on no port", "statefulset.yaml", "path: /readyz\n              port: http\n", "path: /readyz\n              port: htp\n", "readinessProbe.httpGet.port"},
		{"mount of no volume", "statefulset.yaml", "            - name: tmp\n", "            - name: temp\n", "volumeMounts[2].name"},
		{"two volumes of one name", "statefulset.yaml", "        - name: tmp\n          emptyDir: {}\n", "        - name: config\n          emptyDir: {}\n", "spec.template.spec.volumes[1].name: Duplicate value"},
		{"request above its limit", "statefulset.yaml", "              cpu: \"2\"\n", "              cpu: 100m\n", "resources.requests[cpu]"},
		{"unknown downward API field", "statefulset.yaml", "fieldPath: metadata.namespace", "fieldPath: metadata.namspace", "fieldRef.fieldPath"},
		{"resource of another container", "statefulset.yaml", "containerName: platform", "containerName: platfrom", "resourceFieldRef.containerName"},
		{"root and runAsNonRoot", "statefulset.yaml", "        runAsUser: 65532\n", "        runAsUser: 0\n", "securityContext.runAsUser"},
		{"bad cluster IP", "service.yaml", "clusterIP: None", "clusterIP: none", "spec.clusterIP"},
		{"bad target port name", "service.yaml", "      targetPort: http\n---", "      targetPort: HTTP_port\n---", "spec.ports[0].targetPort"},
		{"bad config key", "configmap.yaml", "  config.yaml: |", "  config/yaml: |", "data[config/yaml]"},
		{"both PDB bounds", "poddisruptionbudget.yaml", "  maxUnavailable: 1\n", "  maxUnavailable: 1\n  minAvailable: 1\n", "minAvailable and maxUnavailable"},
		{"bad PDB percentage", "poddisruptionbudget.yaml", "  maxUnavailable: 1\n", "  maxUnavailable: 150%\n", "spec.maxUnavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := k8sFS(t)
			f := fsys[tc.file]
			if f == nil {
				t.Fatalf("no k8s/%s", tc.file)
			}
			if n := strings.Count(string(f.Data), tc.old); n != 1 {
				t.Fatalf("k8s/%s holds %q %d times, want once", tc.file, tc.old, n)
			}
			f.Data = []byte(strings.Replace(string(f.Data), tc.old, tc.new, 1))
			_, err := checkK8s(fsys)
			if err == nil {
				t.Fatalf("k8s/%s with %q for %q passes", tc.file, tc.new, tc.old)
			}
			t.Logf("refused: %v", err)
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q does not mention %q", err, tc.err)
			}
		})
	}
}
