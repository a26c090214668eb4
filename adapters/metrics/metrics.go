package metrics

import (
	"database/sql"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Observer = (*Metrics)(nil)

// Options is what the metrics read besides what they are told.
type Options struct {
	// Version is reported by gatehouse_build_info.
	Version string
	// DB is the database pool whose statistics are reported; nil reports none.
	DB *sql.DB
	// Outbox is read on each scrape for the depth and age of each topic;
	// nil reports none.
	Outbox Outbox
	// OutboxTimeout bounds that read (default 2s).
	OutboxTimeout time.Duration
	// RateLimitStoreFailures returns how many rate-limit hits were counted
	// in process memory since the start because the shared store (Redis,
	// PostgreSQL) failed them or was left alone after failing
	// (ratelimit.Shared.Failures); nil reports none.
	RateLimitStoreFailures func() uint64
	// RateLimitStoreDown reports whether the shared store's breaker is
	// open: it failed, and the hits are counted in process memory until it
	// answers again (ratelimit.Shared.Down); nil reports none.
	RateLimitStoreDown func() bool
	// Logger receives the scrapes' failures (slog.Default() when nil).
	Logger *slog.Logger
}

// Metrics holds Gatehouse's metrics in a registry of its own.
type Metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	signIns     *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	webhooks    *prometheus.CounterVec

	mu     sync.RWMutex
	series map[requestKey]requestSeries // the request series already looked up
}

// requestKey is one request series: method, route template and status.
type requestKey struct {
	method, route string
	status        int
}

// requestSeries are the counter and histogram of one requestKey, kept so
// that a request costs a map read, not a label hash and a lookup per vector.
type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// Unmatched is the route label of requests no route matched: never the raw
// path, which would make a series per path a client cares to send.
const Unmatched = "unmatched"

// The values of the label sets counted ahead, so that every series exists
// (at 0) from the start.
var (
	signInMethods  = []ports.SignInMethod{ports.SignInPassword, ports.SignInSecondFactor, ports.SignInPasskey}
	signInOutcomes = []ports.SignInOutcome{ports.SignInSuccess, ports.SignInSecondFactorRequired, ports.SignInFailure, ports.SignInLocked,
		ports.SignInBanned, ports.SignInEmailNotVerified, ports.SignInSSORequired, ports.SignInError}
	webhookOutcomes = []string{ports.WebhookSucceeded, ports.WebhookRetrying, ports.WebhookFailed, ports.WebhookSkipped}
)

// other is the label value of anything outside a label's known set.
const other = "other"

// New returns the metrics, registered with the Go runtime and process
// collectors, and the pool and outbox collectors when opts names them.
func New(opts Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_http_requests_total",
			Help: "HTTP requests answered, by method, route template (\"unmatched\" when no route matched) and status code.",
		}, []string{"method", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatehouse_http_request_duration_seconds",
			Help:    "Time from the request reaching Gatehouse's handler to the handler's return, by method and route template.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
		signIns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_sign_ins_total",
			Help: "Sign-in attempts that reached the application, by method and outcome.",
		}, []string{"method", "outcome"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_rate_limited_total",
			Help: "Requests refused with 429 by a rate-limit rule, by rule.",
		}, []string{"rule"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by outcome.",
		}, []string{"outcome"}),
		series: map[requestKey]requestSeries{},
	}
	for _, method := range signInMethods {
		for _, outcome := range signInOutcomes {
			m.signIns.WithLabelValues(string(method), string(outcome))
		}
	}
	for _, outcome := range webhookOutcomes {
		m.webhooks.WithLabelValues(outcome)
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "gatehouse_build_info",
		Help:        "Always 1; the version label names the running build.",
		ConstLabels: prometheus.Labels{"version": opts.Version},
	})
	build.Set(1)
	m.reg.MustRegister(m.requests, m.latency, m.signIns, m.rateLimited, m.webhooks, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.DB != nil {
		m.reg.MustRegister(collectors.NewDBStatsCollector(opts.DB, "gatehouse"))
	}
	if opts.Outbox != nil {
		m.reg.MustRegister(newOutboxCollector(opts.Outbox, opts.OutboxTimeout, opts.Logger))
	}
	if failures := opts.RateLimitStoreFailures; failures != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gatehouse_rate_limit_store_failures_total",
			Help: "Rate-limit hits counted in this process's memory because the shared store (Redis or PostgreSQL) failed them or was left alone after failing.",
		}, func() float64 { return float64(failures()) }))
	}
	if down := opts.RateLimitStoreDown; down != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gatehouse_rate_limit_store_down",
			Help: "1 while the shared rate-limit store (Redis or PostgreSQL) is taken for down after a failure, and the limits are counted in this process's memory; else 0.",
		}, func() float64 {
			if down() {
				return 1
			}
			return 0
		}))
	}
	return m
}

// Handler serves the metrics in the Prometheus text format. A collector
// that fails leaves its metrics out; the rest are still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		Registry:            m.reg, // counts the handler's own errors
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
}

// Registry returns the registry, for collectors added from outside.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request implements ports.Observer.
func (m *Metrics) Request(method, route string, status int, elapsed time.Duration) {
	k := requestKey{method: normalMethod(method), route: route, status: status}
	if k.route == "" {
		k.route = Unmatched
	}
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if !ok {
		s = m.newSeries(k)
	}
	s.count.Inc()
	s.latency.Observe(elapsed.Seconds())
}

// newSeries looks up and keeps the series of k.
func (m *Metrics) newSeries(k requestKey) requestSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.series[k]; ok {
		return s
	}
	s := requestSeries{
		count:   m.requests.WithLabelValues(k.method, k.route, strconv.Itoa(k.status)),
		latency: m.latency.WithLabelValues(k.method, k.route),
	}
	m.series[k] = s
	return s
}

// normalMethod returns method if it is a standard one, else "OTHER": a
// request on no route may carry any method a client makes up.
func normalMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// SignIn implements ports.Observer.
func (m *Metrics) SignIn(method ports.SignInMethod, outcome ports.SignInOutcome) {
	m.signIns.WithLabelValues(known(string(method), signInMethods), known(string(outcome), signInOutcomes)).Inc()
}

// RateLimited implements ports.Observer.
func (m *Metrics) RateLimited(rule string) {
	if len(rule) > 64 { // rule names are the edge's constants; this only guards the bound
		rule = other
	}
	m.rateLimited.WithLabelValues(rule).Inc()
}

// WebhookDelivery implements ports.Observer.
func (m *Metrics) WebhookDelivery(outcome string) {
	m.webhooks.WithLabelValues(known(outcome, webhookOutcomes)).Inc()
}

// known returns v if it is one of values, else "other".
func known[T ~string](v string, values []T) string {
	for _, k := range values {
		if string(k) == v {
			return v
		}
	}
	return other
}
