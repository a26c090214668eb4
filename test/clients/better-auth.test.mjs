// Ensure the official better-auth client (pinned in package.json) works
// against Gatehouse unmodified: one account's whole life, from sign-up and
// e-mail verification to password reset and sign-out, the way an app would
// drive it. TestBetterAuthClient (test/clients_test.go) starts Gatehouse and
// the test mailbox and runs this file; each run uses fresh addresses.
//
// The steps share one account and run in order. A step whose prerequisite
// failed is skipped with the reason, so the report shows how far it got.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { BASE_ERROR_CODES } from "better-auth";

import { baseURL, linkTo, newClient, randomEmail, waitForMail } from "./lib/gatehouse.mjs";

const STEP_TIMEOUT = 30_000;

// The codes compared against below.
const CODES = ["EMAIL_NOT_VERIFIED", "INVALID_EMAIL_OR_PASSWORD", "INVALID_TOKEN", "PASSWORD_TOO_SHORT"];

/** sessionCookies lists the jar's session-token cookies, whatever the prefix. */
const sessionCookies = (jar) => jar.names().filter((n) => n.endsWith(".session_token"));

/** mustSession asserts that client is signed in and returns {session, user}. */
async function mustSession(client) {
	const { data, error } = await client.getSession();
	assert.equal(error, null, `getSession failed: ${JSON.stringify(error)}`);
	assert.ok(data?.session && data?.user, `getSession returned no session: ${JSON.stringify(data)}`);
	return data;
}

/** mustSignedOut asserts that getSession answers null for client. */
async function mustSignedOut(client, why) {
	const { data, error } = await client.getSession();
	assert.equal(error, null, `getSession failed: ${JSON.stringify(error)}`);
	assert.equal(data, null, `${why}: getSession still returns ${JSON.stringify(data)}`);
}

/** mustSignIn signs client in and returns the response data. */
async function mustSignIn(client, email, password) {
	const { data, error } = await client.signIn.email({ email, password });
	assert.equal(error, null, `signIn.email failed: ${JSON.stringify(error)}`);
	return data;
}

/** mustFail asserts that result is an error with code and status. */
function mustFail(result, code, status) {
	assert.equal(result.data, null, `expected ${code}, got data ${JSON.stringify(result.data)}`);
	assert.ok(result.error, `expected ${code}, got no error`);
	assert.equal(result.error.code, code, `error: ${JSON.stringify(result.error)}`);
	assert.equal(result.error.status, status, `error: ${JSON.stringify(result.error)}`);
}

describe("better-auth client", () => {
	test("the error codes compared against are the client's own", () => {
		// In better-auth 1.7.25 authClient.$ERROR_CODES exists only in the
		// types (PrettifyDeep<… & typeof BASE_ERROR_CODES>): at run time the
		// client's path proxy answers every property with a route function.
		// BASE_ERROR_CODES is the object that type is built from.
		for (const code of CODES) {
			assert.equal(BASE_ERROR_CODES[code]?.code, code, `${code} is not a better-auth error code`);
		}
	});

	test("sign-up with a short password is refused with PASSWORD_TOO_SHORT", { timeout: STEP_TIMEOUT }, async () => {
		const { client } = newClient();
		const res = await client.signUp.email({ name: "Short", email: randomEmail("short"), password: "short" });
		mustFail(res, "PASSWORD_TOO_SHORT", 400);
	});
});

describe("one account's life", () => {
	const typed = randomEmail("ada");
	const email = typed.toLowerCase();
	const passwords = { first: "first-Passw0rd!", second: "second-Passw0rd!", third: "third-Passw0rd!" };
	const a = newClient(); // the browser the account lives in
	const b = newClient(); // a second device
	let password = passwords.first; // the one in force

	const done = new Set();
	/** step declares a test that runs only when the steps it needs passed. */
	function step(name, needs, fn) {
		test(name, { timeout: STEP_TIMEOUT }, async (t) => {
			const missing = needs.filter((n) => !done.has(n));
			if (missing.length > 0) {
				t.skip(`needs ${missing.join(", ")}`);
				return;
			}
			await fn(t);
			done.add(name.split(" ")[0]);
		});
	}

	step("1a sign-up needs verification: no token, e-mail lower-cased", [], async () => {
		const { data, error } = await a.client.signUp.email({ name: "Ada Lovelace", email: typed, password: passwords.first });
		assert.equal(error, null, `signUp.email failed: ${JSON.stringify(error)}`);
		assert.equal(data.token, null);
		assert.equal(data.user.email, email);
		assert.equal(data.user.name, "Ada Lovelace");
		assert.equal(data.user.emailVerified, false);
		assert.ok(data.user.createdAt instanceof Date, `createdAt is ${typeof data.user.createdAt}: dates must have millisecond precision`);
		assert.deepEqual(sessionCookies(a.jar), [], "sign-up before verification must not sign in");
	});

	step("1b sign-in before verifying is refused with EMAIL_NOT_VERIFIED", ["1a"], async () => {
		const res = await a.client.signIn.email({ email, password: passwords.first });
		mustFail(res, "EMAIL_NOT_VERIFIED", 403);
	});

	step("2a the verification mail's link verifies the address", ["1a"], async () => {
		const mail = await waitForMail(email, "verif");
		assert.ok(mail.to.some((to) => to.toLowerCase() === email), `mail to ${JSON.stringify(mail.to)}`);
		const link = linkTo(mail, "/verify-email");
		assert.equal(link.origin, new URL(baseURL).origin, "links must be built from GATEHOUSE_BASE_URL");
		assert.ok(link.searchParams.get("token"), `no token in ${link}`);
		const res = await fetch(link, { redirect: "manual" });
		const body = await res.text();
		if (link.searchParams.has("callbackURL")) {
			assert.equal(res.status, 302, `GET ${link.pathname}: ${res.status} ${body}`);
			const location = res.headers.get("location") ?? "";
			assert.ok(!location.includes("error="), `redirected to ${location}`);
		} else {
			assert.equal(res.status, 200, `GET ${link.pathname}: ${res.status} ${body}`);
			assert.equal(JSON.parse(body).status, true, body);
		}
	});

	step("2b sign-in with the right password returns the user and a token", ["2a"], async () => {
		const data = await mustSignIn(a.client, email, passwords.first);
		assert.equal(typeof data.token, "string");
		assert.ok(data.token.length > 0);
		assert.equal(data.user.email, email);
		assert.equal(data.user.emailVerified, true);
		assert.equal(sessionCookies(a.jar).length, 1, `cookies: ${a.jar.names()}`);
	});

	step("2c sign-in with a wrong password is refused with INVALID_EMAIL_OR_PASSWORD", ["2a"], async () => {
		const { client } = newClient();
		mustFail(await client.signIn.email({ email, password: "wrong-Passw0rd!" }), "INVALID_EMAIL_OR_PASSWORD", 401);
		mustFail(await client.signIn.email({ email: randomEmail("nobody").toLowerCase(), password: passwords.first }), "INVALID_EMAIL_OR_PASSWORD", 401);
	});

	step("3 getSession returns the session and user with dates parsed", ["2b"], async () => {
		const { session, user } = await mustSession(a.client);
		assert.ok(session.expiresAt instanceof Date, `expiresAt is ${typeof session.expiresAt}: dates must have millisecond precision`);
		assert.ok(session.expiresAt > new Date(), `expiresAt ${session.expiresAt.toISOString()} is in the past`);
		assert.ok(user.createdAt instanceof Date, `createdAt is ${typeof user.createdAt}`);
		assert.equal(session.userId, user.id);
		assert.equal(user.email, email);
	});

	step("4 updateUser changes the name", ["3"], async () => {
		const { data, error } = await a.client.updateUser({ name: "Ada King" });
		assert.equal(error, null, `updateUser failed: ${JSON.stringify(error)}`);
		assert.equal(data.status, true);
		const { user } = await mustSession(a.client);
		assert.equal(user.name, "Ada King");
	});

	step("5 listSessions shows both devices; revokeSession signs the other out", ["3"], async () => {
		await mustSignIn(b.client, email, passwords.first);
		const mine = (await mustSession(a.client)).session;
		const theirs = (await mustSession(b.client)).session;
		assert.notEqual(mine.id, theirs.id);

		const { data: sessions, error } = await a.client.listSessions();
		assert.equal(error, null, `listSessions failed: ${JSON.stringify(error)}`);
		assert.ok(Array.isArray(sessions), `listSessions returned ${JSON.stringify(sessions)}`);
		assert.ok(sessions.some((s) => s.id === mine.id), "the current session is not listed");
		const other = sessions.find((s) => s.id === theirs.id);
		assert.ok(other, "the second device's session is not listed");
		assert.equal(typeof other.token, "string");
		assert.ok(other.expiresAt instanceof Date);

		const res = await a.client.revokeSession({ token: other.token });
		assert.equal(res.error, null, `revokeSession failed: ${JSON.stringify(res.error)}`);
		assert.equal(res.data.status, true);
		await mustSignedOut(b.client, "after revokeSession");
		await mustSession(a.client);
	});

	step("6 changePassword revokes other sessions; only the new password works", ["3"], async () => {
		await mustSignIn(b.client, email, passwords.first);
		const { data, error } = await a.client.changePassword({
			currentPassword: passwords.first,
			newPassword: passwords.second,
			revokeOtherSessions: true,
		});
		assert.equal(error, null, `changePassword failed: ${JSON.stringify(error)}`);
		assert.equal(typeof data.token, "string");
		assert.equal(data.user.email, email);
		await mustSession(a.client);
		await mustSignedOut(b.client, "after changePassword with revokeOtherSessions");

		password = passwords.second;
		const { client } = newClient();
		mustFail(await client.signIn.email({ email, password: passwords.first }), "INVALID_EMAIL_OR_PASSWORD", 401);
		await mustSignIn(client, email, passwords.second);
	});

	step("7 password reset by mail; the token works once", ["6"], async () => {
		const req = await a.client.requestPasswordReset({ email, redirectTo: "/reset-done" });
		assert.equal(req.error, null, `requestPasswordReset failed: ${JSON.stringify(req.error)}`);
		assert.equal(req.data.status, true);

		const mail = await waitForMail(email, "reset");
		const link = linkTo(mail, "/reset-password/");
		assert.equal(link.origin, new URL(baseURL).origin, "links must be built from GATEHOUSE_BASE_URL");
		const res = await fetch(link, { redirect: "manual" });
		const body = await res.text();
		assert.equal(res.status, 302, `GET ${link.pathname}: ${res.status} ${body}`);
		const location = new URL(res.headers.get("location") ?? "", baseURL);
		assert.ok(location.pathname.endsWith("/reset-done"), `redirected to ${location}`);
		const token = location.searchParams.get("token");
		assert.ok(token, `no token= in ${location}`);
		assert.equal(decodeURIComponent(link.pathname.split("/").pop()), token);

		const reset = await a.client.resetPassword({ newPassword: passwords.third, token });
		assert.equal(reset.error, null, `resetPassword failed: ${JSON.stringify(reset.error)}`);
		assert.equal(reset.data.status, true);
		password = passwords.third;

		const { client } = newClient();
		mustFail(await client.signIn.email({ email, password: passwords.second }), "INVALID_EMAIL_OR_PASSWORD", 401);
		await mustSignIn(client, email, passwords.third);

		mustFail(await a.client.resetPassword({ newPassword: "fourth-Passw0rd!", token }), "INVALID_TOKEN", 400);
		await mustSignIn(newClient().client, email, passwords.third);
	});

	step("8 signOut ends the session and clears the cookie", ["3"], async () => {
		if ((await a.client.getSession()).data === null) {
			// A reset may revoke sessions (revokeSessionsOnPasswordReset).
			await mustSignIn(a.client, email, password);
		}
		const { data, error } = await a.client.signOut();
		assert.equal(error, null, `signOut failed: ${JSON.stringify(error)}`);
		assert.equal(data.success, true);
		assert.deepEqual(sessionCookies(a.jar), [], "sign-out must expire the session cookie");
		await mustSignedOut(a.client, "after signOut");
	});
});
