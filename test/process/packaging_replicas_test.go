package process

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
	"go.yaml.in/yaml/v3"
)

// replicaCompose is the part of docker-compose.yml the replica test reads.
type replicaCompose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		Deploy      struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"deploy"`
		Networks map[string]struct {
			IPv4 string `yaml:"ipv4_address"`
		} `yaml:"networks"`
	} `yaml:"services"`
}

// Ensure docker-compose.yml runs three replicas behind HAProxy with
// PostgreSQL and Redis, true to the settings: every Gatehouse variable it
// sets is a documented setting, the replicas count the rate limits in the
// Redis service, believe X-Forwarded-For from HAProxy's address alone, and
// publish no port of their own; HAProxy's checked-in configuration reaches
// them all, adds X-Forwarded-For and checks a route Gatehouse serves.
func TestPackaging_compose_replicas(t *testing.T) {
	text := mustRead(t, "docker-compose.yml")
	var c replicaCompose
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	g, lb, redis := c.Services["gatehouse"], c.Services["haproxy"], c.Services["redis"]
	if g.Deploy.Replicas != 3 || len(g.Ports) != 0 {
		t.Errorf("gatehouse: %d replicas publishing %v, want 3 publishing nothing", g.Deploy.Replicas, g.Ports)
	}
	exact := regexp.MustCompile(`:\d+\.\d+\.\d+$`)
	for name, image := range map[string]string{"haproxy": lb.Image, "redis": redis.Image} {
		if !exact.MatchString(image) {
			t.Errorf("%s image %q, want an exact version", name, image)
		}
	}
	if !slices.Contains(lb.Ports, "8080:8080") || !slices.Contains(lb.Volumes, "./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro") {
		t.Errorf("haproxy publishes %v and mounts %v, want 8080 and deploy/haproxy.cfg", lb.Ports, lb.Volumes)
	}
	if got := g.Environment["GATEHOUSE_REDIS_URL"]; !strings.HasPrefix(got, "redis://redis:6379") {
		t.Errorf("GATEHOUSE_REDIS_URL = %q, want the redis service", got)
	}
	if ip := lb.Networks["default"].IPv4; ip == "" || g.Environment["GATEHOUSE_TRUSTED_PROXIES"] != ip+"/32" {
		t.Errorf("GATEHOUSE_TRUSTED_PROXIES = %q, want HAProxy's fixed address %q alone", g.Environment["GATEHOUSE_TRUSTED_PROXIES"], ip)
	}
	docs := mustRead(t, "docs/configuration.md")
	for _, name := range regexp.MustCompile(`GATEHOUSE_[A-Z0-9_]+`).FindAllString(text, -1) {
		if name != "GATEHOUSE_VERSION" && !strings.Contains(docs, "`"+name+"`") {
			t.Errorf("docker-compose.yml names %s, which docs/configuration.md does not document", name)
		}
	}

	cfg := mustRead(t, "deploy/haproxy.cfg")
	m := regexp.MustCompile(`(?m)^\s*server-template gatehouse (\d+) gatehouse:8080 check`).FindStringSubmatch(cfg)
	if m == nil {
		t.Fatal("deploy/haproxy.cfg has no server-template for the gatehouse service")
	}
	if n, _ := strconv.Atoi(m[1]); n < g.Deploy.Replicas {
		t.Errorf("deploy/haproxy.cfg reaches %d replicas, compose runs %d", n, g.Deploy.Replicas)
	}
	if !regexp.MustCompile(`(?m)^\s*option forwardfor\s*$`).MatchString(cfg) {
		t.Error("deploy/haproxy.cfg does not add X-Forwarded-For")
	}
	check := regexp.MustCompile(`(?m)^\s*option httpchk GET (\S+)`).FindStringSubmatch(cfg)
	if check == nil {
		t.Fatal("deploy/haproxy.cfg has no HTTP health check")
	}
	app := harness.MustStart(t, harness.StoreMemory, nil)
	harness.MustStatus(t, app.Do(t, http.MethodGet, check[1], ""), http.StatusOK)
}
