package deploy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// natsValues are the values of the official NATS Helm chart (the 1.x
// layout and later: config, container, podTemplate) that
// deploy/k8s/nats-values.yaml may set, with their types. The chart
// publishes no schema of its values and helm is not run here, so this is
// the part of the chart's values.yaml the file uses; a key not here is a
// typo or one to add after checking it in the chart's values.yaml, where
// the chart would otherwise ignore it without a word. What the chart
// merges into a Kubernetes object (container.merge into the NATS
// container, each of podTemplate.topologySpreadConstraints into a
// constraint) is decoded into the API's type, strictly.
type natsValues struct {
	Config struct {
		Cluster struct {
			Enabled     bool  `json:"enabled"`
			Port        int   `json:"port"`
			Replicas    int   `json:"replicas"`
			NoAdvertise *bool `json:"noAdvertise"`
		} `json:"cluster"`
		JetStream struct {
			Enabled   bool `json:"enabled"`
			FileStore struct {
				Enabled bool   `json:"enabled"`
				Dir     string `json:"dir"`
				PVC     struct {
					Enabled          bool               `json:"enabled"`
					Size             *resource.Quantity `json:"size"`
					StorageClassName *string            `json:"storageClassName"`
				} `json:"pvc"`
				MaxSize *resource.Quantity `json:"maxSize"`
			} `json:"fileStore"`
			MemoryStore struct {
				Enabled bool               `json:"enabled"`
				MaxSize *resource.Quantity `json:"maxSize"`
			} `json:"memoryStore"`
		} `json:"jetstream"`
		Monitor struct {
			Enabled bool `json:"enabled"`
			Port    int  `json:"port"`
		} `json:"monitor"`
	} `json:"config"`
	Container struct {
		Merge     corev1.Container            `json:"merge"`
		Resources corev1.ResourceRequirements `json:"resources"`
	} `json:"container"`
	PodTemplate struct {
		// By topologyKey; the chart adds the key and a label selector of
		// its pods.
		TopologySpreadConstraints map[string]corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
	} `json:"podTemplate"`
}

// checkNATSValues decodes the chart's values strictly into natsValues and
// checks them: ports and sizes, the constraints and the container as the
// chart renders them, and JetStream's memory store within the container's
// memory limit, as the chart's values.yaml asks.
func checkNATSValues(data []byte) (*natsValues, error) {
	var v natsValues
	if err := decodeStrict(data, &v); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		port int
	}{{"config.cluster.port", v.Config.Cluster.Port}, {"config.monitor.port", v.Config.Monitor.Port}} {
		if f.port != 0 {
			errs = append(errs, strs(field.NewPath(f.name), f.port, validation.IsValidPortNum(f.port))...)
		}
	}
	if v.Config.JetStream.Enabled && v.Config.Cluster.Enabled && v.Config.Cluster.Replicas < 2 {
		errs = append(errs, field.Invalid(field.NewPath("config", "cluster", "replicas"), v.Config.Cluster.Replicas, "must be 2 or more with JetStream"))
	}
	js := field.NewPath("config", "jetstream")
	for _, f := range []struct {
		p *field.Path
		q *resource.Quantity
	}{
		{js.Child("fileStore", "pvc", "size"), v.Config.JetStream.FileStore.PVC.Size},
		{js.Child("fileStore", "maxSize"), v.Config.JetStream.FileStore.MaxSize},
		{js.Child("memoryStore", "maxSize"), v.Config.JetStream.MemoryStore.MaxSize},
	} {
		if f.q != nil && f.q.Sign() <= 0 {
			errs = append(errs, field.Invalid(f.p, f.q.String(), "must be greater than zero"))
		}
	}
	pod := field.NewPath("podTemplate", "topologySpreadConstraints")
	for key, c := range v.PodTemplate.TopologySpreadConstraints {
		if c.TopologyKey != "" && c.TopologyKey != key {
			errs = append(errs, field.Invalid(pod.Key(key).Child("topologyKey"), c.TopologyKey, "the chart sets it from the map's key"))
		}
		c.TopologyKey = key
		errs = append(errs, validateSpread(pod.Key(key), c)...)
	}
	// The chart's container is named nats and has an image; its pod (the
	// volumes, the ports the chart declares) is not known here.
	c := v.Container.Merge
	if c.Name == "" {
		c.Name = "nats"
	}
	if c.Image == "" {
		c.Image = "nats"
	}
	errs = append(errs, validateContainer(&c, nil, field.NewPath("container", "merge"))...)
	errs = append(errs, validateResources(v.Container.Resources, field.NewPath("container", "resources"))...)
	if max := v.Config.JetStream.MemoryStore.MaxSize; v.Config.JetStream.Enabled && v.Config.JetStream.MemoryStore.Enabled && max != nil {
		limit, ok := c.Resources.Limits[corev1.ResourceMemory]
		if l, set := v.Container.Resources.Limits[corev1.ResourceMemory]; set {
			limit, ok = l, true
		}
		if ok && max.Cmp(limit) >= 0 {
			errs = append(errs, field.Invalid(js.Child("memoryStore", "maxSize"), max.String(), fmt.Sprintf("must be less than the container's memory limit of %s", limit.String())))
		}
	}
	if err := errs.ToAggregate(); err != nil {
		return nil, errors.New(err.Error())
	}
	return &v, nil
}

// TestDeployNATSValues checks deploy/k8s/nats-values.yaml with
// checkNATSValues, and that what the platform relies on is set
// (TestDeployKubernetes checks the same on the parsed file).
func TestDeployNATSValues(t *testing.T) {
	v, err := checkNATSValues(readFile(t, "k8s/nats-values.yaml"))
	if err != nil {
		t.Fatalf("nats-values.yaml: %v", err)
	}
	js := v.Config.JetStream
	if !v.Config.Cluster.Enabled || v.Config.Cluster.Replicas != 3 || !js.Enabled || !js.FileStore.Enabled || !js.FileStore.PVC.Enabled || js.FileStore.PVC.Size == nil {
		t.Errorf("nats-values.yaml: want a cluster of 3 with JetStream's file store on persistent volumes of a set size: %+v", v.Config)
	}
	if v.Container.Merge.Resources.Limits.Memory().IsZero() && v.Container.Resources.Limits.Memory().IsZero() {
		t.Error("nats-values.yaml: the NATS container has no memory limit")
	}
}

// TestDeployNATSValuesRejects shows what checkNATSValues catches: each
// case is deploy/k8s/nats-values.yaml with one change.
func TestDeployNATSValuesRejects(t *testing.T) {
	content := string(readFile(t, "k8s/nats-values.yaml"))
	for _, tc := range []struct {
		name, old, new, err string
	}{
		{"misspelt key", "    fileStore:\n", "    filestore:\n", `unknown field "config.jetstream.filestore"`},
		{"key of another chart version", "  jetstream:\n    enabled: true\n", "  jetstream:\n    enabled: true\n    memStorage:\n      enabled: true\n", `unknown field "config.jetstream.memStorage"`},
		{"string for a boolean", "  cluster:\n    enabled: true\n", "  cluster:\n    enabled: \"yes\"\n", "config.cluster.enabled"},
		{"bad size", "size: 10Gi", "size: 10GB", "quantities must match"},
		{"unknown container field", "    resources:\n      requests:\n", "    resource:\n      requests:\n", `unknown field "container.merge.resource"`},
		{"request above its limit", "        cpu: 250m\n", "        cpu: \"2\"\n", "container.merge.resources.requests[cpu]"},
		{"memory store above the limit", "maxSize: 256Mi", "maxSize: 2Gi", "config.jetstream.memoryStore.maxSize"},
		{"bad spread constraint", "whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: DontSchedule", "whenUnsatisfiable"},
		{"bad monitor port", "    port: 8222\n", "    port: 82220\n", "config.monitor.port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := strings.Count(content, tc.old); n != 1 {
				t.Fatalf("nats-values.yaml holds %q %d times, want once", tc.old, n)
			}
			_, err := checkNATSValues([]byte(strings.Replace(content, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatalf("nats-values.yaml with %q for %q passes", tc.new, tc.old)
			}
			t.Logf("refused: %v", err)
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q does not mention %q", err, tc.err)
			}
		})
	}
}
