package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse/gatehouse/ports"
)

// Outbox is what the metrics read of the outbox: ports.Outbox has it.
type Outbox interface {
	Stats(ctx context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error)
}

// outboxTopics are reported on every scrape, at 0 when nothing waits.
var outboxTopics = []ports.OutboxTopic{ports.OutboxEvents, ports.OutboxMail}

// outboxCollector reads the outbox's statistics on each scrape, within a
// timeout, so that a slow database delays a scrape by that much at most.
type outboxCollector struct {
	outbox  Outbox
	timeout time.Duration
	logger  *slog.Logger
	now     func() time.Time
	depth   *prometheus.Desc
	age     *prometheus.Desc
	errors  prometheus.Counter
}

func newOutboxCollector(o Outbox, timeout time.Duration, logger *slog.Logger) *outboxCollector {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &outboxCollector{
		outbox: o, timeout: timeout, logger: logger, now: time.Now,
		depth: prometheus.NewDesc("gatehouse_outbox_depth",
			"Messages waiting in the outbox (not yet delivered), by topic.", []string{"topic"}, nil),
		age: prometheus.NewDesc("gatehouse_outbox_oldest_age_seconds",
			"Age of the oldest message waiting in the outbox, by topic; 0 when none waits.", []string{"topic"}, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gatehouse_outbox_stats_errors_total",
			Help: "Scrapes whose read of the outbox failed or timed out; they report no outbox depth or age.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.age
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	defer c.errors.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	stats, err := c.outbox.Stats(ctx)
	if err != nil {
		c.errors.Inc()
		c.logger.LogAttrs(ctx, slog.LevelWarn, "metrics: outbox statistics not read", slog.String("error", err.Error()))
		return
	}
	now := c.now()
	seen := map[ports.OutboxTopic]bool{}
	emit := func(topic ports.OutboxTopic, s ports.OutboxStats) {
		seen[topic] = true
		age := 0.0
		if s.Depth > 0 && !s.Oldest.IsZero() {
			age = max(now.Sub(s.Oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(s.Depth), string(topic))
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age, string(topic))
	}
	for _, topic := range outboxTopics {
		emit(topic, stats[topic])
	}
	for topic, s := range stats {
		if !seen[topic] {
			emit(topic, s)
		}
	}
}
