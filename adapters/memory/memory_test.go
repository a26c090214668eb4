package memory_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

func TestUserRepository(t *testing.T) {
	conformance.RunUserRepository(t, func(*testing.T) ports.UserRepository { return memory.NewUserRepository() })
}

func TestHealthChecker(t *testing.T) {
	conformance.RunHealthChecker(t, func(*testing.T) ports.HealthChecker { return memory.NewHealthChecker() })
}
