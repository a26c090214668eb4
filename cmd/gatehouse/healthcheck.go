package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/bootstrap"
)

const healthcheckUsage = `Usage: gatehouse healthcheck [--addr ADDR] [--url URL]

Asks the service on this machine for its liveness route, GET /api/auth/ok,
and exits 0 if it answers 200, else prints why and exits 1. It is meant for
a container's HEALTHCHECK: it reads only the listen address (--addr, else
GATEHOUSE_ADDR, else :8080), needs neither the secret nor the database,
follows no redirect, gives up after 3 seconds and asks loopback only. An
address on every interface (":8080", "0.0.0.0:8080", "[::]:8080") is asked
on 127.0.0.1.

Flags:
`

// healthcheckTimeout bounds the whole check, connection included.
const healthcheckTimeout = 3 * time.Second

func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gatehouse healthcheck", flag.ContinueOnError)
	var help strings.Builder
	fs.SetOutput(&help)
	fs.Usage = func() { help.WriteString(healthcheckUsage); fs.PrintDefaults() }
	addrVar, addrFlag, addr := bootstrap.AddrSetting()
	if v := getenv(addrVar); v != "" {
		addr = v
	}
	fs.StringVar(&addr, addrFlag, addr, "listen address of the service ("+addrVar+")")
	target := fs.String("url", "", "URL to ask instead, http on a loopback host, such as http://127.0.0.1:8080/api/auth/ok")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, err = io.WriteString(stdout, help.String())
			return err
		}
		return fmt.Errorf("healthcheck: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("healthcheck: unexpected argument %q", fs.Arg(0))
	}
	u, err := healthURL(addr, *target)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	client := &http.Client{
		// No proxy from the environment: the question is about this machine.
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: GET %s answered %s", u, res.Status)
	}
	_, err = fmt.Fprintf(stdout, "healthy: GET %s answered %s\n", u, res.Status)
	return err
}

// healthURL is the liveness URL to ask: target if given, else the
// liveness route on addr, with an unspecified host asked on 127.0.0.1.
// Either must be http on a loopback host.
func healthURL(addr, target string) (string, error) {
	if target == "" {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", fmt.Errorf("listen address %q: must be HOST:PORT or :PORT", addr)
		}
		switch host {
		case "", "0.0.0.0", "::":
			host = "127.0.0.1"
		}
		target = "http://" + net.JoinHostPort(host, port) + "/api/auth/ok"
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil {
		return "", fmt.Errorf("%q is not an http URL", target)
	}
	if !mailer.IsLoopback(u.Hostname()) {
		return "", fmt.Errorf("%s is not a loopback host: the health check asks this machine only (pass --url http://127.0.0.1:PORT/api/auth/ok)", u.Hostname())
	}
	return u.String(), nil
}
