package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// signingSecrets are the secrets private signing keys are sealed under: the
// first seals, every one opens.
func signingSecrets(c Config) signingkeys.Secrets { return signingkeys.Secrets(c.Secrets) }

// RefreshSigningKeysEvery reloads the signing keys every interval until ctx
// ends, deleting those past their publication window, so that a rotation
// made on another instance (or from the command line) is followed here.
func (a *App) RefreshSigningKeysEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.app.Commands.SigningKeys.Refresh(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("refresh signing keys", slog.String("error", err.Error()))
			}
		}
	}
}

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
