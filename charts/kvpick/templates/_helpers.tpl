{{/*
The picker's name: Deployment, Service, ServiceAccount and ConfigMap all use it, and the InferencePool's
endpointPickerRef points at it. "<release>-epp" as the reference chart names it, so tooling that expects that
name keeps working.
*/}}
{{- define "kvpick.name" -}}
{{- $base := .Release.Name | lower | trim | trunc 40 | trimSuffix "-" -}}
{{ $base }}-epp
{{- end -}}

{{/* The InferencePool's name: the release name, as in the reference chart. */}}
{{- define "kvpick.poolName" -}}
{{ .Release.Name }}
{{- end -}}

{{/* A cluster-scoped name: release and namespace, so two releases never collide. */}}
{{- define "kvpick.clusterName" -}}
{{- printf "%s-%s-epp" (.Release.Name | trunc 40) (.Release.Namespace | trunc 40) | trunc 84 | trimSuffix "-" -}}
{{- end -}}

{{- define "kvpick.labels" -}}
app.kubernetes.io/name: kvpick
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}

{{- define "kvpick.selectorLabels" -}}
app.kubernetes.io/name: kvpick
inferencepool: {{ include "kvpick.name" . }}
{{- end -}}

{{- define "kvpick.image" -}}
{{- $img := .Values.inferenceExtension.image -}}
{{- $tag := $img.tag | default .Chart.AppVersion -}}
{{- if $img.registry -}}
{{ $img.registry }}/{{ $img.repository }}:{{ $tag }}
{{- else -}}
{{ $img.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* Leader election is on with more than one replica (active-passive), as in the reference chart. */}}
{{- define "kvpick.ha" -}}
{{- if and (gt (int .Values.inferenceExtension.replicas) 1) (not (include "kvpick.replicaSync" .)) }}true{{ end -}}
{{- end -}}

{{- define "kvpick.replicaSync" -}}
{{- with .Values.inferenceExtension.replicaSync }}{{ if .enabled }}true{{ end }}{{ end -}}
{{- end -}}

{{- define "kvpick.peerSecret" -}}
{{- .Values.inferenceExtension.replicaSync.secretName | default (printf "%s-peer-secret" (include "kvpick.name" .)) -}}
{{- end -}}

{{- define "kvpick.metricsAuth" -}}
{{- if .Values.inferenceExtension.monitoring.prometheus.auth.enabled }}true{{ end -}}
{{- end -}}

{{- define "kvpick.gatewayName" -}}
{{- .Values.experimentalHttpRoute.inferenceGatewayName | trunc 63 | trimSuffix "-" -}}
{{- end -}}
