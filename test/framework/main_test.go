package framework

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
