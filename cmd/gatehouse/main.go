// Command gatehouse runs the Gatehouse identity service.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout)
	stop()
	if err != nil {
		// One line per problem: a configuration may have several.
		for line := range strings.SplitSeq(err.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "gatehouse:", line)
		}
		os.Exit(1)
	}
}
