package deploy

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestDeployKubernetes checks the manifests in deploy/k8s: each has
// apiVersion, kind and metadata.name; workloads' containers have images,
// resource limits, non-root security contexts and probes on the platform's
// /healthz and /readyz; Services select a workload's pods and target its
// ports; mounted ConfigMaps exist and hold configuration keys; a
// PodDisruptionBudget selects a workload's pods; the kustomization lists
// every manifest; the NATS chart's values ask for a three-server JetStream
// cluster; and the platform's StatefulSet runs three workers in cluster
// mode on it (checkClusterWorkers).
func TestDeployKubernetes(t *testing.T) {
	rs := routes(t)
	keys := configKeys(t)
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]map[string]any{} // kind/name
	var manifests []string
	var kustomization map[string]any
	for _, f := range files {
		switch filepath.Base(f) {
		case "kustomization.yaml":
			kustomization = docs(t, f)[0]
			continue
		case "nats-values.yaml":
			continue
		}
		manifests = append(manifests, filepath.Base(f))
		for _, d := range docs(t, f) {
			kind, name := str(d, "kind"), str(d, "metadata", "name")
			if str(d, "apiVersion") == "" || kind == "" || name == "" {
				t.Errorf("%s: a document without apiVersion, kind or metadata.name", f)
				continue
			}
			want := map[string]string{"ConfigMap": "v1", "Service": "v1", "StatefulSet": "apps/v1", "Deployment": "apps/v1", "PodDisruptionBudget": "policy/v1"}[kind]
			if want == "" || str(d, "apiVersion") != want {
				t.Errorf("%s: %s %s: apiVersion %s, want %q", f, kind, name, str(d, "apiVersion"), want)
			}
			if _, dup := objects[kind+"/"+name]; dup {
				t.Errorf("%s: %s %s is declared twice", f, kind, name)
			}
			objects[kind+"/"+name] = d
		}
	}
	if kustomization == nil {
		t.Fatal("no k8s/kustomization.yaml")
	}
	if res := stringList(t, "resources", kustomization["resources"]); !slices.Equal(res, manifests) {
		t.Errorf("kustomization resources %q, want %q", res, manifests)
	}

	var workloads int
	statefulSets := map[string]map[string]any{} // key: the platform's configuration
	for key, d := range objects {
		kind := str(d, "kind")
		switch kind {
		case "StatefulSet", "Deployment":
			workloads++
			settings := checkWorkload(t, key, d, objects, rs, keys)
			if kind == "StatefulSet" {
				statefulSets[key] = settings
				if svc := str(d, "spec", "serviceName"); objects["Service/"+svc] == nil {
					t.Errorf("%s: serviceName %q is no Service", key, svc)
				} else if v, _ := get(objects["Service/"+svc], "spec", "clusterIP"); v != "None" {
					t.Errorf("%s: its Service %s is not headless", key, svc)
				}
			}
		case "Service":
			ports := list(d, "spec", "ports")
			if len(ports) == 0 {
				t.Errorf("%s has no ports", key)
			}
			sel := mapping(d, "spec", "selector")
			var matched map[string]any
			for _, w := range objects {
				if labels := mapping(w, "spec", "template", "metadata", "labels"); len(sel) > 0 && subset(sel, labels) {
					matched = w
				}
			}
			if matched == nil {
				t.Errorf("%s: selector %v selects no workload's pods", key, sel)
				continue
			}
			for _, p := range ports {
				if target := mapping(p)["targetPort"]; !containerPort(matched, target) {
					t.Errorf("%s: targetPort %v is no container port of %s", key, target, str(matched, "metadata", "name"))
				}
			}
		case "ConfigMap":
			if len(mapping(d, "data")) == 0 {
				t.Errorf("%s has no data", key)
			}
		case "PodDisruptionBudget":
			if podsOf(objects, mapping(d, "spec", "selector", "matchLabels")) == nil {
				t.Errorf("%s: selector %v selects no workload's pods", key, mapping(d, "spec", "selector"))
			}
			_, hasMax := get(d, "spec", "maxUnavailable")
			_, hasMin := get(d, "spec", "minAvailable")
			if hasMax == hasMin {
				t.Errorf("%s: want one of maxUnavailable and minAvailable", key)
			}
		default:
			t.Errorf("%s: kind %s is not checked here", key, kind)
		}
	}
	if workloads != 1 {
		t.Errorf("%d workloads, want the platform's", workloads)
	}

	values := docs(t, "k8s/nats-values.yaml")[0]
	if v, _ := get(values, "config", "cluster", "enabled"); v != true {
		t.Error("nats-values.yaml: config.cluster.enabled is not true")
	}
	if v, _ := get(values, "config", "cluster", "replicas"); v != 3 {
		t.Errorf("nats-values.yaml: config.cluster.replicas %v, want 3", v)
	}
	if v, _ := get(values, "config", "jetstream", "enabled"); v != true {
		t.Error("nats-values.yaml: config.jetstream.enabled is not true")
	}
	if v, _ := get(values, "config", "jetstream", "fileStore", "pvc", "enabled"); v != true {
		t.Error("nats-values.yaml: JetStream's file store is not on a persistent volume")
	}

	if len(statefulSets) != 1 {
		t.Fatalf("StatefulSets %v, want the platform's", slices.Collect(maps.Keys(statefulSets)))
	}
	for key, settings := range statefulSets {
		natsReplicas, _ := get(values, "config", "cluster", "replicas")
		checkClusterWorkers(t, key, objects, settings, natsReplicas)
	}
}

// podsOf is the workload whose pod template's labels sel selects, or nil.
func podsOf(objects map[string]map[string]any, sel map[string]any) map[string]any {
	for _, w := range objects {
		if labels := mapping(w, "spec", "template", "metadata", "labels"); len(sel) > 0 && subset(sel, labels) {
			return w
		}
	}
	return nil
}

// checkClusterWorkers checks the platform's StatefulSet as a set of
// cluster workers: as many replicas as NATS servers, started in parallel;
// the platform's buckets with one replica per NATS server and checkpoints
// in JetStream (the default in cluster mode, which nats.url turns on); each
// pod's worker id its name and its advertised URL its DNS name through the
// headless Service (which publishes pods that are not ready, so that
// forwarding to them works), both from the Downward API in entries the
// Kubernetes $(VAR) expansion can see; its slots from its CPU limit; a
// grace period longer than `platform serve` takes to hand its jobs over;
// and a PodDisruptionBudget that lets one worker go at a time.
func checkClusterWorkers(t *testing.T, key string, objects map[string]map[string]any, settings map[string]any, natsReplicas any) {
	t.Helper()
	d := objects[key]
	if v, _ := get(d, "spec", "replicas"); v != 3 || v != natsReplicas {
		t.Errorf("%s: replicas %v, want 3 (the NATS servers: %v)", key, v, natsReplicas)
	}
	if v := str(d, "spec", "podManagementPolicy"); v != "Parallel" {
		t.Errorf("%s: podManagementPolicy %q, want Parallel: the workers are peers", key, v)
	}
	if settings == nil {
		t.Fatalf("%s: no configuration file", key)
	}
	if v := settings["nats.replicas"]; v != natsReplicas {
		t.Errorf("%s: nats.replicas %v, want %v, one per NATS server", key, v, natsReplicas)
	}
	if v, ok := settings["checkpoint.store"]; ok && v != "jetstream" {
		t.Errorf("%s: checkpoint.store %v, want jetstream (the default in cluster mode), where every worker reads them", key, v)
	}
	if settings["api.tls.cert"] != nil {
		t.Errorf("%s: the API serves HTTPS; the advertised URL checked here is http", key)
	}
	_, port, err := net.SplitHostPort(fmt.Sprint(settings["http.addr"]))
	if err != nil {
		t.Fatalf("%s: http.addr %v: %v", key, settings["http.addr"], err)
	}

	svcName := str(d, "spec", "serviceName")
	if v, _ := get(objects["Service/"+svcName], "spec", "publishNotReadyAddresses"); v != true {
		t.Errorf("Service %s: publishNotReadyAddresses is not true: workers forward to pods that are not ready too", svcName)
	}

	grace, _ := get(d, "spec", "template", "spec", "terminationGracePeriodSeconds")
	if n, ok := grace.(int); !ok || time.Duration(n)*time.Second < shutdownTimeout(t)+shutdownMargin {
		t.Errorf("%s: terminationGracePeriodSeconds %v, want at least %s: platform serve takes up to %s to stop its jobs and release their leases", key, grace, shutdownTimeout(t)+shutdownMargin, shutdownTimeout(t))
	}

	var pdb bool
	for k, o := range objects {
		if str(o, "kind") != "PodDisruptionBudget" || !subset(mapping(o, "spec", "selector", "matchLabels"), mapping(d, "spec", "template", "metadata", "labels")) {
			continue
		}
		pdb = true
		if v, _ := get(o, "spec", "maxUnavailable"); v != 1 {
			t.Errorf("%s: maxUnavailable %v, want 1", k, v)
		}
	}
	if !pdb {
		t.Errorf("%s: no PodDisruptionBudget selects its pods", key)
	}

	containers := list(d, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s: %d containers, want the platform's", key, len(containers))
	}
	c := containers[0]
	env := map[string]map[string]any{}
	for _, e := range list(c, "env") {
		env[str(e, "name")] = mapping(e)
	}
	// fieldVar is the variable holding the pod's field path, or "".
	fieldVar := func(path string) string {
		for _, e := range list(c, "env") {
			if str(e, "valueFrom", "fieldRef", "fieldPath") == path {
				return str(e, "name")
			}
		}
		return ""
	}
	podName, podNamespace := fieldVar("metadata.name"), fieldVar("metadata.namespace")
	if podName == "" || podNamespace == "" {
		t.Fatalf("%s: no env entries with the pod's metadata.name and metadata.namespace", key)
	}
	if v, want := str(env["PLATFORM_CLUSTER_WORKER_ID"], "value"), "$("+podName+")"; v != want {
		t.Errorf("%s: cluster.worker_id %q, want %q, the pod's name", key, v, want)
	}
	if v, want := str(env["PLATFORM_CLUSTER_ADVERTISE_URL"], "value"), "http://$("+podName+")."+svcName+".$("+podNamespace+").svc:"+port; v != want {
		t.Errorf("%s: cluster.advertise_url %q, want %q, the pod's DNS name through %s", key, v, want, svcName)
	}
	if n, _ := strconv.Atoi(port); !containerPort(d, n) {
		t.Errorf("%s: http.addr's port %s is no container port", key, port)
	}
	slots := mapping(env["PLATFORM_CLUSTER_SLOTS"], "valueFrom", "resourceFieldRef")
	if slots["resource"] != "limits.cpu" || slots["containerName"] != str(c, "name") {
		t.Errorf("%s: cluster.slots from %v, want the container's limits.cpu", key, slots)
	}
}

// checkEnv checks a container's env entries: each is a configuration
// key's variable, or one the Downward API fills that a later entry uses
// as $(NAME); and each $(NAME) names an entry before it, since Kubernetes
// leaves any other reference as it is.
func checkEnv(t *testing.T, name string, entries []any, keys []string) {
	t.Helper()
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	used := map[string]bool{}
	var before []string
	for _, e := range entries {
		for _, m := range ref.FindAllStringSubmatch(str(e, "value"), -1) {
			if !slices.Contains(before, m[1]) {
				t.Errorf("%s: %s uses $(%s), which no entry before it sets", name, str(e, "name"), m[1])
			}
			used[m[1]] = true
		}
		before = append(before, str(e, "name"))
	}
	for _, e := range entries {
		n := str(e, "name")
		if envKey(keys, n) != "" {
			continue
		}
		if str(e, "valueFrom", "fieldRef", "fieldPath") == "" || !used[n] {
			t.Errorf("%s: %s is no configuration key's variable, nor a pod field another entry uses", name, n)
		}
	}
}

func subset(sel, labels map[string]any) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// containerPort says whether port (a name or a number) is a port of one of
// the workload's containers.
func containerPort(workload map[string]any, port any) bool {
	for _, c := range list(workload, "spec", "template", "spec", "containers") {
		for _, p := range list(c, "ports") {
			if mapping(p)["name"] == port || mapping(p)["containerPort"] == port {
				return true
			}
		}
	}
	return false
}

// checkWorkload checks a workload and returns the platform configuration
// file its container reads.
func checkWorkload(t *testing.T, key string, d map[string]any, objects map[string]map[string]any, rs, keys []string) (settings map[string]any) {
	t.Helper()
	if !subset(mapping(d, "spec", "selector", "matchLabels"), mapping(d, "spec", "template", "metadata", "labels")) || len(mapping(d, "spec", "selector", "matchLabels")) == 0 {
		t.Errorf("%s: selector does not match its pod template's labels", key)
	}
	pod := mapping(d, "spec", "template", "spec")
	if v, _ := get(pod, "securityContext", "runAsNonRoot"); v != true {
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", key)
	}
	if uid, _ := get(pod, "securityContext", "runAsUser"); uid == 0 {
		t.Errorf("%s: runs as root", key)
	}
	volumes := map[string]map[string]any{}
	for _, v := range list(pod, "volumes") {
		volumes[str(v, "name")] = mapping(v)
	}
	for _, v := range list(d, "spec", "volumeClaimTemplates") {
		volumes[str(v, "metadata", "name")] = mapping(v)
	}
	containers := list(pod, "containers")
	if len(containers) == 0 {
		t.Fatalf("%s has no containers", key)
	}
	for _, c := range containers {
		name := key + " container " + str(c, "name")
		if !regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+$`).MatchString(str(c, "image")) {
			t.Errorf("%s: image %q, want name:tag", name, str(c, "image"))
		}
		if v, _ := get(c, "securityContext", "allowPrivilegeEscalation"); v != false {
			t.Errorf("%s: allowPrivilegeEscalation is not false", name)
		}
		if v, _ := get(c, "securityContext", "runAsNonRoot"); v != true {
			t.Errorf("%s: securityContext.runAsNonRoot is not true", name)
		}
		if caps := stringList(t, name+" capabilities.drop", mapping(c, "securityContext", "capabilities")["drop"]); !slices.Equal(caps, []string{"ALL"}) {
			t.Errorf("%s: capabilities.drop %q, want ALL", name, caps)
		}
		for _, r := range []string{"cpu", "memory"} {
			if str(c, "resources", "limits", r) == "" || str(c, "resources", "requests", r) == "" {
				t.Errorf("%s: no %s request and limit", name, r)
			}
		}
		probes := map[string]string{}
		for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
			path := str(c, probe, "httpGet", "path")
			probes[probe] = path
			if !slices.Contains(rs, path) {
				t.Errorf("%s: %s path %q is no route of the platform", name, probe, path)
			}
			if port := mapping(c, probe, "httpGet")["port"]; !containerPort(d, port) {
				t.Errorf("%s: %s port %v is no container port", name, probe, port)
			}
		}
		if probes["livenessProbe"] != "/healthz" || probes["readinessProbe"] != "/readyz" {
			t.Errorf("%s: probes %v, want liveness on /healthz and readiness on /readyz", name, probes)
		}
		checkEnv(t, name, list(c, "env"), keys)
		args := stringList(t, name+" args", mapping(c)["args"])
		if len(args) == 0 || args[0] != "serve" {
			t.Errorf("%s: args %q, want serve", name, args)
		}
		config := flagValue(args, "--config")
		var mountedConfig bool
		for _, m := range list(c, "volumeMounts") {
			v := volumes[str(m, "name")]
			if v == nil {
				t.Errorf("%s: mounts volume %s, which the pod does not declare", name, str(m, "name"))
				continue
			}
			cm := str(v, "configMap", "name")
			if cm == "" {
				continue
			}
			obj := objects["ConfigMap/"+cm]
			if obj == nil {
				t.Errorf("%s: ConfigMap %s does not exist", name, cm)
				continue
			}
			for file, text := range mapping(obj, "data") {
				if filepath.Join(str(m, "mountPath"), file) != config {
					continue
				}
				mountedConfig = true
				if err := yaml.Unmarshal([]byte(text.(string)), &settings); err != nil {
					t.Fatalf("%s: ConfigMap %s %s: %v", name, cm, file, err)
				}
				for k := range settings {
					if !slices.Contains(keys, k) {
						t.Errorf("ConfigMap %s %s: %s is no configuration key", cm, file, k)
					}
				}
				if settings["nats.url"] != "nats://nats:4222" {
					t.Errorf("ConfigMap %s: nats.url %v, want the NATS chart's Service nats", cm, settings["nats.url"])
				}
				var dataMount bool
				for _, m := range list(c, "volumeMounts") {
					dataMount = dataMount || str(m, "mountPath") == settings["data_dir"]
				}
				if !dataMount {
					t.Errorf("%s: data_dir %v is not a mounted volume", name, settings["data_dir"])
				}
			}
		}
		if !mountedConfig {
			t.Errorf("%s: --config %q is no file of a mounted ConfigMap", name, config)
		}
	}
	return settings
}
