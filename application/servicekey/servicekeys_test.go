package servicekey_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

func TestServiceKey_rotation_overlap_ends(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	req := usecase.KeyRequest{Actor: usecase.CLIActor}
	issued, err := w.Keys.Create(t.Context(), req, servicekey.CreateServiceKey{Name: "ci", Scopes: []string{"users:read"}, ExpiresAt: w.Clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := w.Keys.Rotate(t.Context(), req, issued.Key.ID(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{issued.Secret, rotated.Secret} {
		if _, err := w.Keys.Authenticate(t.Context(), secret); err != nil {
			t.Fatalf("during the overlap: %v", err)
		}
	}
	w.Clock.Advance(10 * time.Minute)
	_, err = w.Keys.Authenticate(t.Context(), issued.Secret)
	usecasetest.MustCode(t, err, "auth.invalid_service_key")
	if _, err := w.Keys.Authenticate(t.Context(), rotated.Secret); err != nil {
		t.Fatalf("the new secret after the overlap: %v", err)
	}
	w.Clock.Advance(24 * time.Hour)
	_, err = w.Keys.Authenticate(t.Context(), rotated.Secret)
	usecasetest.MustCode(t, err, "auth.invalid_service_key")
	_, err = w.Keys.Rotate(t.Context(), req, issued.Key.ID(), 0)
	usecasetest.MustCode(t, err, "service_key.not_found")
}

func TestServiceKey_last_use_is_written_in_batches(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	req := usecase.KeyRequest{Actor: usecase.CLIActor}
	issued, err := w.Keys.Create(t.Context(), req, servicekey.CreateServiceKey{Name: "ci", Scopes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() time.Time {
		ks, err := w.Keys.List(t.Context(), req)
		if err != nil || len(ks) != 1 {
			t.Fatalf("List = %v, %v", ks, err)
		}
		return ks[0].LastUsedAt()
	}
	if _, err := w.Keys.Authenticate(t.Context(), issued.Secret); err != nil {
		t.Fatal(err)
	}
	if !lastUsed().IsZero() {
		t.Fatal("authentication wrote last use on the request path")
	}
	used := w.Clock.Now()
	w.Clock.Advance(time.Second)
	if err := w.Keys.FlushLastUsed(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); !got.Equal(used) {
		t.Fatalf("last used = %s, want %s", got, used)
	}
	for _, bad := range []string{"", "gh_sk_short", issued.Secret[:len(issued.Secret)-1] + "!", "xx" + issued.Secret[2:]} {
		_, err := w.Keys.Authenticate(t.Context(), bad)
		usecasetest.MustCode(t, err, "auth.invalid_service_key")
	}
}
