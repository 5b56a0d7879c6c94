{{/*
Labels every object gets: kustomize's app.kubernetes.io/part-of (manifests/kustomization.yaml
`labels:`) and Helm's own. Never in selectors or pod templates: a Deployment's selector cannot
change, and the release must not roll the pods.
*/}}
{{- define "vgate.labels" -}}
app.kubernetes.io/part-of: vgate
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "vgate.webhookLabels" -}}
app.kubernetes.io/name: vgate
app.kubernetes.io/component: webhook
{{- end }}

{{- define "vgate.syncLabels" -}}
app.kubernetes.io/name: vgate
app.kubernetes.io/component: sync
{{- end }}

{{- define "vgate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "vgate.group" -}}
management.{{ .Values.groupDomain }}
{{- end }}

{{/* The pod security context of vgate's pods: the restricted Pod Security Standard. */}}
{{- define "vgate.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "vgate.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
{{- end }}

{{/* What every webhook of vgate's shares (manifests/webhook-configurations.yaml says why). */}}
{{- define "vgate.webhookCommon" -}}
admissionReviewVersions: ["v1"]
sideEffects: None
failurePolicy: Fail
matchPolicy: Equivalent
{{- end }}

{{/* kube-system and vgate's own namespace are never sent to vgate's webhooks. */}}
{{- define "vgate.excludedNamespaces" -}}
- key: kubernetes.io/metadata.name
  operator: NotIn
  values: ["kube-system", {{ .Release.Namespace | quote }}]
{{- end }}

{{/*
The vcluster.yaml values of the webhook's config: patches (every kind) or endpoints (Endpoints
only), never both, as the kustomize components (overlays/patches, overlays/endpoints).
*/}}
{{- define "vgate.configValues" -}}
{{- if and .Values.endpoints.enabled .Values.patches.enabled -}}
{{- fail "endpoints.enabled and patches.enabled are both true: choose one (patches serves the Endpoints patches too)" -}}
{{- end -}}
{{- toYaml (ternary .Values.patches .Values.endpoints .Values.patches.enabled) -}}
{{- end }}

{{/*
The webhook rules of /mutate/patches: one per sync.toHost kind the config has patches for, in
vCluster's field order (webhook/src/config/patch-kinds.ts), then its customResources by name. Endpoints
bring their EndpointSlices, unless the config patches those itself (/mutate/endpoints does the same).
The cluster-scoped kinds are not registered here (docs/decisions.md KND-16).
*/}}
{{- define "vgate.patchRules" -}}
{{- $toHost := dig "sync" "toHost" (dict) (fromYaml .Values.patches.config) -}}
{{- $namespaced := list "pods::pods" "secrets::secrets" "configMaps::configmaps" "ingresses:networking.k8s.io:ingresses" "services::services" "endpoints::endpoints" "endpointSlices:discovery.k8s.io:endpointslices" "networkPolicies:networking.k8s.io:networkpolicies" "persistentVolumeClaims::persistentvolumeclaims" "volumeSnapshots:snapshot.storage.k8s.io:volumesnapshots" "serviceAccounts::serviceaccounts" "podDisruptionBudgets:policy:poddisruptionbudgets" "resourceClaims:resource.k8s.io:resourceclaims" "resourceClaimTemplates:resource.k8s.io:resourceclaimtemplates" -}}
{{- $rules := list -}}
{{- range $row := $namespaced -}}
{{- $p := splitList ":" $row -}}
{{- if dig (index $p 0) "patches" (list) $toHost -}}
{{- $rules = append $rules (list (index $p 1) (index $p 2)) -}}
{{- if and (eq (index $p 0) "endpoints") (not (dig "endpointSlices" "patches" (list) $toHost)) -}}
{{- $rules = append $rules (list "discovery.k8s.io" "endpointslices") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $key := list "persistentVolumes" "volumeSnapshotContents" "storageClasses" "priorityClasses" "namespaces" -}}
{{- if dig $key "patches" (list) $toHost -}}
{{- fail (printf "patches.config: sync.toHost.%s is cluster-scoped: charts/vgate registers namespaced kinds only (docs/decisions.md KND-16)" $key) -}}
{{- end -}}
{{- end -}}
{{- $custom := dig "customResources" (dict) $toHost -}}
{{- range $name := keys $custom | sortAlpha -}}
{{- if dig $name "patches" (list) $custom -}}
{{- $parts := splitn "." 2 $name -}}
{{- $rules = append $rules (list (default "" $parts._1) $parts._0) -}}
{{- end -}}
{{- end -}}
{{- if not $rules -}}
{{- fail "patches.config has no sync.toHost patches: there is no kind to register" -}}
{{- end -}}
{{- range $rules }}
- apiGroups: [{{ index . 0 | quote }}]
  apiVersions: ["*"]
  resources: [{{ index . 1 | quote }}]
  operations: ["CREATE", "UPDATE"]
  scope: Namespaced
{{- end }}
{{- end }}

{{/*
The webhook rules of /mutate/patches with --discover-vclusters: one per kind of
discoverVClusters.kinds (`<resource>` or `<resource>.<group>`), in its order. The cluster-scoped
kinds vCluster patches are refused (docs/decisions.md KND-32); `scope: Namespaced` keeps any other
cluster-scoped resource away.
*/}}
{{- define "vgate.discoverRules" -}}
{{- $clusterScoped := list "persistentvolumes" "volumesnapshotcontents.snapshot.storage.k8s.io" "storageclasses.storage.k8s.io" "priorityclasses.scheduling.k8s.io" "namespaces" -}}
{{- range $name := .Values.discoverVClusters.kinds }}
{{- if has $name $clusterScoped }}
{{- fail (printf "discoverVClusters.kinds: %s is cluster-scoped: --discover-vclusters patches namespaced kinds only (docs/decisions.md KND-32)" $name) }}
{{- end }}
{{- $parts := splitn "." 2 $name }}
- apiGroups: [{{ default "" $parts._1 | quote }}]
  apiVersions: ["*"]
  resources: [{{ $parts._0 | quote }}]
  operations: ["CREATE", "UPDATE"]
  scope: Namespaced
{{- end }}
{{- end }}
