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
