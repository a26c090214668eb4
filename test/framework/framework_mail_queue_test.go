package framework

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a full mail queue (a hanging SMTP server, a queue of 2) reveals no
// account: reset and verification requests for a known and an unknown
// address answer alike, and sign-up for a taken address answers like one
// for a free address; a refused sign-up creates nothing, and the accepted
// sign-ups' mails arrive once the server recovers. Filled the other way
// round, by sign-ups for the taken address, the queue refuses a free
// address's sign-up at the same point.
// It keeps a fresh application: it fills and faults the mail queue.
func TestFramework_full_mail_queue_reveals_no_account(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GATEHOUSE_RATE_LIMIT": "off", "GATEHOUSE_MAIL_QUEUE_SIZE": "2"}
	harness.ForStores(t, harness.StoresThatMatter, env, func(t *testing.T, app *harness.App) {
		const owner, pw = "ada@example.com", "correct horse battery"
		c := app.NewClient(t)
		harness.MustOK(t, c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Ada", "email": owner, "password": pw})))
		harness.MustLink(t, app, owner, "Verify your email address")

		app.Mail.Hang()
		defer app.Mail.Recover()
		var accepted []string
		refused, full := "", (*harness.Response)(nil)
		for i := range 20 {
			email := fmt.Sprintf("user%d@example.com", i)
			r := c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "User", "email": email, "password": pw}))
			if r.Status == http.StatusServiceUnavailable {
				refused, full = email, r
				break
			}
			harness.MustOK(t, r)
			accepted = append(accepted, email)
		}
		if full == nil {
			t.Fatalf("20 sign-ups with the SMTP server hanging and a queue of 2 were all accepted")
		}
		mustSameAnswer := func(what string, a, b *harness.Response) {
			t.Helper()
			if a.Status != b.Status || string(a.Body) != string(b.Body) {
				t.Fatalf("%s: %d %s, but %d %s", what, a.Status, a.Body, b.Status, b.Body)
			}
		}
		taken := c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Mallory", "email": owner, "password": "another good passphrase"}))
		mustSameAnswer("sign-up for a free address, then a taken one", full, taken)

		resetKnown := c.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": owner, "redirectTo": "/reset"}))
		resetUnknown := c.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": "nobody@example.com", "redirectTo": "/reset"}))
		mustSameAnswer("reset for a known address, then an unknown one", resetKnown, resetUnknown)
		verifyKnown := c.Post("/api/auth/send-verification-email", harness.MustJSON(t, map[string]string{"email": accepted[0]}))
		verifyUnknown := c.Post("/api/auth/send-verification-email", harness.MustJSON(t, map[string]string{"email": "nobody@example.com"}))
		mustSameAnswer("verification mail for a known address, then an unknown one", verifyKnown, verifyUnknown)

		app.Mail.Recover()
		for _, email := range accepted {
			harness.MustLink(t, app, email, "Verify your email address")
		}
		// The refused sign-up left no account: signing up again is a first
		// sign-up, not an attempt on a taken address. The reset and
		// verification requests above look the account up in a background
		// job, which may run only now and queue its mail: the queue of 2
		// can be full again for a moment, and a refused sign-up changes
		// nothing, so it is tried again until the queue has room.
		again := func() *harness.Response {
			return c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "User", "email": refused, "password": pw}))
		}
		r := again()
		for deadline := time.Now().Add(15 * time.Second); r.Status == http.StatusServiceUnavailable && time.Now().Before(deadline); r = again() {
			time.Sleep(50 * time.Millisecond)
		}
		harness.MustOK(t, r)
		harness.MustLink(t, app, refused, "Verify your email address")
		harness.MustNoMail(t, app, refused, "Someone tried to sign up")

		// The other way round: sign-ups for the taken address, each of
		// which mails its owner, fill the queue; once one is refused, one
		// for a free address is refused too. A taken address's mail sent
		// beside its reserved place, not through it, would be refused with
		// one place left, which the free address's sign-up would then get.
		// With the SMTP server hanging nothing leaves the queue, so a full
		// queue stays full from one request to the next, whatever a
		// background job (the reset above) still tries to queue.
		app.Mail.Hang()
		var fullTaken *harness.Response
		for range 20 {
			r := c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Mallory", "email": owner, "password": "another good passphrase"}))
			if r.Status == http.StatusServiceUnavailable {
				fullTaken = r
				break
			}
			harness.MustOK(t, r)
		}
		if fullTaken == nil {
			t.Fatalf("20 sign-ups for a taken address with the SMTP server hanging and a queue of 2 were all accepted")
		}
		late := c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Late", "email": "late@example.com", "password": pw}))
		mustSameAnswer("sign-up for a taken address, then a free one", fullTaken, late)
	})
}
