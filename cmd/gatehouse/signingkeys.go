package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

const signingKeysUsage = `Usage: gatehouse signing-keys rotate [--alg EdDSA|RS256] [service flags]
       gatehouse signing-keys list [service flags]

rotate makes a new key for the algorithm (both when --alg is absent): EdDSA
(Ed25519) signs the framework's tokens, RS256 (RSA-2048) OpenID Connect ID and
access tokens. The new key signs at once on this instance and within a
minute on the others; the key it replaces stays in the key set until every
token it signed has expired. The action is recorded in the audit log.

list prints the published keys, newest first.
`

func signingKeys(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "rotate" && args[0] != "list") {
		_, err := io.WriteString(stdout, signingKeysUsage)
		if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			return err
		}
		return fmt.Errorf("unknown signing-keys command %q", args[0])
	}
	sub := args[0]
	values, rest, err := takeFlags(args[1:], "alg")
	if err != nil {
		return err
	}
	var algs []domain.SigningAlgorithm
	if v, ok := values["alg"]; ok {
		if sub != "rotate" {
			return fmt.Errorf("--alg is a flag of signing-keys rotate")
		}
		if v != string(domain.AlgEdDSA) && v != string(domain.AlgRS256) {
			return fmt.Errorf("--alg must be EdDSA or RS256")
		}
		algs = []domain.SigningAlgorithm{domain.SigningAlgorithm(v)}
	}
	app, _, cleanup, err := startApp(ctx, "gatehouse signing-keys "+sub, rest, getenv, stdout)
	if err != nil || app == nil {
		return err
	}
	defer cleanup()
	if sub == "list" {
		keys, err := app.ListSigningKeys(ctx)
		if err != nil {
			return describe(err)
		}
		for _, k := range keys {
			state := "active"
			if !k.RetiredAt.IsZero() {
				state = "retired " + k.RetiredAt.Format(time.RFC3339) + ", published until " + k.PublishedUntil.Format(time.RFC3339)
			}
			fmt.Fprintf(stdout, "%s\t%s\tcreated %s\t%s\n", k.ID, k.Alg, k.CreatedAt.Format(time.RFC3339), state)
		}
		return nil
	}
	keys, err := app.RotateSigningKeys(ctx, algs)
	if err != nil {
		return describe(err)
	}
	for _, k := range keys {
		fmt.Fprintf(stdout, "new %s signing key %s\n", k.Alg, k.ID)
	}
	return nil
}
