// The node rig's configuration files for containerd, the CNI plugins, the kubelet and kube-proxy.
// Every path a setting can move is under the rig's directory; docs/reference.md ("The node rig")
// says why each setting that is not a default is there.

/** containerd 1.6 (Debian bookworm), CRI plugin: cgroupfs, a local pause image, runc. */
export function containerdConfig(root: string, cni: string, pauseRef: string): string {
  return `version = 2
root = "${root}/root"
state = "${root}/state"
[grpc]
  address = "${root}/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "${root}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  # Made locally by make images: nothing is pulled.
  sandbox_image = "${pauseRef}"
  enable_unprivileged_ports = true
  # Machines like this one withhold CAP_SYS_RESOURCE, so runc cannot lower oom_score_adj to the
  # sandbox's -998; this clamps every value to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${root}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cni}/net.d"
`;
}

/** A bridge network for the node's pods, addresses from host-local under the rig's directory. */
export function cniConfig(cni: string, podCidr: string): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "vgate-rig",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: `${cni}/ipam`,
            ranges: [[{ subnet: podCidr }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
        { type: "loopback" },
      ],
    },
    null,
    2,
  );
}

export interface KubeletSettings {
  dir: string;
  sock: string;
  pki: string;
  nodeIp: string;
  cgroup: string;
}

export function kubeletConfig(k: KubeletSettings): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# Machines like this one run cgroup v1 (hybrid); kubelet 1.36 refuses it unless told otherwise.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: ${k.cgroup}
containerRuntimeEndpoint: unix://${k.sock}
address: ${k.nodeIp}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: ${k.pki}/kubelet.crt
tlsPrivateKeyFile: ${k.pki}/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${k.pki}/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
failSwapOn: false
podLogsDir: ${k.dir}/pod-logs
resolvConf: /etc/resolv.conf
# A test machine's disk is often fuller than the defaults allow; no image may be collected either
# (nothing can be pulled back).
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
`;
}

export function kubeProxyConfig(kubeconfig: string, clusterCidr: string, node: string): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "${kubeconfig}"}
mode: iptables
clusterCIDR: ${clusterCidr}
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Leave nf_conntrack_max as it is: the sysctl is not per network namespace.
conntrack: {maxPerCore: 0}
hostnameOverride: ${node}
`;
}
