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
vCluster's marker on its cluster-scoped host copies, the label vcluster.loft.sh/managed-by:
translate.SafeConcatName(<vCluster namespace>, "x", <vCluster name>) of v0.34, byte for byte: the
parts joined with "-"; beyond 63 bytes the first 52, "-" and the first 10 hex digits of the
joined string's sha256, with every ".-" then made "-" (docs/decisions.md KND-100). The argument is
a dict with "name" and "namespace".
*/}}
{{- define "vgate.clusterMarker" -}}
{{- $joined := printf "%s-x-%s" .namespace .name -}}
{{- if gt (len $joined) 63 -}}
{{- printf "%s-%s" (trunc 52 $joined) (trunc 10 (sha256sum $joined)) | replace ".-" "-" -}}
{{- else -}}
{{- $joined -}}
{{- end -}}
{{- end }}

{{/*
The sync.toHost kinds patches.config has patches for, as YAML `kinds: [{group, resource, scope}]`:
in vCluster's field order (webhook/src/config/patch-kinds.ts), then its customResources by name,
all Namespaced: an entry with another scope fails with vgate's (and vCluster's) message, as
vgate's config loader refuses it (docs/decisions.md KND-90). Endpoints bring their
EndpointSlices, unless the config patches those itself (/mutate/endpoints does the same).
*/}}
{{- define "vgate.patchKinds" -}}
{{- $toHost := dig "sync" "toHost" (dict) (fromYaml .Values.patches.config) -}}
{{- $table := list "pods::pods:Namespaced" "secrets::secrets:Namespaced" "configMaps::configmaps:Namespaced" "ingresses:networking.k8s.io:ingresses:Namespaced" "gatewayApi.httpRoutes:gateway.networking.k8s.io:httproutes:Namespaced" "gatewayApi.gateways:gateway.networking.k8s.io:gateways:Namespaced" "gatewayApi.tlsRoutes:gateway.networking.k8s.io:tlsroutes:Namespaced" "gatewayApi.backendTLSPolicies:gateway.networking.k8s.io:backendtlspolicies:Namespaced" "gatewayApi.referenceGrants:gateway.networking.k8s.io:referencegrants:Namespaced" "services::services:Namespaced" "endpoints::endpoints:Namespaced" "endpointSlices:discovery.k8s.io:endpointslices:Namespaced" "networkPolicies:networking.k8s.io:networkpolicies:Namespaced" "persistentVolumeClaims::persistentvolumeclaims:Namespaced" "persistentVolumes::persistentvolumes:Cluster" "volumeSnapshots:snapshot.storage.k8s.io:volumesnapshots:Namespaced" "volumeSnapshotContents:snapshot.storage.k8s.io:volumesnapshotcontents:Cluster" "storageClasses:storage.k8s.io:storageclasses:Cluster" "serviceAccounts::serviceaccounts:Namespaced" "podDisruptionBudgets:policy:poddisruptionbudgets:Namespaced" "priorityClasses:scheduling.k8s.io:priorityclasses:Cluster" "namespaces::namespaces:Cluster" "resourceClaims:resource.k8s.io:resourceclaims:Namespaced" "resourceClaimTemplates:resource.k8s.io:resourceclaimtemplates:Namespaced" -}}
{{- $kinds := list -}}
{{- range $row := $table -}}
{{- $p := splitList ":" $row -}}
{{- /* The key is a path of keys for the Gateway API kinds (gatewayApi.httpRoutes). */ -}}
{{- $node := $toHost -}}
{{- range $key := splitList "." (index $p 0) -}}
{{- $node = ternary (get (ternary $node (dict) (kindIs "map" $node)) $key) (dict) (kindIs "map" $node) -}}
{{- end -}}
{{- if and (kindIs "map" $node) (get $node "patches") -}}
{{- $kinds = append $kinds (dict "group" (index $p 1) "resource" (index $p 2) "scope" (index $p 3)) -}}
{{- if and (eq (index $p 0) "endpoints") (not (dig "endpointSlices" "patches" (list) $toHost)) -}}
{{- $kinds = append $kinds (dict "group" "discovery.k8s.io" "resource" "endpointslices" "scope" "Namespaced") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $custom := dig "customResources" (dict) $toHost -}}
{{- range $name := keys $custom | sortAlpha -}}
{{- $entry := get $custom $name -}}
{{- $entry = ternary $entry (dict) (kindIs "map" $entry) -}}
{{- $scope := dig "scope" "" $entry -}}
{{- if and (kindIs "string" $scope) (ne $scope "") (ne $scope "Namespaced") -}}
{{- fail (printf "patches.config: unsupported scope %s for sync.toHost.customResources['%s'].scope. Only 'Namespaced' is allowed" $scope $name) -}}
{{- end -}}
{{- if dig "patches" (list) $entry -}}
{{- $parts := splitn "." 2 $name -}}
{{- $kinds = append $kinds (dict "group" (default "" $parts._1) "resource" $parts._0 "scope" "Namespaced") -}}
{{- end -}}
{{- end -}}
{{- if not $kinds -}}
{{- fail "patches.config has no sync.toHost patches: there is no kind to register" -}}
{{- end -}}
{{- toYaml (dict "kinds" $kinds) -}}
{{- end }}

{{/*
The webhook rules of /mutate/patches for the kinds of "vgate.patchKinds" of one scope: the
argument is a dict with "root" (the chart's context) and "scope" (Namespaced or Cluster). Empty
when the config patches no kind of that scope.
*/}}
{{- define "vgate.patchRules" -}}
{{- $scope := .scope -}}
{{- range (fromYaml (include "vgate.patchKinds" .root)).kinds -}}
{{- if eq .scope $scope }}
- apiGroups: [{{ .group | quote }}]
  apiVersions: ["*"]
  resources: [{{ .resource | quote }}]
  operations: ["CREATE", "UPDATE"]
  scope: {{ $scope }}
{{- end -}}
{{- end -}}
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
