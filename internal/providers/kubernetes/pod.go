package kubernetes

import (
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/provider"
)

// Paths and names inside every Pod (see docs/ARCHITECTURE.md, "The
// Kubernetes provider").
const (
	binDir        = "/.paddock/bin" // emptyDir: the agent and its key, copied by the init container
	runDir        = "/.paddock/run" // emptyDir: what the agent writes (the trust bundle)
	keyDir        = "/.paddock/key" // the Secret's key, in the init container only
	trustDir      = "/.paddock/trust"
	trustName     = "trust.pem"
	shimInImage   = "/paddock-shim" // where ShimImage holds the agent
	agentPath     = binDir + "/paddock-shim"
	sandboxName   = "sandbox" // the sandbox's container
	installName   = "install" // the init container
	startGate     = "dev.paddock/start"
	volWorkspace  = "workspace"
	volTmp        = "tmp"
	volBin        = "bin"
	volRun        = "run"
	volKey        = "key"
	volTrust      = "trust"
	gracePeriod   = int64(1) // Destroy releases compute: nothing in the Pod is kept (the claim is)
	agentPortName = "agent"
)

// binSize bounds the in-memory directory the agent is copied into.
var binSize = resource.NewQuantity(32<<20, resource.BinarySI)

// requests are what the scheduler reserves for a sandbox limited to cpu
// millicores and mem MiB: the limits divided by the overcommit, and never
// nothing.
func (p *Provider) requests(cpu, mem int64) corev1.ResourceList {
	n := max(int64(p.cfg.Overcommit), 1)
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(max(cpu/n, 1), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(max(mem<<20/n, 1<<20), resource.BinarySI),
	}
}

// podFor builds spec's hardened Pod, named name, carrying labels. It is
// created gated (startGate): the scheduler leaves it alone until Start
// lifts the gate, so a created sandbox holds no node, and its Secret and
// NetworkPolicy exist before it runs.
func (p *Provider) podFor(spec provider.Spec, name string, labels map[string]string) *corev1.Pod {
	mem, cpu, tmp := limits(spec.Resources)
	res := corev1.ResourceRequirements{
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(mem<<20, resource.BinarySI),
		},
	}
	res.Requests = p.requests(cpu, mem)
	uid, gid := int64(provider.UserUID), int64(provider.UserGID)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.cfg.Namespace, Labels: labels},
		Spec: corev1.PodSpec{
			SchedulingGates:               []corev1.PodSchedulingGate{{Name: startGate}},
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr(false),
			EnableServiceLinks:            ptr(false),
			TerminationGracePeriodSeconds: ptr(gracePeriod),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr(true),
				RunAsUser:      &uid,
				RunAsGroup:     &gid,
				FSGroup:        &gid,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			NodeSelector: maps.Clone(p.cfg.NodeSelector),
			Tolerations:  slices.Clone(p.cfg.Tolerations),
			Volumes:      p.volumes(spec, name, tmp),
			InitContainers: []corev1.Container{{
				Name:            installName,
				Image:           p.cfg.ShimImage,
				ImagePullPolicy: p.cfg.ImagePullPolicy,
				Command:         []string{shimInImage, "install", binDir, "--key-from", keyDir + "/" + agentauth.KeyFileName},
				Resources:       res,
				SecurityContext: hardened(),
				VolumeMounts: []corev1.VolumeMount{
					{Name: volBin, MountPath: binDir},
					{Name: volKey, MountPath: keyDir, ReadOnly: true},
				},
			}},
			Containers: []corev1.Container{p.sandboxContainer(spec, res)},
		},
	}
	if p.cfg.RuntimeClass != "" {
		pod.Spec.RuntimeClassName = ptr(p.cfg.RuntimeClass)
	}
	return pod
}

// sandboxContainer is the container whose PID 1 is the agent.
func (p *Provider) sandboxContainer(spec provider.Spec, res corev1.ResourceRequirements) corev1.Container {
	cmd := []string{agentPath, "serve",
		"--listen", ":" + strconv.Itoa(AgentPort),
		"--key-file", binDir + "/" + agentauth.KeyFileName,
		"--run-dir", runDir,
		"--user", ""}
	mounts := []corev1.VolumeMount{
		{Name: volWorkspace, MountPath: provider.WorkspacePath},
		// The user's home is the workspace too: it persists, and the image
		// need not have it.
		{Name: volWorkspace, MountPath: provider.UserHome},
		{Name: volTmp, MountPath: "/tmp"},
		// Writable: the agent deletes its key file once read.
		{Name: volBin, MountPath: binDir},
		{Name: volRun, MountPath: runDir},
	}
	if len(spec.TrustedCA) > 0 {
		cmd = append(cmd, "--trust", trustDir+"/"+trustName)
		mounts = append(mounts, corev1.VolumeMount{Name: volTrust, MountPath: trustDir, ReadOnly: true})
	}
	return corev1.Container{
		Name:            sandboxName,
		Image:           spec.Image,
		ImagePullPolicy: p.cfg.ImagePullPolicy,
		Command:         cmd,
		Args:            []string{},
		WorkingDir:      provider.WorkspacePath,
		Env:             containerEnv(spec),
		Ports:           []corev1.ContainerPort{{Name: agentPortName, ContainerPort: AgentPort, Protocol: corev1.ProtocolTCP}},
		Resources:       res,
		SecurityContext: hardened(),
		VolumeMounts:    mounts,
	}
}

// volumes are the Pod's volumes: the workspace claim, a memory-backed
// /tmp of tmpMB, the agent's two emptyDirs, and the Secret's key (for the
// init container) and CA (for the agent), each its own item.
func (p *Provider) volumes(spec provider.Spec, pod string, tmpMB int64) []corev1.Volume {
	secret := func(key string) corev1.VolumeSource {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  secretName(pod),
			Items:       []corev1.KeyToPath{{Key: key, Path: key}},
			DefaultMode: ptr(int32(0o440)),
		}}
	}
	tmp := resource.NewQuantity(tmpMB<<20, resource.BinarySI)
	vols := []corev1.Volume{
		{Name: volWorkspace, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(spec.Workspace)}}},
		{Name: volTmp, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: tmp}}},
		// In memory: a copy of the agent per Pod on the node's disk adds up
		// (16 MiB each); here it counts against the Pod's memory instead.
		{Name: volBin, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: binSize}}},
		{Name: volRun, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: volKey, VolumeSource: secret(agentauth.KeyFileName)},
	}
	if len(spec.TrustedCA) > 0 {
		vols = append(vols, corev1.Volume{Name: volTrust, VolumeSource: secret(trustName)})
	}
	return vols
}

// hardened is every container's security context: no capabilities, no
// privilege escalation, a read-only root, uid/gid 1000, RuntimeDefault
// seccomp (the Pod's too).
func hardened() *corev1.SecurityContext {
	uid, gid := int64(provider.UserUID), int64(provider.UserGID)
	return &corev1.SecurityContext{
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		RunAsNonRoot:             ptr(true),
		RunAsUser:                &uid,
		RunAsGroup:               &gid,
		Privileged:               ptr(false),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// limits are the Pod's memory (MiB) and CPU (millicores), the defaults
// where r has none, and the size of /tmp (MiB), bounded by a part of the
// memory it is counted against.
func limits(r provider.Resources) (memMB, cpuMillis, tmpMB int64) {
	memMB, cpuMillis, tmpMB = r.MemoryMB, r.CPUMillis, r.TmpMB
	if memMB == 0 {
		memMB = DefaultMemoryMB
	}
	if cpuMillis == 0 {
		cpuMillis = DefaultCPUMillis
	}
	if tmpMB == 0 {
		tmpMB = DefaultTmpMB
	}
	return memMB, cpuMillis, min(tmpMB, max(memMB/TmpMemoryDivisor, 1))
}

// containerEnv is the sandbox's environment, sorted: the user's HOME,
// then spec's.
func containerEnv(spec provider.Spec) []corev1.EnvVar {
	env := map[string]string{"HOME": provider.UserHome}
	maps.Copy(env, spec.Env)
	out := make([]corev1.EnvVar, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, corev1.EnvVar{Name: k, Value: env[k]})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
