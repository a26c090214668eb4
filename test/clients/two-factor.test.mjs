// Ensure better-auth's own twoFactorClient (better-auth/client/plugins,
// pinned in package.json) works against Gatehouse's two-factor routes
// unmodified: enrolment, the sign-in challenge, TOTP codes computed by a
// pinned TOTP library (otpauth) from the totpURI Gatehouse returns, replay
// refusal, backup codes, trusted browsers, the e-mailed code (read from
// the test SMTP server's mailbox) and disabling. TestBetterAuthClient
// (test/clients_test.go) runs this file.
//

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { TWO_FACTOR_ERROR_CODES, twoFactorClient } from "better-auth/client/plugins";
import * as OTPAuth from "otpauth";

import { CookieJar, mustFail, mustOk, mustSession, mustSignedOut, newClient, randomEmail, signUpVerified, steps, waitForMail } from "./lib/gatehouse.mjs";

/** totpFrom returns the TOTP of an otpauth:// URI, as an authenticator app would read it. */
function totpFrom(uri) {
	const totp = OTPAuth.URI.parse(uri);
	assert.ok(totp instanceof OTPAuth.TOTP, `not a TOTP URI: ${uri}`);
	assert.equal(totp.algorithm, "SHA1");
	assert.equal(totp.digits, 6);
	assert.equal(totp.period, 30);
	return totp;
}

/** codeAt returns the code of totp for the step delta steps from now. */
const codeAt = (totp, delta) => totp.generate({ timestamp: Date.now() + delta * totp.period * 1000 });

describe("two-factor with twoFactorClient", () => {
	test("the error codes compared against are the plugin's own", () => {
		for (const code of ["INVALID_CODE", "INVALID_BACKUP_CODE", "OTP_HAS_EXPIRED"]) {
			assert.equal(TWO_FACTOR_ERROR_CODES[code]?.code, code, `${code} is not a two-factor error code`);
		}
	});

	const step = steps();
	const email = randomEmail("tf").toLowerCase();
	const password = "two-Factor-Passw0rd!";
	const redirects = [];
	const plugins = [twoFactorClient({ onTwoFactorRedirect: (ctx) => redirects.push(ctx) })];
	const a = newClient({ plugins });
	let totp;
	let backupCodes;

	step("1 enable returns a totpURI and ten backup codes", [], async () => {
		await signUpVerified(a.client, { name: "Tess", email, password });
		const data = mustOk(await a.client.twoFactor.enable({ password }), "twoFactor.enable");
		totp = totpFrom(data.totpURI);
		backupCodes = data.backupCodes;
		assert.equal(backupCodes.length, 10);
		assert.equal((await mustSession(a.client)).user.twoFactorEnabled, false, "two-factor is on before the first code");
	});

	step("2 verify turns two-factor on; sign-out", ["1"], async () => {
		mustFail(await a.client.twoFactor.verifyTotp({ code: "000000" }), "INVALID_CODE", 401);
		mustOk(await a.client.twoFactor.verifyTotp({ code: codeAt(totp, -1) }), "twoFactor.verifyTotp");
		assert.equal((await mustSession(a.client)).user.twoFactorEnabled, true);
		mustOk(await a.client.signOut(), "signOut");
		await mustSignedOut(a.client, "after sign-out");
	});

	step("3 sign-in answers twoFactorRedirect and starts no session", ["2"], async () => {
		const b = newClient({ plugins });
		const data = mustOk(await b.client.signIn.email({ email, password }), "signIn.email");
		assert.equal(data.twoFactorRedirect, true);
		assert.deepEqual(data.twoFactorMethods, ["totp", "otp"]);
		assert.equal(data.token, undefined);
		assert.equal(redirects.length, 1, "onTwoFactorRedirect was not called");
		await mustSignedOut(b.client, "after a password-only sign-in");
	});

	step("4 a wrong code is refused, the right one signs in, and it is refused again", ["3"], async () => {
		const b = newClient({ plugins });
		mustOk(await b.client.signIn.email({ email, password }), "signIn.email");
		mustFail(await b.client.twoFactor.verifyTotp({ code: "000000" }), "INVALID_CODE", 401);
		const code = codeAt(totp, 0);
		const data = mustOk(await b.client.twoFactor.verifyTotp({ code }), "twoFactor.verifyTotp");
		assert.equal(typeof data.token, "string");
		assert.equal(data.user.twoFactorEnabled, true);
		const { session } = await mustSession(b.client);
		// The session says how the user signed in (RFC 8176 amr values).
		assert.deepEqual(session.authMethods, ["pwd", "otp", "mfa"]);
		assert.ok(session.secondFactorAt && !Number.isNaN(new Date(session.secondFactorAt).getTime()), `secondFactorAt ${session.secondFactorAt}`);

		const c = newClient({ plugins });
		mustOk(await c.client.signIn.email({ email, password }), "signIn.email");
		mustFail(await c.client.twoFactor.verifyTotp({ code }), "INVALID_CODE", 401);
		await mustSignedOut(c.client, "after a replayed code");
	});

	step("5 a backup code works once", ["4"], async () => {
		const b = newClient({ plugins });
		mustOk(await b.client.signIn.email({ email, password }), "signIn.email");
		mustOk(await b.client.twoFactor.verifyBackupCode({ code: backupCodes[0] }), "twoFactor.verifyBackupCode");
		await mustSession(b.client);

		const c = newClient({ plugins });
		mustOk(await c.client.signIn.email({ email, password }), "signIn.email");
		mustFail(await c.client.twoFactor.verifyBackupCode({ code: backupCodes[0] }), "INVALID_BACKUP_CODE", 401);
		await mustSignedOut(c.client, "after a used backup code");
	});

	step("5b trustDevice skips the challenge in that browser; a forged trust cookie does not", ["5"], async () => {
		const b = newClient({ plugins });
		mustOk(await b.client.signIn.email({ email, password }), "signIn.email");
		mustOk(await b.client.twoFactor.verifyBackupCode({ code: backupCodes[1], trustDevice: true }), "twoFactor.verifyBackupCode");
		const name = b.jar.names().find((n) => n.endsWith(".trust_device"));
		assert.ok(name, `no trust_device cookie in ${b.jar.names()}`);
		const value = b.jar.header().split("; ").find((p) => p.startsWith(`${name}=`)).slice(name.length + 1);

		// Only the trust cookie: a later visit of the same browser.
		const trusted = newClient({ plugins, jar: new CookieJar() });
		trusted.jar.store([`${name}=${value}`]);
		const data = mustOk(await trusted.client.signIn.email({ email, password }), "signIn.email");
		assert.equal(data.twoFactorRedirect, undefined, `trusted sign-in answered ${JSON.stringify(data)}`);
		await mustSession(trusted.client);
		// No second factor was proven in this session: a sensitive action
		// asks for one (step-up), before the password is even tried.
		mustFail(await trusted.client.twoFactor.generateBackupCodes({ password }), "SECOND_FACTOR_REQUIRED", 403);

		const forged = newClient({ plugins, jar: new CookieJar() });
		forged.jar.store([`${name}=${value.startsWith("A") ? "B" : "A"}${value.slice(1)}`]);
		const refused = mustOk(await forged.client.signIn.email({ email, password }), "signIn.email");
		assert.equal(refused.twoFactorRedirect, true);
		await mustSignedOut(forged.client, "after a forged trust cookie");
	});

	step("5c an e-mailed code signs in once", ["5"], async () => {
		const b = newClient({ plugins });
		mustOk(await b.client.signIn.email({ email, password }), "signIn.email");
		mustOk(await b.client.twoFactor.sendOtp(), "twoFactor.sendOtp");
		const mail = await waitForMail(email, "sign-in code");
		const code = (mail.text ?? "").match(/^\s*(\d{6})\s*$/m)?.[1];
		assert.ok(code, `no code in ${JSON.stringify(mail.text)}`);
		mustFail(await b.client.twoFactor.verifyOtp({ code: code === "000000" ? "111111" : "000000" }), "INVALID_CODE", 401);
		mustOk(await b.client.twoFactor.verifyOtp({ code }), "twoFactor.verifyOtp");
		await mustSession(b.client);

		const c = newClient({ plugins });
		mustOk(await c.client.signIn.email({ email, password }), "signIn.email");
		mustFail(await c.client.twoFactor.verifyOtp({ code }), "OTP_HAS_EXPIRED", 400);
		await mustSignedOut(c.client, "after a used e-mailed code");
	});

	step("6 disable; sign-in needs no second factor again", ["5b", "5c"], async () => {
		mustFail(await a.client.twoFactor.disable({ password }), "UNAUTHORIZED", 401); // a signed out in step 2
		const b = newClient({ plugins });
		mustOk(await b.client.signIn.email({ email, password }), "signIn.email");
		mustOk(await b.client.twoFactor.verifyTotp({ code: codeAt(totp, 1) }), "twoFactor.verifyTotp");
		mustFail(await b.client.twoFactor.disable({ password: "wrong-Passw0rd!" }), "INVALID_PASSWORD", 400);
		mustOk(await b.client.twoFactor.disable({ password }), "twoFactor.disable");
		assert.equal((await mustSession(b.client)).user.twoFactorEnabled, false);

		const c = newClient({ plugins });
		const data = mustOk(await c.client.signIn.email({ email, password }), "signIn.email");
		assert.equal(data.twoFactorRedirect, undefined);
		await mustSession(c.client);
	});
});
