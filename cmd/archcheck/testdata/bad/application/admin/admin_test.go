package admin_test

import (
	"testing"

	"example.com/app/application/account"
	"example.com/app/application/admin"
)

// A black-box test may build another context: rule 7 leaves test files be.
func TestSendReset(t *testing.T) {
	if admin.SendReset("ada") != account.ResetLink("ada") {
		t.Fatal("different link")
	}
}
