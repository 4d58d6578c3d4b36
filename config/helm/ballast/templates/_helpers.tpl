{{/* Labels on every object of the release. */}}
{{- define "ballast.labels" -}}
app.kubernetes.io/name: ballast
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
{{- end -}}

{{/* The operator's pods (the Deployment selector and the webhook Service's). */}}
{{- define "ballast.selectorLabels" -}}
app.kubernetes.io/name: ballast
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/component: operator
{{- end -}}

{{/* The Valkey pod. */}}
{{- define "ballast.valkeySelectorLabels" -}}
app.kubernetes.io/name: ballast
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/component: valkey
{{- end -}}

{{- define "ballast.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Which history store: valkey, external or sqlite (ballast.validate refuses anything else). */}}
{{- define "ballast.storeMode" -}}
{{- if .Values.valkey.enabled -}}valkey
{{- else if or .Values.store.url .Values.store.existingSecret -}}external
{{- else if .Values.store.sqlite.enabled -}}sqlite
{{- end -}}
{{- end -}}

{{/* Pod-level security context shared by the operator and the hook Jobs: the image's unprivileged user. */}}
{{- define "ballast.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "ballast.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop:
    - ALL
{{- end -}}

{{/*
Rendering fails with a message naming the values to change, before anything reaches the cluster.
*/}}
{{- define "ballast.validate" -}}
{{- $replicas := int .Values.replicaCount -}}
{{- $stores := 0 -}}
{{- if .Values.valkey.enabled }}{{ $stores = add1 $stores }}{{ end -}}
{{- if or .Values.store.url .Values.store.existingSecret }}{{ $stores = add1 $stores }}{{ end -}}
{{- if .Values.store.sqlite.enabled }}{{ $stores = add1 $stores }}{{ end -}}
{{- if eq $stores 0 -}}
{{- fail "no history store: keep valkey.enabled=true (the default), set store.url or store.existingSecret (an external Redis/Valkey), or store.sqlite.enabled=true (one replica)" -}}
{{- end -}}
{{- if gt $stores 1 -}}
{{- fail "choose one history store: valkey.enabled, store.url/store.existingSecret and store.sqlite.enabled exclude each other (set valkey.enabled=false to use an external store or SQLite)" -}}
{{- end -}}
{{- if and .Values.store.url .Values.store.existingSecret -}}
{{- fail "set store.url or store.existingSecret, not both" -}}
{{- end -}}
{{- if and .Values.store.url (not (regexMatch "^rediss?://" .Values.store.url)) -}}
{{- fail (printf "store.url %q: expected redis://… or rediss://…" .Values.store.url) -}}
{{- end -}}
{{- if lt $replicas 1 -}}
{{- fail "replicaCount must be at least 1 (to stop the operator, create the ConfigMap ballast-kill-switch instead: admission needs a replica)" -}}
{{- end -}}
{{- if and (gt $replicas 1) (not .Values.leaderElect) -}}
{{- fail (printf "replicaCount=%d needs leaderElect=true: every replica serves admission, but only the Lease holder may reconcile (without it every replica would resize the same pods)" $replicas) -}}
{{- end -}}
{{- if and (gt $replicas 1) .Values.store.sqlite.enabled -}}
{{- fail (printf "replicaCount=%d needs a shared Redis/Valkey store: with store.sqlite.enabled each replica would keep its own history; use valkey.enabled=true or store.url" $replicas) -}}
{{- end -}}
{{- if and .Values.leaderElect .Values.store.sqlite.enabled -}}
{{- fail "store.sqlite.enabled needs leaderElect=false: ballastd refuses --leader-elect with SQLite (history would fork between replicas)" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) (int .Values.gracefulShutdownTimeout) -}}
{{- fail (printf "terminationGracePeriodSeconds=%d must be longer than gracefulShutdownTimeout=%d, or the kubelet kills the manager before it has released the Lease" (int .Values.terminationGracePeriodSeconds) (int .Values.gracefulShutdownTimeout)) -}}
{{- end -}}
{{- if and .Values.telemetry.otel.enabled (not .Values.telemetry.otel.endpoint) -}}
{{- fail "telemetry.otel.enabled needs telemetry.otel.endpoint (host:port of an OpenTelemetry collector)" -}}
{{- end -}}
{{- if not (has .Values.telemetry.otel.protocol (list "grpc" "http/protobuf")) -}}
{{- fail (printf "telemetry.otel.protocol %q: expected grpc or http/protobuf" .Values.telemetry.otel.protocol) -}}
{{- end -}}
{{- $timeout := int .Values.webhook.timeoutSeconds -}}
{{- if or (lt $timeout 1) (gt $timeout 30) -}}
{{- fail (printf "webhook.timeoutSeconds=%d: the API server accepts 1 to 30" $timeout) -}}
{{- end -}}
{{- if and .Values.defaultMetricsSources.kubeletSummary.enabled (not .Values.rbac.kubeletSummary) -}}
{{- fail "defaultMetricsSources.kubeletSummary.enabled needs rbac.kubeletSummary=true (nodes/proxy get); disable the source or grant it" -}}
{{- end -}}
{{- $period := toString .Values.balancer.reprocessPeriod -}}
{{- if and .Values.balancer.enabled (not (and (regexMatch "^\\+?(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$" $period) (regexMatch "[1-9]" $period))) -}}
{{- fail (printf "balancer.reprocessPeriod %q: expected a Go duration above 0, e.g. 15s or 1m" $period) -}}
{{- end -}}
{{- if .Values.consolidation.enabled -}}
{{- $interval := toString .Values.consolidation.interval -}}
{{- if not (and (regexMatch "^\\+?(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$" $interval) (regexMatch "[1-9]" $interval)) -}}
{{- fail (printf "consolidation.interval %q: expected a Go duration above 0, e.g. 10m or 1h" $interval) -}}
{{- end -}}
{{- if not (has (toString .Values.consolidation.policy) (list "Balanced" "WhenEmptyOrUnderutilized" "WhenEmpty")) -}}
{{- fail (printf "consolidation.policy %q: expected Balanced, WhenEmptyOrUnderutilized or WhenEmpty" (toString .Values.consolidation.policy)) -}}
{{- end -}}
{{- if lt (int .Values.consolidation.k) 1 -}}
{{- fail (printf "consolidation.k=%v: expected a positive integer (Karpenter's is 2)" .Values.consolidation.k) -}}
{{- end -}}
{{- else -}}
{{- if .Values.consolidation.karpenter -}}
{{- fail "consolidation.karpenter=true needs consolidation.enabled=true: the NodePool reads are the advisor's" -}}
{{- end -}}
{{- range .Values.extraArgs -}}
{{- if and (hasPrefix "--controllers=" (toString .)) (regexMatch "(^|[=,])consolidation(,|$)" (toString .)) -}}
{{- fail (printf "consolidation.enabled=false, but extraArgs %q would run the consolidation advisor without its RBAC: set consolidation.enabled=true instead" (toString .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not .Values.balancer.enabled -}}
{{- range .Values.extraArgs -}}
{{- if and (hasPrefix "--controllers=" (toString .)) (not (contains "-balancer" (toString .))) -}}
{{- fail (printf "balancer.enabled=false, but extraArgs %q would run the balancer controller without its RBAC (it comes after the chart's --controllers=*,-balancer): add -balancer to it" (toString .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
