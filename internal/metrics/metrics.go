// Package metrics holds paddock's Prometheus metrics: one registry per
// server, the series every component records into, and the collectors that
// read the store at scrape time. GET /metrics serves the registry;
// deploy/grafana/paddock.json charts it.
//
// Components take a *Metrics and may be given nil (tests, tools): every
// method is safe on a nil receiver and then records nothing.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the series of one server.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	transitions     *prometheus.CounterVec
	transitionDur   *prometheus.HistogramVec
	warmClaims      *prometheus.CounterVec
	creditsDeducted prometheus.Counter
	providerErrors  *prometheus.CounterVec
	breakerState    *prometheus.GaugeVec
	agentReconnects prometheus.Counter
}

// New returns the metrics of one server, with Go's and the process's own
// collectors registered beside paddock's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paddock_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "status"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "paddock_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request (to its end, for streams), by route pattern and method.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "method"})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paddock_lifecycle_transitions_total",
		Help: "Runtime lifecycle transitions (start, pause, resume, archive, …), by action and result (ok or error).",
	}, []string{"action", "result"})
	m.transitionDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "paddock_lifecycle_transition_duration_seconds",
		Help:    "Time a runtime lifecycle transition took, by action.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"action"})
	m.warmClaims = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paddock_warm_pool_claims_total",
		Help: "Starts that asked the warm pool for a sandbox, by result (hit: one was claimed; miss: none was ready).",
	}, []string{"result"})
	m.creditsDeducted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "paddock_credits_deducted_total",
		Help: "Credits deducted for compute (charges less refunds are not netted here: refunds are not subtracted).",
	})
	m.providerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paddock_provider_errors_total",
		Help: "Provider calls that failed for the provider's own reasons (not the caller's), by provider and operation.",
	}, []string{"provider", "op"})
	m.breakerState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paddock_provider_breaker_state",
		Help: "Each provider's circuit breaker: 0 closed, 1 open (calls fail fast), 2 half-open (one probe let through).",
	}, []string{"provider"})
	m.agentReconnects = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "paddock_agent_reconnects_total",
		Help: "Links to in-sandbox agents opened again after the previous one broke.",
	})
	m.reg.MustRegister(
		m.requests, m.requestDuration, m.transitions, m.transitionDur, m.warmClaims,
		m.creditsDeducted, m.providerErrors, m.breakerState, m.agentReconnects,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Series that exist from the start at zero, so dashboards and alerts
	// see a rate of 0 rather than no data.
	m.warmClaims.WithLabelValues("hit")
	m.warmClaims.WithLabelValues("miss")
	return m
}

// ProviderOps are the operations provider errors are counted by.
var ProviderOps = []string{"create", "start", "pause", "resume", "destroy", "inspect", "dial_agent", "ping", "list", "snapshot"}

// AddProvider starts a provider's series at zero: its breaker closed and
// no errors.
func (m *Metrics) AddProvider(name string) {
	if m == nil {
		return
	}
	m.breakerState.WithLabelValues(name).Set(0)
	for _, op := range ProviderOps {
		m.providerErrors.WithLabelValues(name, op)
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Register adds collectors that read state at scrape time (see Gauges).
func (m *Metrics) Register(cs ...prometheus.Collector) {
	if m == nil {
		return
	}
	m.reg.MustRegister(cs...)
}

// Request records one answered HTTP request.
func (m *Metrics) Request(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched" // never the raw path: its ids would make a series each
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// Transition records one lifecycle transition and how long it took.
func (m *Metrics) Transition(action string, d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.transitions.WithLabelValues(action, result).Inc()
	m.transitionDur.WithLabelValues(action).Observe(d.Seconds())
}

// WarmClaim records whether a start found a warm sandbox.
func (m *Metrics) WarmClaim(hit bool) {
	if m == nil {
		return
	}
	if hit {
		m.warmClaims.WithLabelValues("hit").Inc()
	} else {
		m.warmClaims.WithLabelValues("miss").Inc()
	}
}

// CreditsDeducted records micro-credits deducted.
func (m *Metrics) CreditsDeducted(micros int64) {
	if m == nil || micros <= 0 {
		return
	}
	m.creditsDeducted.Add(float64(micros) / 1e6)
}

// ProviderError records a failed provider call.
func (m *Metrics) ProviderError(provider, op string) {
	if m == nil {
		return
	}
	m.providerErrors.WithLabelValues(provider, op).Inc()
}

// BreakerState records a provider's breaker state (0, 1 or 2).
func (m *Metrics) BreakerState(provider string, state int) {
	if m == nil {
		return
	}
	m.breakerState.WithLabelValues(provider).Set(float64(state))
}

// AgentReconnect records a link to an agent opened again.
func (m *Metrics) AgentReconnect() {
	if m == nil {
		return
	}
	m.agentReconnects.Inc()
}

// Gauges is a collector of gauges read at scrape time: each call of read
// yields the current values, labelled by labels in order. A read error
// yields no samples; the rest of the scrape still answers.
type Gauges struct {
	desc *prometheus.Desc
	read func(ctx context.Context) ([]Sample, error)
}

// Sample is one value of a Gauges collector.
type Sample struct {
	Labels []string
	Value  float64
}

// NewGauges returns a scrape-time gauge collector.
func NewGauges(name, help string, labels []string, read func(ctx context.Context) ([]Sample, error)) *Gauges {
	return &Gauges{desc: prometheus.NewDesc(name, help, labels, nil), read: read}
}

// Describe implements prometheus.Collector.
func (g *Gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect implements prometheus.Collector.
func (g *Gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	samples, err := g.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(g.desc, err)
		return
	}
	for _, s := range samples {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, s.Value, s.Labels...)
	}
}
