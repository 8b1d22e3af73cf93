package deploy

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateObject checks a decoded object with the validation that the
// Kubernetes API publishes as a library: k8s.io/apimachinery's checks of
// object metadata (names, namespaces, labels, annotations), label
// selectors, DNS names, port numbers and names, environment variable
// names, ConfigMap keys, IPs and percentages, applied to the fields where
// the API server applies them. The API server's own validation of the
// apps, core and policy kinds (k8s.io/kubernetes/pkg/apis/.../validation)
// is not importable as a library; the structural rules it adds that
// matter to these manifests are checked here too: enumerations, required
// fields, references within an object (a mount names a volume, a probe a
// port, a selector matches its template), exclusive fields, and requests
// within limits. Objects are validated before the API server's defaulting,
// so a field it would default is allowed to be empty.
func validateObject(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return validateConfigMap(o)
	case *corev1.Service:
		return validateService(o)
	case *appsv1.StatefulSet:
		return validateStatefulSet(o)
	case *policyv1.PodDisruptionBudget:
		return validatePDB(o)
	}
	return field.ErrorList{field.NotSupported(field.NewPath("kind"), obj.GetObjectKind().GroupVersionKind().Kind, []string{"ConfigMap", "Service", "StatefulSet", "PodDisruptionBudget"})}
}

func validateMeta(m *metav1.ObjectMeta, name apivalidation.ValidateNameFunc) field.ErrorList {
	return apivalidation.ValidateObjectMeta(m, true, name, field.NewPath("metadata"))
}

// strs turns the messages of apimachinery's Is* functions into field
// errors.
func strs(p *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(p, value, m))
	}
	return errs
}

func enum[T ~string](p *field.Path, v T, allowEmpty bool, valid ...T) field.ErrorList {
	if v == "" && allowEmpty {
		return nil
	}
	for _, ok := range valid {
		if v == ok {
			return nil
		}
	}
	var names []string
	for _, ok := range valid {
		names = append(names, string(ok))
	}
	return field.ErrorList{field.NotSupported(p, v, names)}
}

func nonNegative[T ~int32 | ~int64](p *field.Path, v *T) field.ErrorList {
	if v == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*v), p)
}

func validateConfigMap(c *corev1.ConfigMap) field.ErrorList {
	errs := validateMeta(&c.ObjectMeta, apivalidation.NameIsDNSSubdomain)
	size := 0
	for k, v := range c.Data {
		errs = append(errs, strs(field.NewPath("data").Key(k), k, validation.IsConfigMapKey(k))...)
		size += len(k) + len(v)
	}
	for k, v := range c.BinaryData {
		p := field.NewPath("binaryData").Key(k)
		errs = append(errs, strs(p, k, validation.IsConfigMapKey(k))...)
		if _, dup := c.Data[k]; dup {
			errs = append(errs, field.Duplicate(p, k))
		}
		size += len(k) + len(v)
	}
	if size > 1<<20 {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", 1<<20))
	}
	return errs
}

func validateService(s *corev1.Service) field.ErrorList {
	errs := validateMeta(&s.ObjectMeta, apivalidation.NameIsDNS1035Label)
	spec := field.NewPath("spec")
	errs = append(errs, enum(spec.Child("type"), s.Spec.Type, true, corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)...)
	switch ip := s.Spec.ClusterIP; {
	case ip == "":
	case ip == corev1.ClusterIPNone:
		if s.Spec.Type != "" && s.Spec.Type != corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Invalid(spec.Child("clusterIP"), ip, "a headless Service must be of type ClusterIP"))
		}
	default:
		errs = append(errs, validation.IsValidIP(spec.Child("clusterIP"), ip)...)
	}
	errs = append(errs, metavalidation.ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	if len(s.Spec.Ports) == 0 && s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	names := sets.New[string]()
	for i, port := range s.Spec.Ports {
		p := spec.Child("ports").Index(i)
		if port.Name == "" && len(s.Spec.Ports) > 1 {
			errs = append(errs, field.Required(p.Child("name"), "a Service with several ports names each"))
		} else if port.Name != "" {
			errs = append(errs, strs(p.Child("name"), port.Name, validation.IsDNS1123Label(port.Name))...)
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		errs = append(errs, strs(p.Child("port"), port.Port, validation.IsValidPortNum(int(port.Port)))...)
		errs = append(errs, enum(p.Child("protocol"), port.Protocol, true, corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)...)
		if port.NodePort != 0 && s.Spec.Type != corev1.ServiceTypeNodePort && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p.Child("nodePort"), "only for NodePort and LoadBalancer Services"))
		}
		// A targetPort of 0 (not set) is the port.
		if port.TargetPort.Type == intstr.String || port.TargetPort.IntVal != 0 {
			errs = append(errs, validatePortNumOrName(p.Child("targetPort"), port.TargetPort)...)
		}
	}
	return errs
}

func validatePortNumOrName(p *field.Path, port intstr.IntOrString) field.ErrorList {
	if port.Type == intstr.Int {
		return strs(p, port.IntVal, validation.IsValidPortNum(int(port.IntVal)))
	}
	return strs(p, port.StrVal, validation.IsValidPortName(port.StrVal))
}

// validateSelector checks a workload's or a PodDisruptionBudget's label
// selector and, given its pod template's labels (at labelsPath), that it
// selects them.
func validateSelector(p *field.Path, sel *metav1.LabelSelector, podLabels map[string]string, labelsPath *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, p)
	if len(errs) > 0 || podLabels == nil {
		return errs
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(errs, field.Invalid(p, sel, err.Error()))
	}
	if s.Empty() {
		errs = append(errs, field.Invalid(p, sel, "empty selector is invalid for a workload"))
	} else if !s.Matches(labels.Set(podLabels)) {
		errs = append(errs, field.Invalid(labelsPath, podLabels, "`selector` does not match template labels"))
	}
	return errs
}

func validateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	// The pods are named after the StatefulSet, and their names are their
	// hostnames: a DNS label, stricter than a subdomain.
	errs := validateMeta(&s.ObjectMeta, apivalidation.NameIsDNSLabel)
	spec := field.NewPath("spec")
	if s.Spec.Replicas != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*s.Spec.Replicas), spec.Child("replicas"))...)
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.Spec.MinReadySeconds), spec.Child("minReadySeconds"))...)
	if s.Spec.ServiceName != "" {
		errs = append(errs, strs(spec.Child("serviceName"), s.Spec.ServiceName, validation.IsDNS1123Label(s.Spec.ServiceName))...)
	}
	errs = append(errs, enum(spec.Child("podManagementPolicy"), s.Spec.PodManagementPolicy, true, appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)...)
	errs = append(errs, enum(spec.Child("updateStrategy", "type"), s.Spec.UpdateStrategy.Type, true, appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)...)
	errs = append(errs, validateSelector(spec.Child("selector"), s.Spec.Selector, s.Spec.Template.Labels, spec.Child("template", "metadata", "labels"))...)

	claims := sets.New[string]()
	for i, c := range s.Spec.VolumeClaimTemplates {
		p := spec.Child("volumeClaimTemplates").Index(i)
		errs = append(errs, strs(p.Child("metadata", "name"), c.Name, validation.IsDNS1123Label(c.Name))...)
		if claims.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("metadata", "name"), c.Name))
		}
		claims.Insert(c.Name)
		if len(c.Spec.AccessModes) == 0 {
			errs = append(errs, field.Required(p.Child("spec", "accessModes"), ""))
		}
		for j, m := range c.Spec.AccessModes {
			errs = append(errs, enum(p.Child("spec", "accessModes").Index(j), m, false, corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)...)
		}
		if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || q.Sign() <= 0 {
			errs = append(errs, field.Required(p.Child("spec", "resources", "requests").Key(string(corev1.ResourceStorage)), "a positive size"))
		}
	}

	t := spec.Child("template")
	errs = append(errs, metavalidation.ValidateLabels(s.Spec.Template.Labels, t.Child("metadata", "labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(s.Spec.Template.Annotations, t.Child("metadata", "annotations"))...)
	errs = append(errs, enum(t.Child("spec", "restartPolicy"), s.Spec.Template.Spec.RestartPolicy, true, corev1.RestartPolicyAlways)...)
	return append(errs, validatePodSpec(&s.Spec.Template.Spec, claims, t.Child("spec"))...)
}

// validatePodSpec checks a pod template's spec; claims are the names of
// the volumes its workload adds (a StatefulSet's volume claim templates).
func validatePodSpec(pod *corev1.PodSpec, claims sets.Set[string], p *field.Path) field.ErrorList {
	errs := nonNegative(p.Child("terminationGracePeriodSeconds"), pod.TerminationGracePeriodSeconds)
	volumes := claims.Clone()
	for i, v := range pod.Volumes {
		vp := p.Child("volumes").Index(i)
		errs = append(errs, strs(vp.Child("name"), v.Name, validation.IsDNS1123Label(v.Name))...)
		if volumes.Has(v.Name) {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		volumes.Insert(v.Name)
		if n := setFields(v.VolumeSource); n != 1 {
			errs = append(errs, field.Invalid(vp, v.Name, fmt.Sprintf("%d volume sources, want one", n)))
		}
		if cm := v.ConfigMap; cm != nil {
			errs = append(errs, strs(vp.Child("configMap", "name"), cm.Name, validation.IsDNS1123Subdomain(cm.Name))...)
		}
	}
	if sc := pod.SecurityContext; sc != nil {
		sp := p.Child("securityContext")
		errs = append(errs, validateIDs(sp, sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot)...)
		if sc.FSGroup != nil {
			errs = append(errs, strs(sp.Child("fsGroup"), *sc.FSGroup, validation.IsValidGroupID(*sc.FSGroup))...)
		}
		errs = append(errs, validateSeccomp(sp.Child("seccompProfile"), sc.SeccompProfile)...)
	}
	for i, c := range pod.TopologySpreadConstraints {
		cp := p.Child("topologySpreadConstraints").Index(i)
		errs = append(errs, validateSpread(cp, c)...)
		if c.LabelSelector != nil {
			errs = append(errs, metavalidation.ValidateLabelSelector(c.LabelSelector, metavalidation.LabelSelectorValidationOptions{}, cp.Child("labelSelector"))...)
		}
	}
	if len(pod.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	containers := sets.New[string]()
	for i, c := range pod.Containers {
		cp := p.Child("containers").Index(i)
		errs = append(errs, strs(cp.Child("name"), c.Name, validation.IsDNS1123Label(c.Name))...)
		if containers.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		containers.Insert(c.Name)
	}
	for i := range pod.Containers {
		errs = append(errs, validateContainer(&pod.Containers[i], &podNames{volumes, containers}, p.Child("containers").Index(i))...)
	}
	return errs
}

// setFields is the number of non-nil pointer fields of a struct: the
// sources set in a VolumeSource, the handlers of a probe.
func setFields(v any) int {
	rv := reflect.ValueOf(v)
	n := 0
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

func validateIDs(p *field.Path, user, group *int64, nonRoot *bool) field.ErrorList {
	var errs field.ErrorList
	if user != nil {
		errs = append(errs, strs(p.Child("runAsUser"), *user, validation.IsValidUserID(*user))...)
		if *user == 0 && nonRoot != nil && *nonRoot {
			errs = append(errs, field.Invalid(p.Child("runAsUser"), *user, "runAsNonRoot is true"))
		}
	}
	if group != nil {
		errs = append(errs, strs(p.Child("runAsGroup"), *group, validation.IsValidGroupID(*group))...)
	}
	return errs
}

func validateSeccomp(p *field.Path, s *corev1.SeccompProfile) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := enum(p.Child("type"), s.Type, false, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined, corev1.SeccompProfileTypeLocalhost)
	if (s.LocalhostProfile != nil) != (s.Type == corev1.SeccompProfileTypeLocalhost) {
		errs = append(errs, field.Invalid(p.Child("localhostProfile"), s.LocalhostProfile, "set for type Localhost, and only then"))
	}
	return errs
}

// validateSpread checks a topology spread constraint but for its label
// selector.
func validateSpread(p *field.Path, c corev1.TopologySpreadConstraint) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew <= 0 {
		errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
	}
	if c.TopologyKey == "" {
		errs = append(errs, field.Required(p.Child("topologyKey"), ""))
	} else {
		errs = append(errs, metavalidation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
	}
	return append(errs, enum(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, false, corev1.DoNotSchedule, corev1.ScheduleAnyway)...)
}

// envFieldPaths are the pod fields the Downward API puts in environment
// variables; metadata.labels['KEY'] and metadata.annotations['KEY'] too.
var (
	envFieldPaths    = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
	envFieldSubPaths = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)
	// envResources are the container resources the Downward API gives.
	envResources = []string{"limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage"}
)

// podNames are the names a container may refer to in its pod.
type podNames struct {
	volumes, containers sets.Set[string]
}

// validateContainer checks a container; pod is nil where its pod is not
// known (a chart's container), and then the container's references to
// volumes, other containers and named ports are not checked.
func validateContainer(c *corev1.Container, pod *podNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	errs = append(errs, enum(p.Child("imagePullPolicy"), c.ImagePullPolicy, true, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)

	ports := sets.New[string]()
	for i, port := range c.Ports {
		pp := p.Child("ports").Index(i)
		errs = append(errs, strs(pp.Child("containerPort"), port.ContainerPort, validation.IsValidPortNum(int(port.ContainerPort)))...)
		if port.HostPort != 0 {
			errs = append(errs, strs(pp.Child("hostPort"), port.HostPort, validation.IsValidPortNum(int(port.HostPort)))...)
		}
		errs = append(errs, enum(pp.Child("protocol"), port.Protocol, true, corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)...)
		if port.Name != "" {
			errs = append(errs, strs(pp.Child("name"), port.Name, validation.IsValidPortName(port.Name))...)
			if ports.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			ports.Insert(port.Name)
		}
	}

	for i, e := range c.Env {
		ep := p.Child("env").Index(i)
		errs = append(errs, strs(ep.Child("name"), e.Name, validation.IsRelaxedEnvVarName(e.Name))...)
		if e.ValueFrom == nil {
			continue
		}
		vp := ep.Child("valueFrom")
		if e.Value != "" {
			errs = append(errs, field.Invalid(vp, "", "may not be set with value"))
		}
		if n := setFields(*e.ValueFrom); n != 1 {
			errs = append(errs, field.Invalid(vp, "", fmt.Sprintf("%d sources, want one", n)))
		}
		if f := e.ValueFrom.FieldRef; f != nil {
			if f.APIVersion != "" && f.APIVersion != "v1" {
				errs = append(errs, field.NotSupported(vp.Child("fieldRef", "apiVersion"), f.APIVersion, []string{"v1"}))
			}
			m := envFieldSubPaths.FindStringSubmatch(f.FieldPath)
			switch {
			case m != nil && m[1] == "labels":
				errs = append(errs, metavalidation.ValidateLabelName(m[2], vp.Child("fieldRef", "fieldPath"))...)
			case m != nil:
				errs = append(errs, strs(vp.Child("fieldRef", "fieldPath"), m[2], content.IsLabelKey(strings.ToLower(m[2])))...)
			default:
				errs = append(errs, enum(vp.Child("fieldRef", "fieldPath"), f.FieldPath, false, envFieldPaths...)...)
			}
		}
		if r := e.ValueFrom.ResourceFieldRef; r != nil {
			rp := vp.Child("resourceFieldRef")
			errs = append(errs, enum(rp.Child("resource"), r.Resource, false, envResources...)...)
			if pod != nil && r.ContainerName != "" && !pod.containers.Has(r.ContainerName) {
				errs = append(errs, field.NotFound(rp.Child("containerName"), r.ContainerName))
			}
			if !r.Divisor.IsZero() && strings.HasSuffix(r.Resource, ".cpu") && r.Divisor.Cmp(resource.MustParse("1m")) != 0 && r.Divisor.Cmp(resource.MustParse("1")) != 0 {
				errs = append(errs, field.NotSupported(rp.Child("divisor"), r.Divisor.String(), []string{"1m", "1"}))
			}
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			errs = append(errs, validateKeyRef(vp.Child("secretKeyRef"), r.Name, r.Key)...)
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			errs = append(errs, validateKeyRef(vp.Child("configMapKeyRef"), r.Name, r.Key)...)
		}
	}

	mounts := sets.New[string]()
	for i, m := range c.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		if pod != nil && !pod.volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if !strings.HasPrefix(m.MountPath, "/") {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be an absolute path"))
		}
		if mounts.Has(m.MountPath) {
			errs = append(errs, field.Duplicate(mp.Child("mountPath"), m.MountPath))
		}
		mounts.Insert(m.MountPath)
		if strings.HasPrefix(m.SubPath, "/") || strings.Contains("/"+m.SubPath+"/", "/../") {
			errs = append(errs, field.Invalid(mp.Child("subPath"), m.SubPath, "must be a relative path within the volume"))
		}
	}

	if pod == nil {
		ports = nil // a chart adds ports of its own
	}
	for _, probe := range []struct {
		name string
		p    *corev1.Probe
	}{{"startupProbe", c.StartupProbe}, {"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}} {
		if probe.p != nil {
			errs = append(errs, validateProbe(probe.p, probe.name != "readinessProbe", ports, p.Child(probe.name))...)
		}
	}

	errs = append(errs, validateResources(c.Resources, p.Child("resources"))...)
	if sc := c.SecurityContext; sc != nil {
		sp := p.Child("securityContext")
		errs = append(errs, validateIDs(sp, sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot)...)
		errs = append(errs, validateSeccomp(sp.Child("seccompProfile"), sc.SeccompProfile)...)
		if sc.Privileged != nil && *sc.Privileged && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
			errs = append(errs, field.Invalid(sp.Child("allowPrivilegeEscalation"), false, "privileged containers escalate"))
		}
	}
	return errs
}

// validateKeyRef checks a reference to a key of a Secret or ConfigMap.
func validateKeyRef(p *field.Path, name, key string) field.ErrorList {
	errs := strs(p.Child("name"), name, validation.IsDNS1123Subdomain(name))
	return append(errs, strs(p.Child("key"), key, validation.IsConfigMapKey(key))...)
}

// validateProbe checks a probe; a liveness or startup probe needs a
// single success. A named port must be one of ports, the container's,
// unless ports is nil.
func validateProbe(pr *corev1.Probe, oneSuccess bool, ports sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := setFields(pr.ProbeHandler); n != 1 {
		errs = append(errs, field.Invalid(p, "", fmt.Sprintf("%d handlers, want one", n)))
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds}, {"periodSeconds", pr.PeriodSeconds}, {"successThreshold", pr.SuccessThreshold}, {"failureThreshold", pr.FailureThreshold}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.v), p.Child(f.name))...)
	}
	if oneSuccess && pr.SuccessThreshold > 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	port := func(pp *field.Path, port intstr.IntOrString) field.ErrorList {
		errs := validatePortNumOrName(pp, port)
		if port.Type == intstr.String && len(errs) == 0 && ports != nil && !ports.Has(port.StrVal) {
			errs = append(errs, field.NotFound(pp, port.StrVal))
		}
		return errs
	}
	if h := pr.HTTPGet; h != nil {
		hp := p.Child("httpGet")
		if !strings.HasPrefix(h.Path, "/") {
			errs = append(errs, field.Invalid(hp.Child("path"), h.Path, "must be an absolute path"))
		}
		errs = append(errs, port(hp.Child("port"), h.Port)...)
		errs = append(errs, enum(hp.Child("scheme"), h.Scheme, true, corev1.URISchemeHTTP, corev1.URISchemeHTTPS)...)
		for i, hdr := range h.HTTPHeaders {
			errs = append(errs, strs(hp.Child("httpHeaders").Index(i).Child("name"), hdr.Name, validation.IsHTTPHeaderName(hdr.Name))...)
		}
	}
	if s := pr.TCPSocket; s != nil {
		errs = append(errs, port(p.Child("tcpSocket", "port"), s.Port)...)
	}
	if g := pr.GRPC; g != nil {
		errs = append(errs, strs(p.Child("grpc", "port"), g.Port, validation.IsValidPortNum(int(g.Port)))...)
	}
	return errs
}

// validateResources checks that requests and limits are of known
// resources, not negative, and that each request is within its limit.
func validateResources(r corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		kind string
		list corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for name, q := range l.list {
			rp := p.Child(l.kind).Key(string(name))
			switch {
			case name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage:
			case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix), strings.Contains(string(name), "/"):
				errs = append(errs, strs(rp, name, content.IsLabelKey(string(name)))...)
			default:
				errs = append(errs, field.NotSupported(rp, name, []string{"cpu", "memory", "ephemeral-storage", "hugepages-SIZE", "DOMAIN/NAME"}))
			}
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(rp, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}

func validatePDB(d *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := validateMeta(&d.ObjectMeta, apivalidation.NameIsDNSSubdomain)
	spec := field.NewPath("spec")
	if d.Spec.MinAvailable != nil && d.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Forbidden(spec.Child("minAvailable"), "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, f := range []struct {
		name string
		v    *intstr.IntOrString
	}{{"minAvailable", d.Spec.MinAvailable}, {"maxUnavailable", d.Spec.MaxUnavailable}} {
		name, v := f.name, f.v
		if v == nil {
			continue
		}
		if v.Type == intstr.Int {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(v.IntVal), spec.Child(name))...)
			continue
		}
		if msgs := validation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			errs = append(errs, strs(spec.Child(name), v.StrVal, msgs)...)
		} else if n, _ := intstr.GetScaledValueFromIntOrPercent(v, 100, false); n > 100 {
			errs = append(errs, field.Invalid(spec.Child(name), v.StrVal, "must not be greater than 100%"))
		}
	}
	if d.Spec.UnhealthyPodEvictionPolicy != nil {
		errs = append(errs, enum(spec.Child("unhealthyPodEvictionPolicy"), *d.Spec.UnhealthyPodEvictionPolicy, false, policyv1.IfHealthyBudget, policyv1.AlwaysAllow)...)
	}
	return append(errs, validateSelector(spec.Child("selector"), d.Spec.Selector, nil, nil)...)
}
