package metrics

import (
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Observer = Nop{}

// Nop is the Observer of a Gatehouse without metrics: it counts nothing.
type Nop struct{}

// Request implements ports.Observer.
func (Nop) Request(string, string, int, time.Duration) {}

// SignIn implements ports.Observer.
func (Nop) SignIn(ports.SignInMethod, ports.SignInOutcome) {}

// RateLimited implements ports.Observer.
func (Nop) RateLimited(string) {}

// WebhookDelivery implements ports.Observer.
func (Nop) WebhookDelivery(string) {}
