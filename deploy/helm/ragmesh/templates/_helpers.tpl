{{/* The six gRPC stages, in shared/config.py's order. */}}
{{- define "ragmesh.stages" -}}
gateway chunker indexer retriever reranker generator
{{- end }}

{{/* The stages behind the gateway: mutual TLS when tls.enabled (shared/tls.py MTLS_STAGES). */}}
{{- define "ragmesh.mtlsStages" -}}
chunker indexer retriever reranker generator
{{- end }}

{{- define "ragmesh.name" -}}
ragmesh
{{- end }}

{{/* <release>-ragmesh, or the release name when it already says ragmesh; DNS labels stay under 63 chars. */}}
{{- define "ragmesh.fullname" -}}
{{- if contains "ragmesh" .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-ragmesh" .Release.Name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* A component's name: ragmesh.component (dict "root" $ "component" "retriever"). */}}
{{- define "ragmesh.component" -}}
{{- printf "%s-%s" (include "ragmesh.fullname" .root) .component }}
{{- end }}

{{- define "ragmesh.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ragmesh.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "ragmesh.labels" -}}
{{ include "ragmesh.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: ragmesh
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "ragmesh.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* Environment variables are RAGMESH_<STAGE>_<FIELD> (shared/config.py). */}}
{{- define "ragmesh.envPrefix" -}}
{{- printf "RAGMESH_%s" (upper .) }}
{{- end }}

{{/* Where the gateway finds a stage, as RAGMESH_<STAGE>_ADDR: with gateway.balanceOverPods, the stage's headless
Service as a dns:/// target (every ready pod's address; the gateway balances its calls round robin over them),
else its ClusterIP Service (one connection, so one pod, per gateway replica). */}}
{{- define "ragmesh.stageAddress" -}}
{{- $port := (index .root.Values.stages .component).port }}
{{- if .root.Values.gateway.balanceOverPods }}
{{- printf "dns:///%s:%v" (include "ragmesh.podsService" .) $port }}
{{- else }}
{{- printf "%s:%v" (include "ragmesh.component" .) $port }}
{{- end }}
{{- end }}

{{/* The headless Service listing a stage's pods (gateway.balanceOverPods). */}}
{{- define "ragmesh.podsService" -}}
{{- printf "%s-pods" (include "ragmesh.component" .) }}
{{- end }}

{{- define "ragmesh.tlsSecret" -}}
{{- required "tls.existingSecret is required when tls.enabled: a Secret with `ragmesh certs` output (README \"Kubernetes\")" .Values.tls.existingSecret }}
{{- end }}

{{- define "ragmesh.opensearchUrlEnv" -}}
{{- if .Values.opensearch.existingSecret }}
- name: OPENSEARCH_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.opensearch.existingSecret }}
      key: {{ .Values.opensearch.existingSecretKey }}
{{- else }}
- name: OPENSEARCH_URL
  value: {{ required "opensearch.url (or opensearch.existingSecret) is required: the chart runs RAGMESH_INDEX=opensearch, since pods cannot share the embedded SQLite index" .Values.opensearch.url | quote }}
{{- end }}
- name: RAGMESH_INDEX
  value: opensearch
- name: RAGMESH_OPENSEARCH_PREFIX
  value: {{ .Values.opensearch.prefix | quote }}
- name: RAGMESH_OPENSEARCH_SHARDS
  value: {{ .Values.opensearch.shards | quote }}
- name: RAGMESH_OPENSEARCH_REPLICAS
  value: {{ .Values.opensearch.replicas | quote }}
- name: RAGMESH_OPENSEARCH_EF_SEARCH
  value: {{ .Values.opensearch.efSearch | quote }}
{{- end }}

{{/* Pod spreading across nodes, so a PodDisruptionBudget and a node loss leave replicas serving. */}}
{{- define "ragmesh.spread" -}}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "ragmesh.selectorLabels" . | nindent 8 }}
{{- end }}
