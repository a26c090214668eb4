package bootstrap

import (
	"context"

	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// signingSecrets are the secrets private signing keys are sealed under: the
// first seals, every one opens.
func signingSecrets(c Config) signingkeys.Secrets { return signingkeys.Secrets(c.Secrets) }

// RotateSigningKeys makes new signing keys for algs (every algorithm when
// empty) from the command line, audited as the CLI. They sign after the
// activation delay, or at once when immediate. The retired keys stay
// published until the tokens they signed have expired.
func (a *App) RotateSigningKeys(ctx context.Context, algs []domain.SigningAlgorithm, immediate bool) ([]oidc.SigningKeyView, error) {
	return a.app.OIDC.SigningKeys.Rotate(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, oidc.RotateSigningKeys{Algs: algs, Immediate: immediate})
}

// ListSigningKeys returns the published signing keys, newest first.
func (a *App) ListSigningKeys(ctx context.Context) ([]oidc.SigningKeyView, error) {
	return a.app.OIDC.SigningKeys.List(ctx, usecase.KeyRequest{Actor: usecase.CLIActor})
}
