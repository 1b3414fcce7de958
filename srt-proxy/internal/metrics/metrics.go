// Package metrics counts what srt-proxy does, for Prometheus: it
// implements proxy.Observer (connections, decisions by outcome and
// reason, bytes, open tunnels, errors), times the decider (Asker), and
// serves the counts in the Prometheus text format (Handler). Every metric
// is listed in docs/srt-proxy.md; its labels take a few fixed values, never
// a host name or a decider's free-text reason.
//
//	proxy.Server ── Observer ──▶ Metrics ◀── Asker (decider latency)
//	                                │
//	         GET /metrics ──────────┘  (Handler, on --metrics-listen)
package metrics

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/srt-sandbox/srt-proxy/internal/proxy"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// Metrics are one srt-proxy's counts. The zero value is not usable; make
// one with New.
type Metrics struct {
	reg             *prometheus.Registry
	connections     prometheus.Counter
	connectionsOpen prometheus.Gauge
	decisions       *prometheus.CounterVec
	bytes           *prometheus.CounterVec
	tunnelsOpen     *prometheus.GaugeVec
	errors          *prometheus.CounterVec
	deciderLatency  *prometheus.HistogramVec
}

// deciderBuckets are the decider latency histogram's upper bounds, in
// seconds: a local decider answers in tens of microseconds, a slow one
// takes up to the verdict timeout (5 s by default).
var deciderBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// New makes the metrics, registered with a registry of their own along
// with the process collector (process_*).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		connections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "srt_proxy_connections_total",
			Help: "Client connections accepted.",
		}),
		connectionsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "srt_proxy_connections_open",
			Help: "Client connections open now.",
		}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "srt_proxy_decisions_total",
			Help: "Decision records (one per plain-HTTP request, tunnel, and request inside a TLS-terminated tunnel), by kind, outcome (allow, deny, fail) and reason.",
		}, []string{"kind", "outcome", "reason"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "srt_proxy_bytes_total",
			Help: "Bytes relayed, counted when a request or tunnel ends: up is client to upstream, down upstream to client (bodies, for HTTP).",
		}, []string{"direction"}),
		tunnelsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "srt_proxy_tunnels_open",
			Help: "Tunnels open now, by kind (connect, socks: relayed as they are; terminated: TLS-terminated).",
		}, []string{"kind"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "srt_proxy_errors_total",
			Help: "Failures, by kind: each failed decision's reason, and accept for a listener that failed to accept.",
		}, []string{"kind"}),
		deciderLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "srt_proxy_decider_latency_seconds",
			Help:    "Time from asking the decider to its verdict (a body it asked to see read in between), by verdict (allow, deny, none: it timed out or is unavailable).",
			Buckets: deciderBuckets,
		}, []string{"verdict"}),
	}
	// The series of fixed labels exist from the start, at 0.
	for _, d := range []string{"up", "down"} {
		m.bytes.WithLabelValues(d)
	}
	for _, k := range []string{serve.TunnelConnect, serve.TunnelSOCKS, serve.TunnelTerminated} {
		m.tunnelsOpen.WithLabelValues(k)
	}
	m.reg.MustRegister(m.connections, m.connectionsOpen, m.decisions, m.bytes, m.tunnelsOpen, m.errors, m.deciderLatency,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ConnOpened implements proxy.Observer.
func (m *Metrics) ConnOpened() {
	m.connections.Inc()
	m.connectionsOpen.Inc()
}

// ConnClosed implements proxy.Observer.
func (m *Metrics) ConnClosed() { m.connectionsOpen.Dec() }

// TunnelOpened implements proxy.Observer.
func (m *Metrics) TunnelOpened(kind string) { m.tunnelsOpen.WithLabelValues(kind).Inc() }

// TunnelClosed implements proxy.Observer.
func (m *Metrics) TunnelClosed(kind string) { m.tunnelsOpen.WithLabelValues(kind).Dec() }

// Decided implements proxy.Observer.
func (m *Metrics) Decided(d proxy.Decision) {
	m.decisions.WithLabelValues(d.Kind, d.Outcome, d.Reason).Inc()
	if d.Up > 0 {
		m.bytes.WithLabelValues("up").Add(float64(d.Up))
	}
	if d.Down > 0 {
		m.bytes.WithLabelValues("down").Add(float64(d.Down))
	}
	if d.Outcome == proxy.OutcomeFail {
		m.errors.WithLabelValues(d.Reason).Inc()
	}
}

// AcceptFailed implements proxy.Observer.
func (m *Metrics) AcceptFailed() { m.errors.WithLabelValues("accept").Inc() }

// Asker is an Asker that times each question it passes on.
type Asker struct {
	ask.Asker
	Metrics *Metrics
}

// Ask asks the Asker it wraps and records how long the verdict took. A
// request the proxy refuses before a verdict (one the protocol cannot
// carry, a body the method should not have) is not a decider's latency.
func (a Asker) Ask(ctx context.Context, r *ask.Request) (ask.Verdict, error) {
	start := time.Now()
	v, err := a.Asker.Ask(ctx, r)
	var unaskable *ask.UnaskableError
	verdict := "allow"
	switch {
	case errors.As(err, &unaskable), errors.Is(err, ask.ErrBodylessBody):
		return v, err
	case err != nil:
		verdict = "none"
	case !v.Allow:
		verdict = "deny"
	}
	a.Metrics.deciderLatency.WithLabelValues(verdict).Observe(time.Since(start).Seconds())
	return v, err
}
