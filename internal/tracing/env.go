package tracing

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// The hub reads the standard OTEL_* variables through the configuration's
// environment (the process environment in production, a map in tests),
// not the SDK's own os.Getenv, so that what it reports at start-up and
// what it does agree. TLS client certificates are the one part left to the
// SDK's reading of the process environment.

// exporterOptions are the OTLP/HTTP exporter's endpoint, headers, timeout
// and compression, each from its traces-specific variable or the general
// one.
func exporterOptions(getenv func(string) string) ([]otlptracehttp.Option, error) {
	var opts []otlptracehttp.Option
	if endpoint, name := signalOr(getenv, "ENDPOINT"); endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s=%s is not an http(s) URL", name, endpoint)
		}
		if name == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			// The general endpoint is a base; each signal has its path.
			u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		} else if u.Path == "" {
			u.Path = "/"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	}
	if raw, name := signalOr(getenv, "HEADERS"); raw != "" {
		headers, err := parseHeaders(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		opts = append(opts, otlptracehttp.WithHeaders(headers))
	}
	if raw, name := signalOr(getenv, "TIMEOUT"); raw != "" {
		ms, err := strconv.Atoi(raw)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%s=%s must be a positive number of milliseconds", name, raw)
		}
		opts = append(opts, otlptracehttp.WithTimeout(time.Duration(ms)*time.Millisecond))
	}
	if raw, name := signalOr(getenv, "COMPRESSION"); raw != "" {
		switch strings.ToLower(raw) {
		case "gzip":
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		case "none":
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.NoCompression))
		default:
			return nil, fmt.Errorf("%s=%s must be gzip or none", name, raw)
		}
	}
	return opts, nil
}

// signalOr is OTEL_EXPORTER_OTLP_TRACES_<suffix>, else
// OTEL_EXPORTER_OTLP_<suffix>, with the name of the one that was set.
func signalOr(getenv func(string) string, suffix string) (value, name string) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + suffix, "OTEL_EXPORTER_OTLP_" + suffix} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, name
		}
	}
	return "", ""
}

// parseHeaders reads W3C Baggage-style "k=v,k2=v2" with URL-encoded values.
func parseHeaders(raw string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(raw, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("header %q is not key=value", strings.TrimSpace(pair))
		}
		value, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("header %s: value is not URL-encoded", k)
		}
		out[k] = value
	}
	return out, nil
}

// newResource is service.name (OTEL_SERVICE_NAME, else hubctl),
// service.version and OTEL_RESOURCE_ATTRIBUTES.
func newResource(getenv func(string) string, version string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{semconv.ServiceVersion(version)}
	if raw := strings.TrimSpace(getenv("OTEL_RESOURCE_ATTRIBUTES")); raw != "" {
		pairs, err := parseHeaders(raw)
		if err != nil {
			return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
		}
		for k, v := range pairs {
			attrs = append(attrs, attribute.String(k, v))
		}
	}
	name := ServiceName
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		name = v
	} else {
		for _, a := range attrs {
			if a.Key == semconv.ServiceNameKey {
				name = a.Value.AsString()
			}
		}
	}
	attrs = append(attrs, semconv.ServiceName(name))
	return resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
}

// sampler is OTEL_TRACES_SAMPLER with OTEL_TRACES_SAMPLER_ARG; the default
// follows the producer's decision and samples root spans (parentbased_always_on).
func sampler(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%s must be a ratio from 0 to 1", arg)
		}
		return r, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		if name == "traceidratio" {
			return sdktrace.TraceIDRatioBased(r), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%s is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio", name)
}

// batchOptions are OTEL_BSP_SCHEDULE_DELAY and OTEL_BSP_EXPORT_TIMEOUT
// (milliseconds) and OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
func batchOptions(getenv func(string) string) ([]sdktrace.BatchSpanProcessorOption, error) {
	var opts []sdktrace.BatchSpanProcessorOption
	for _, v := range []struct {
		name string
		set  func(int) sdktrace.BatchSpanProcessorOption
	}{
		{"OTEL_BSP_SCHEDULE_DELAY", func(n int) sdktrace.BatchSpanProcessorOption {
			return sdktrace.WithBatchTimeout(time.Duration(n) * time.Millisecond)
		}},
		{"OTEL_BSP_EXPORT_TIMEOUT", func(n int) sdktrace.BatchSpanProcessorOption {
			return sdktrace.WithExportTimeout(time.Duration(n) * time.Millisecond)
		}},
		{"OTEL_BSP_MAX_QUEUE_SIZE", sdktrace.WithMaxQueueSize},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", sdktrace.WithMaxExportBatchSize},
	} {
		raw := strings.TrimSpace(getenv(v.name))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s=%s must be a positive integer", v.name, raw)
		}
		opts = append(opts, v.set(n))
	}
	return opts, nil
}
