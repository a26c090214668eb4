package bootstrap

import (
	"context"

	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// signingSecrets are the secrets private signing keys are sealed under: the
// first seals, every one opens.
func signingSecrets(c Config) signingkeys.Secrets { return signingkeys.Secrets(c.Secrets) }

// RotateSigningKeys makes new signing keys for algs (every algorithm when
// empty) from the command line, audited as the CLI. They sign after the
// activation delay, or at once when immediate. The retired keys stay
// published until the tokens they signed have expired.
func (a *App) RotateSigningKeys(ctx context.Context, algs []domain.SigningAlgorithm, immediate bool) ([]command.SigningKeyView, error) {
	return a.app.Commands.SigningKeys.Rotate(ctx, command.KeyRequest{Actor: command.CLIActor}, command.RotateSigningKeys{Algs: algs, Immediate: immediate})
}

// ListSigningKeys returns the published signing keys, newest first.
func (a *App) ListSigningKeys(ctx context.Context) ([]command.SigningKeyView, error) {
	return a.app.Commands.SigningKeys.List(ctx, command.KeyRequest{Actor: command.CLIActor})
}
