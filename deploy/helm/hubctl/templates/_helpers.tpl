{{/* Names, labels and the pieces every workload shares. */}}

{{- define "hubctl.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Room is left for the role suffix and the StatefulSet pod ordinal. */}}
{{- define "hubctl.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else if contains (include "hubctl.name" .) .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "hubctl.name" .) | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "hubctl.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hubctl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "hubctl.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "hubctl.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "hubctl.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "hubctl.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "hubctl.fullname" .)) }}
{{- end }}

{{/*
A setting's value as the hub reads it. Helm reads every number in values as
a float, which would print 1048576 as 1.048576e+06: whole numbers print as
integers.
*/}}
{{- define "hubctl.settingValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/* Settings the chart owns: set in `config`, they would be overridden or conflict. */}}
{{- define "hubctl.reservedSettings" -}}
ROLE HTTP_LISTEN_ADDR SHUTDOWN_TIMEOUT KAFKA_INSTANCE_ID POSTGRES_DSN KEK_REF KEK_SOURCE DEV_KEK ADMIN_TOKEN KAFKA_SCRAM_PASSWORD KAFKA_SASL_PASSWORD KAFKA_OAUTH_CLIENT_SECRET HTTP_TLS_CERT_FILE HTTP_TLS_KEY_FILE
{{- if .Values.kafka.tls.secretName }} KAFKA_TLS_CA_FILE KAFKA_TLS_CERT_FILE KAFKA_TLS_KEY_FILE{{ end }}
{{- end }}

{{/* The database connection string, for serve and for migrations. */}}
{{- define "hubctl.postgresEnv" -}}
- name: STREAMING_HUB_POSTGRES_DSN
  valueFrom:
    secretKeyRef:
      name: {{ include "hubctl.secretName" . }}
      key: postgres-dsn
{{- end }}

{{/*
The environment of `hubctl serve` for one role. Called with
(dict "root" $ "name" <role name> "role" <role values>).
*/}}
{{- define "hubctl.serveEnv" -}}
{{- $root := .root -}}
{{- $settings := merge (deepCopy (.role.config | default dict)) ($root.Values.config | default dict) -}}
{{- $reserved := splitList " " (include "hubctl.reservedSettings" $root) -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: STREAMING_HUB_ROLE
  value: {{ .name | quote }}
- name: STREAMING_HUB_HTTP_LISTEN_ADDR
  value: {{ printf ":%d" (int $root.Values.service.port) | quote }}
- name: STREAMING_HUB_SHUTDOWN_TIMEOUT
  value: {{ $root.Values.shutdownTimeout | quote }}
{{- if $root.Values.tls.secretName }}
- name: STREAMING_HUB_HTTP_TLS_CERT_FILE
  value: /etc/hubctl/tls/tls.crt
- name: STREAMING_HUB_HTTP_TLS_KEY_FILE
  value: /etc/hubctl/tls/tls.key
{{- end }}
{{- with $root.Values.kafka.tls }}
{{- if ne (empty .certKey) (empty .keyKey) }}
{{- fail "kafka.tls: certKey and keyKey go together (a client certificate and its key), or both stay empty" }}
{{- end }}
{{- if and .secretName (empty .caKey) (empty .certKey) }}
{{- fail "kafka.tls.secretName names no file: set caKey, or certKey and keyKey (TLS without files is config.KAFKA_TLS_ENABLED)" }}
{{- end }}
{{- /* Any of the files turns TLS on. */}}
{{- if .secretName }}
{{- with .caKey }}
- name: STREAMING_HUB_KAFKA_TLS_CA_FILE
  value: {{ printf "/etc/hubctl/kafka-tls/%s" . | quote }}
{{- end }}
{{- with .certKey }}
- name: STREAMING_HUB_KAFKA_TLS_CERT_FILE
  value: {{ printf "/etc/hubctl/kafka-tls/%s" . | quote }}
{{- end }}
{{- with .keyKey }}
- name: STREAMING_HUB_KAFKA_TLS_KEY_FILE
  value: {{ printf "/etc/hubctl/kafka-tls/%s" . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (ne .name "delivery") $root.Values.kafka.staticMembership }}
- name: STREAMING_HUB_KAFKA_INSTANCE_ID
  value: "$(POD_NAMESPACE).$(POD_NAME)"
{{- end }}
{{- range $key := keys $settings | sortAlpha }}
{{- if has $key $reserved }}
{{- fail (printf "config.%s is set by the chart itself; see values.yaml" $key) }}
{{- end }}
{{- if hasPrefix "STREAMING_HUB_" $key }}
{{- fail (printf "config.%s: write setting names without the STREAMING_HUB_ prefix" $key) }}
{{- end }}
- name: STREAMING_HUB_{{ $key }}
  value: {{ include "hubctl.settingValue" (get $settings $key) | quote }}
{{- end }}
{{ include "hubctl.postgresEnv" $root }}
- name: STREAMING_HUB_KEK_REF
  value: HUB_KEK
- name: HUB_KEK
  valueFrom:
    secretKeyRef:
      name: {{ include "hubctl.secretName" $root }}
      key: kek
- name: STREAMING_HUB_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "hubctl.secretName" $root }}
      key: admin-token
      optional: true
- name: STREAMING_HUB_KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "hubctl.secretName" $root }}
      key: kafka-sasl-password
      optional: true
- name: STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "hubctl.secretName" $root }}
      key: kafka-oauth-client-secret
      optional: true
{{- /* The revision-1 key, for Secrets made before KAFKA_SASL_*. */}}
- name: STREAMING_HUB_KAFKA_SCRAM_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "hubctl.secretName" $root }}
      key: kafka-scram-password
      optional: true
{{- end }}

{{/* The migrations container, for the init container and the hook Job. */}}
{{- define "hubctl.migrateContainer" -}}
- name: migrate
  image: {{ include "hubctl.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: [migrate, up]
  env:
    {{- include "hubctl.postgresEnv" . | nindent 4 }}
  resources:
    {{- toYaml .Values.migrations.resources | nindent 4 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
{{- end }}

{{/* Scheduling and security shared by every pod. */}}
{{- define "hubctl.podCommon" -}}
automountServiceAccountToken: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The listener's scheme: HTTPS once tls.secretName is given. */}}
{{- define "hubctl.scheme" -}}
{{- if .Values.tls.secretName }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}

{{/* Roles in the order they are rendered. */}}
{{- define "hubctl.roleNames" -}}
all ingest delivery
{{- end }}

{{/* Whole seconds of a Go duration written as <n>s, <n>m or <n>h (e.g. 30s, 2m). */}}
{{- define "hubctl.durationSeconds" -}}
{{- $d := toString . -}}
{{- if regexMatch "^[0-9]+s$" $d -}}
{{- trimSuffix "s" $d | int -}}
{{- else if regexMatch "^[0-9]+m$" $d -}}
{{- mul (trimSuffix "m" $d | int) 60 -}}
{{- else if regexMatch "^[0-9]+h$" $d -}}
{{- mul (trimSuffix "h" $d | int) 3600 -}}
{{- else -}}
{{- fail (printf "shutdownTimeout %q: write it as whole seconds, minutes or hours, e.g. 30s or 2m" $d) -}}
{{- end -}}
{{- end }}

{{/*
The secrets every install needs, checked before anything else renders so the
first line `helm install` prints says what to add, not which template broke.
*/}}
{{- define "hubctl.requireSecrets" -}}
{{- $s := .Values.secrets }}
{{- if not $s.existingSecret }}
{{- $missing := list }}
{{- if not $s.postgresDSN }}{{ $missing = append $missing "secrets.postgresDSN" }}{{ end }}
{{- if not $s.kek }}{{ $missing = append $missing "secrets.kek" }}{{ end }}
{{- with $missing }}
{{- fail (printf "hubctl needs its secrets (%s missing): add --set secrets.existingSecret=hubctl-secrets, a Secret with the keys postgres-dsn and kek (see the chart's README), or set secrets.postgresDSN and secrets.kek" (join " and " .)) }}
{{- end }}
{{- end }}
{{- end }}
