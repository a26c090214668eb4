package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
)

const signingKeysUsage = `Usage: gatehouse signing-keys rotate [--alg EdDSA|RS256] [--now] [service flags]
       gatehouse signing-keys list [service flags]

rotate makes a new key for the algorithm (both when --alg is absent): EdDSA
(Ed25519) signs the framework's tokens, RS256 (RSA-2048) OpenID Connect ID and
access tokens. The new key is published at once and signs two key reload
intervals later (GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL, 2 minutes by
default), once every instance publishes it; the key it replaces signs until
then and stays in the key set until every token it signed has expired.

--now is for a compromised key: the new key signs at once and the old one is
retired now. Other instances publish the new key only at their next reload,
so for up to one reload interval their key sets cannot verify its tokens.

The action is recorded in the audit log.

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
	var immediate bool
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool {
		if a == "--now" || a == "-now" {
			immediate = true
			return true
		}
		return false
	})
	if immediate && sub != "rotate" {
		return fmt.Errorf("--now is a flag of signing-keys rotate")
	}
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
			return bootstrap.DescribeError(err)
		}
		for _, k := range keys {
			state := k.Status
			switch {
			case k.Status == oidc.SigningKeyPending:
				state += ", signs from " + k.ActivatesAt.Format(time.RFC3339)
			case k.Status == oidc.SigningKeyRetired:
				state += " " + k.RetiredAt.Format(time.RFC3339) + ", published until " + k.PublishedUntil.Format(time.RFC3339)
			case !k.RetiredAt.IsZero():
				state += ", retires " + k.RetiredAt.Format(time.RFC3339)
			}
			fmt.Fprintf(stdout, "%s\t%s\tcreated %s\t%s\n", k.ID, k.Alg, k.CreatedAt.Format(time.RFC3339), state)
		}
		return nil
	}
	keys, err := app.RotateSigningKeys(ctx, algs, immediate)
	if err != nil {
		return bootstrap.DescribeError(err)
	}
	for _, k := range keys {
		fmt.Fprintf(stdout, "new %s signing key %s, signing from %s\n", k.Alg, k.ID, k.ActivatesAt.Format(time.RFC3339))
	}
	return nil
}
