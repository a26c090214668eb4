package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/ports"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// webhookLatency measures the outbox's delivery latency: it registers a
// webhook endpoint on a loopback receiver for user.created, creates n users
// through the trusted API one after another (paced by gap), and times each
// from the create's answer (the change and its event are committed before
// it) to the event's arrival at the receiver. Every event must arrive.
func webhookLatency(ctx context.Context, c *http.Client, base, key string, n int, gap time.Duration) (result, error) {
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	got := make(chan struct{}, 1)
	recv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var p struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&p); err == nil && p.Data.ID != "" {
			mu.Lock()
			if _, seen := arrived[p.Data.ID]; !seen {
				arrived[p.Data.ID] = at
				select {
				case got <- struct{}{}:
				default:
				}
			}
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	go func() { _ = recv.Serve(ln) }()
	defer func() { _ = recv.Close() }()

	post := func(path, body string) (map[string]any, error) {
		r, err := jsonRequest(ctx, base+path, body)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "Bearer "+key)
		res, err := c.Do(r)
		if err != nil {
			return nil, err
		}
		defer func() { _ = res.Body.Close() }()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("POST %s: status %d", path, res.StatusCode)
		}
		return out, nil
	}
	if _, err := post("/api/webhooks", `{"url":"http://`+ln.Addr().String()+`/hook","eventTypes":["user.created"]}`); err != nil {
		return result{}, err
	}
	answered := map[string]time.Time{}
	start := time.Now()
	for i := range n {
		u, err := post("/api/users", `{"email":"hook-`+strconv.Itoa(i)+`-`+strconv.FormatInt(start.UnixNano(), 36)+`@example.com","name":"Hook `+strconv.Itoa(i)+`"}`)
		if err != nil {
			return result{}, err
		}
		id, _ := u["id"].(string)
		if id == "" {
			if inner, ok := u["user"].(map[string]any); ok {
				id, _ = inner["id"].(string)
			}
		}
		if id == "" {
			return result{}, fmt.Errorf("create user: no id in %v", strings.Join(slices.Collect(maps.Keys(u)), ","))
		}
		answered[id] = time.Now()
		time.Sleep(gap)
	}
	// Events of the users made before the endpoint (the run's set-up) may
	// arrive too: wait for those of the timed users.
	deadline := time.After(30 * time.Second)
	for missing := len(answered); missing > 0; {
		select {
		case <-got:
		case <-deadline:
			return result{}, fmt.Errorf("webhooks: %d of %d events missing after 30 s", missing, n)
		case <-ctx.Done():
			return result{}, ctx.Err()
		}
		mu.Lock()
		missing = 0
		for id := range answered {
			if _, ok := arrived[id]; !ok {
				missing++
			}
		}
		mu.Unlock()
	}
	var res result
	mu.Lock()
	defer mu.Unlock()
	for id, at := range answered {
		a, ok := arrived[id]
		if !ok {
			return result{}, fmt.Errorf("webhooks: no event for user %s", id)
		}
		res.latencies = append(res.latencies, max(a.Sub(at), 0))
	}
	slices.Sort(res.latencies)
	res.elapsed = time.Since(start)
	return res, nil
}

// drainEvents waits until the outbox holds no event, and returns how many
// it held at first.
func drainEvents(ctx context.Context, app *bootstrap.App) (int, error) {
	first := -1
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); {
		st, err := app.Outbox.Stats(ctx)
		if err != nil {
			return 0, err
		}
		n := st[ports.OutboxEvents].Depth
		if first < 0 {
			first = n
		}
		if n == 0 {
			return first, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("outbox: events not drained within 5 minutes")
}
