// Ensure the official better-auth client signs in through Gatehouse's social
// wire (signIn.social, the callback, linkSocial, listAccounts,
// getAccessToken, refreshToken, accountInfo, unlinkAccount) with real
// upstream providers, walked like a browser:
//
//   - Gatehouse B, a second Gatehouse serving as an OpenID provider
//     (provider "gatehouse-b", preset oidc, trusted for linking), which
//     TestBetterAuthClient_federation (test/clients_federation_test.go)
//     starts and registers;
//   - oauth2-mock-server, an OpenID provider nobody here wrote, as the google
//     preset with every endpoint overridden ("google-like");
//   - the same mock's authorize and token endpoints with a small GitHub-like
//     REST API served here (GET /user, GET /user/emails), as the github
//     preset ("github-like").
//
// The suite's browser keeps cookies per host name, as a browser does
// (RFC 6265 cookies ignore the port): Gatehouse A, Gatehouse B and the mocks
// all live on 127.0.0.1 and share one jar, which is why B's cookies have
// another prefix. Nothing navigates by itself: signIn.social answers {url,
// redirect: true} and the suite follows url and every redirect after it.
//
// Run only by TestBetterAuthClient_federation; under TestBetterAuthClient's
// "node --test ." the suite is skipped (its environment is missing).

import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";

import { OAuth2Server } from "oauth2-mock-server";

import { baseURL, CookieJar, mustFail, mustOk, mustSession, mustSignedOut, newClient, origin, randomEmail, signUpVerified, steps } from "./lib/gatehouse.mjs";

const env = (name) => process.env[name] ?? "";

/** Gatehouse B and its users, as TestBetterAuthClient_federation set them up. */
const upstream = {
	url: env("GATEHOUSE_TEST_UPSTREAM_URL").replace(/\/+$/, ""),
	provider: env("GATEHOUSE_TEST_UPSTREAM_PROVIDER"),
	password: env("GATEHOUSE_TEST_UPSTREAM_PASSWORD"),
	user: { email: env("GATEHOUSE_TEST_UPSTREAM_EMAIL"), id: env("GATEHOUSE_TEST_UPSTREAM_ID"), name: "Uma Upstream" },
	linker: { email: env("GATEHOUSE_TEST_UPSTREAM_LINK_EMAIL"), id: env("GATEHOUSE_TEST_UPSTREAM_LINK_ID"), name: "Lin Linker" },
};
/** A's platform administrator, who registers the mock providers. */
const admin = { email: env("GATEHOUSE_TEST_ADMIN_EMAIL"), password: env("GATEHOUSE_TEST_ADMIN_PASSWORD") };

const skip = upstream.url && admin.password ? false : "needs GATEHOUSE_TEST_UPSTREAM_URL and friends: run through go test ./test/ -run TestBetterAuthClient_federation";

/** callbackOf is A's callback URL for a provider. */
const callbackOf = (provider) => `${baseURL}/api/auth/callback/${provider}`;

/** The keys list-accounts shows for an account: never a token. */
const ACCOUNT_KEYS = ["accountId", "createdAt", "id", "providerId", "scopes", "updatedAt", "userId"];

// --- A browser ---------------------------------------------------------------

/**
 * Browser follows redirects by hand with one cookie jar per host name (not
 * per port, as a browser keeps them), and records where it went.
 */
class Browser {
	#jars = new Map();
	visited = [];

	/** jar returns the jar of url's host name. */
	jar(url) {
		const host = new URL(url).hostname;
		if (!this.#jars.has(host)) this.#jars.set(host, new CookieJar());
		return this.#jars.get(host);
	}

	/** client returns a better-auth client for A bound to this browser's jar. */
	client() {
		return newClient(this.jar(baseURL)).client;
	}

	/** send makes one request with the host's cookies and keeps the ones set. */
	async send(url, { method = "GET", headers = {}, body } = {}) {
		const u = new URL(url);
		const h = { ...headers };
		const cookie = this.jar(u).header();
		if (cookie) h.cookie = cookie;
		this.visited.push(`${method} ${u.origin}${u.pathname}`);
		const res = await fetch(u, { method, headers: h, body, redirect: "manual" });
		this.jar(u).store(res.headers.getSetCookie());
		return res;
	}

	/**
	 * go GETs url and follows redirects until an answer that is not one
	 * ({url, status, body}) or a redirect to a URL stop accepts ({stoppedAt}).
	 */
	async go(url, stop = () => false) {
		for (let hops = 0; hops < 10; hops++) {
			const res = await this.send(url);
			if (res.status < 300 || res.status >= 400) return { url: new URL(url), status: res.status, body: await res.text() };
			await res.arrayBuffer();
			const next = new URL(res.headers.get("location"), url);
			if (stop(next)) return { stoppedAt: next };
			url = next;
		}
		throw new Error(`more than 10 redirects; visited ${this.visited.join(" → ")}`);
	}

	/** postJSON posts body as JSON from a page of url's origin. */
	async postJSON(url, body) {
		const res = await this.send(url, {
			method: "POST",
			headers: { "content-type": "application/json", origin: new URL(url).origin },
			body: JSON.stringify(body),
		});
		return { status: res.status, body: await res.text() };
	}
}

/** at returns a stop predicate for a URL's origin and path. */
const at = (target) => {
	const t = new URL(target);
	return (u) => u.origin === t.origin && u.pathname === t.pathname;
};

/** leaves returns a stop predicate for any URL off the given origin and path. */
const leaves = (target) => (u) => !at(target)(u);

/**
 * finish follows A's callback URL in browser and returns where A sends the
 * browser next (a URL, not followed: nothing serves the apps' pages here).
 */
async function finish(browser, callback) {
	const r = await browser.go(callback, leaves(callback));
	assert.ok(r.stoppedAt, `A's callback answered ${r.status} instead of a redirect: ${r.body} (visited ${browser.visited.join(" → ")})`);
	return r.stoppedAt;
}

/** startAt calls signIn.social or linkSocial and checks its answer. */
async function startAt(call, what) {
	const data = mustOk(await call, what);
	assert.equal(data.redirect, true, `${what}: ${JSON.stringify(data)}`);
	assert.equal(typeof data.url, "string", `${what}: ${JSON.stringify(data)}`);
	return new URL(data.url);
}

// --- Gatehouse B ------------------------------------------------------------

/**
 * authorizeAtB walks B's authorization for browser: B sends a browser
 * without a session to its sign-in page; the user signs in there (the
 * page's JSON call, sign-in/email with B's Origin) and the authorization is
 * asked again, which sends the browser to A's callback. It returns that URL.
 */
async function authorizeAtB(browser, authorize, user) {
	const callback = callbackOf(upstream.provider);
	let r = await browser.go(authorize, at(callback));
	if (!r.stoppedAt) {
		assert.equal(r.status, 200, `B's authorization ended at ${r.status} ${r.url}: ${r.body}`);
		assert.equal(`${r.url.origin}${r.url.pathname}`, `${upstream.url}/sign-in`, `B's authorization without a session (visited ${browser.visited.join(" → ")})`);
		const signIn = await browser.postJSON(`${upstream.url}/api/auth/sign-in/email`, { email: user.email, password: upstream.password });
		assert.equal(signIn.status, 200, `sign-in at B: ${signIn.body}`);
		r = await browser.go(authorize, at(callback));
	}
	assert.ok(r.stoppedAt, `B's authorization after signing in ended at ${r.status} ${r.url} (visited ${browser.visited.join(" → ")}):\n${r.body}`);
	const cb = r.stoppedAt;
	assert.equal(cb.searchParams.get("error"), null, `B answered an error: ${cb}`);
	assert.equal(cb.searchParams.get("state"), authorize.searchParams.get("state"), "B returned another state");
	assert.equal(cb.searchParams.get("iss"), `${upstream.url}/api/auth`, "RFC 9207 iss from B");
	assert.ok(cb.searchParams.get("code"), `no code: ${cb}`);
	return cb;
}

/** userinfoAtB reads B's userinfo with an access token A holds. */
async function userinfoAtB(accessToken) {
	const res = await fetch(`${upstream.url}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
	const text = await res.text();
	assert.equal(res.status, 200, `B's userinfo: ${text}`);
	return JSON.parse(text);
}

// --- A's admin API -------------------------------------------------------------

let adminJar;

/** registerProvider registers an identity provider at A as its administrator. */
async function registerProvider(body) {
	if (!adminJar) {
		const { client, jar } = newClient();
		mustOk(await client.signIn.email({ email: admin.email, password: admin.password }), "the administrator's sign-in at A");
		adminJar = jar;
	}
	const res = await fetch(`${baseURL}/api/admin/identity-providers`, {
		method: "POST",
		headers: { "content-type": "application/json", origin, cookie: adminJar.header() },
		body: JSON.stringify(body),
	});
	const text = await res.text();
	assert.equal(res.status, 201, `POST /api/admin/identity-providers ${body.id}: ${text}`);
	assert.ok(!text.includes(body.clientSecret), `the answer shows the client secret: ${text}`);
	const out = JSON.parse(text);
	assert.equal(out.id, body.id);
	assert.equal(out.preset, body.preset);
	assert.equal(out.clientSecretSet, true);
	assert.equal(out.callbackUrl, callbackOf(body.id));
	return out;
}

// --- The mocks ----------------------------------------------------------------

/**
 * mock is oauth2-mock-server with hooks: the identity the next tokens are
 * about (`who`), the authorize and token requests and access tokens it
 * issued, and a switch that breaks the next ID token's nonce.
 */
const mock = {
	server: undefined,
	who: undefined,
	authorizeQueries: [],
	tokenRequests: [],
	idTokenNonces: [],
	issued: new Set(),
	userinfoCalls: 0,
	breakNonce: false,
	get issuer() {
		return this.server.issuer.url;
	},
};

/** The GitHub-like API: the users it knows by the mock's access tokens. */
const gh = { server: undefined, url: "", calls: [] };

/** bearer returns the token of an Authorization: Bearer header, or "". */
const bearer = (req) => /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";

async function startMocks() {
	const s = new OAuth2Server();
	await s.issuer.keys.generate("RS256");
	await s.start(0, "127.0.0.1");
	mock.server = s;
	s.service.on("beforeAuthorizeRedirect", (_redirect, req) => {
		mock.authorizeQueries.push({ ...req.query });
	});
	s.service.on("beforeTokenSigning", (token, req) => {
		const w = mock.who;
		assert.ok(w, "a token was asked for while no identity was set");
		token.payload.sub = w.sub;
		if (token.payload.aud !== undefined) {
			// The ID token (the access token has no aud): the address, but
			// no name, so that Gatehouse reads the name from userinfo.
			token.payload.email = w.email;
			token.payload.email_verified = w.email_verified;
			mock.idTokenNonces.push(token.payload.nonce);
			if (mock.breakNonce) token.payload.nonce = "not-the-nonce-that-was-sent";
		}
	});
	s.service.on("beforeResponse", (response, req) => {
		mock.tokenRequests.push({ body: { ...req.body }, authorization: req.headers.authorization ?? "" });
		if (response.body.access_token) mock.issued.add(response.body.access_token);
	});
	s.service.on("beforeUserinfo", (response, req) => {
		mock.userinfoCalls++;
		const w = mock.who;
		if (!mock.issued.has(bearer(req)) || !w) {
			response.statusCode = 401;
			response.body = { error: "invalid_token" };
			return;
		}
		response.body = { sub: w.sub, name: w.name, email: w.email, email_verified: w.email_verified };
	});

	gh.server = http.createServer((req, res) => {
		gh.calls.push({ path: req.url, accept: req.headers.accept, version: req.headers["x-github-api-version"], ua: req.headers["user-agent"] ?? "" });
		const send = (status, body) => {
			res.writeHead(status, { "content-type": "application/json" });
			res.end(JSON.stringify(body));
		};
		// Only a token the mock issued opens the API.
		if (!mock.issued.has(bearer(req)) || !gh.user) return send(401, { message: "Bad credentials" });
		if (req.method === "GET" && req.url === "/user") return send(200, gh.user.profile);
		if (req.method === "GET" && req.url === "/user/emails") return send(200, gh.user.emails);
		send(404, { message: "Not Found" });
	});
	await new Promise((resolve) => gh.server.listen(0, "127.0.0.1", resolve));
	gh.url = `http://127.0.0.1:${gh.server.address().port}`;
}

async function stopMocks() {
	await mock.server?.stop();
	await new Promise((resolve) => (gh.server ? gh.server.close(resolve) : resolve()));
}

// --- The suites ---------------------------------------------------------------

describe("signIn.social refusals", { skip }, () => {
	test("an unknown provider is 404 PROVIDER_NOT_FOUND", async () => {
		const client = new Browser().client();
		mustFail(await client.signIn.social({ provider: "nope", callbackURL: "/account" }), "PROVIDER_NOT_FOUND", 404);
	});

	test("an errorCallbackURL on another site is 403 INVALID_ERROR_CALLBACK_URL", async () => {
		const client = new Browser().client();
		mustFail(
			await client.signIn.social({ provider: upstream.provider, callbackURL: "/account", errorCallbackURL: "https://evil.example/" }),
			"INVALID_ERROR_CALLBACK_URL",
			403,
		);
	});

	test("a callbackURL on another site is 403 INVALID_CALLBACK_URL", async () => {
		const client = new Browser().client();
		mustFail(await client.signIn.social({ provider: upstream.provider, callbackURL: "https://evil.example/" }), "INVALID_CALLBACK_URL", 403);
	});
});

describe("through Gatehouse B", { skip }, () => {
	const step = steps();
	const browser = new Browser();
	const client = browser.client();
	const s = {};

	step("1 signIn.social answers B's authorization URL with PKCE, state, nonce and the provider's scopes", [], async () => {
		const url = await startAt(client.signIn.social({ provider: upstream.provider, callbackURL: "/account" }), "signIn.social");
		assert.equal(`${url.origin}${url.pathname}`, `${upstream.url}/api/auth/oauth2/authorize`);
		const q = url.searchParams;
		assert.equal(q.get("response_type"), "code");
		assert.equal(q.get("redirect_uri"), callbackOf(upstream.provider));
		assert.equal(q.get("scope"), "openid email profile offline_access");
		assert.equal(q.get("code_challenge_method"), "S256");
		assert.match(q.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
		assert.ok((q.get("state") ?? "").length >= 16, `state ${q.get("state")}`);
		assert.ok((q.get("nonce") ?? "").length >= 16, `nonce ${q.get("nonce")}`);
		assert.ok(browser.jar(baseURL).names().includes("gatehouse.state"), `A set no state cookie: ${browser.jar(baseURL).names()}`);
		s.authorize = url;
	});

	step("2 B signs the user in on its page and sends the browser to A's callback, which signs in and lands on callbackURL", ["1"], async () => {
		const callback = await authorizeAtB(browser, s.authorize, upstream.user);
		const landing = await finish(browser, callback);
		assert.equal(landing.href, `${baseURL}/account`);
		assert.ok(!browser.jar(baseURL).names().includes("gatehouse.state"), "the state cookie outlived the callback");
	});

	step("3 getSession shows B's user, verified", ["2"], async () => {
		const { user } = await mustSession(client);
		assert.equal(user.email, upstream.user.email);
		assert.equal(user.name, upstream.user.name);
		assert.equal(user.emailVerified, true);
		s.user = user;
	});

	step("4 listAccounts shows the one gatehouse-b account with B's subject and no token", ["3"], async () => {
		const accounts = mustOk(await client.listAccounts(), "listAccounts");
		assert.equal(accounts.length, 1, JSON.stringify(accounts));
		const [a] = accounts;
		assert.deepEqual(Object.keys(a).sort(), ACCOUNT_KEYS, JSON.stringify(a));
		assert.equal(a.providerId, upstream.provider);
		assert.equal(a.accountId, upstream.user.id);
		assert.equal(a.userId, s.user.id);
		assert.deepEqual([...a.scopes].sort(), ["email", "offline_access", "openid", "profile"]);
		s.account = a;
	});

	step("5 getAccessToken answers B's access token, which B's userinfo accepts", ["4"], async () => {
		const tok = mustOk(await client.getAccessToken({ accountId: s.account.id }), "getAccessToken");
		assert.equal(typeof tok.accessToken, "string");
		assert.ok(tok.accessToken.length > 0);
		assert.ok(Date.parse(tok.accessTokenExpiresAt) > Date.now(), `accessTokenExpiresAt ${tok.accessTokenExpiresAt}`);
		assert.deepEqual([...tok.scopes].sort(), ["email", "offline_access", "openid", "profile"]);
		assert.equal(typeof tok.idToken, "string");
		const info = await userinfoAtB(tok.accessToken);
		assert.equal(info.sub, upstream.user.id);
		assert.equal(info.email, upstream.user.email);
		s.accessToken = tok.accessToken;
	});

	step("6 refreshToken redeems B's refresh token: a new access token, the refresh token kept inside (null)", ["5"], async () => {
		const r = mustOk(await client.refreshToken({ accountId: s.account.id }), "refreshToken");
		assert.equal(r.refreshToken, null);
		assert.equal(r.providerId, upstream.provider);
		assert.equal(r.accountId, s.account.id);
		assert.equal(typeof r.accessToken, "string");
		assert.notEqual(r.accessToken, s.accessToken);
		assert.deepEqual(r.scope.split(",").sort(), ["email", "offline_access", "openid", "profile"]);
		assert.equal((await userinfoAtB(r.accessToken)).sub, upstream.user.id);
		// getAccessToken now answers the refreshed token.
		const tok = mustOk(await client.getAccessToken({ accountId: s.account.id }), "getAccessToken after refreshToken");
		assert.equal(tok.accessToken, r.accessToken);
	});

	step("7 accountInfo reads B's userinfo with the account's token", ["4"], async () => {
		const info = mustOk(await client.accountInfo({ query: { accountId: s.account.id } }), "accountInfo");
		assert.deepEqual(info.account, { id: s.account.id, providerId: upstream.provider, accountId: upstream.user.id });
		assert.equal(info.user.id, upstream.user.id);
		assert.equal(info.user.email, upstream.user.email);
		assert.equal(info.user.name, upstream.user.name);
		assert.equal(info.user.emailVerified, true);
		assert.equal(info.data.sub, upstream.user.id);
	});

	step("8 the only way in cannot be unlinked: FAILED_TO_UNLINK_LAST_ACCOUNT", ["4"], async () => {
		mustFail(await client.unlinkAccount({ accountId: s.account.id }), "FAILED_TO_UNLINK_LAST_ACCOUNT", 400);
		assert.equal(mustOk(await client.listAccounts(), "listAccounts").length, 1);
	});

	step("9 a second sign-in, already signed in at B, finds the same user", ["3"], async () => {
		const again = new Browser();
		// The same browser's cookies at B, none at A.
		again.jar(upstream.url).store(browser.jar(upstream.url).header().split("; ").filter((c) => c.startsWith("upstream.")));
		const c = again.client();
		const url = await startAt(c.signIn.social({ provider: upstream.provider, callbackURL: "/account", newUserCallbackURL: "/welcome" }), "signIn.social");
		const landing = await finish(again, await authorizeAtB(again, url, upstream.user));
		assert.ok(!again.visited.includes(`GET ${upstream.url}/sign-in`), `B asked again: ${again.visited.join(" → ")}`);
		assert.equal(landing.href, `${baseURL}/account`, "a returning user is not new");
		assert.equal((await mustSession(c)).user.id, s.user.id);
	});
});

describe("linkSocial through Gatehouse B", { skip }, () => {
	const step = steps();
	const browser = new Browser();
	const client = browser.client();
	const s = {};

	step("1 a user signs up at A with a password and B's address, and verifies it", [], async () => {
		s.user = await signUpVerified(client, { name: upstream.linker.name, email: upstream.linker.email, password: "linker-Passw0rd!" });
	});

	step("2 linkSocial sends the browser through B back to callbackURL, without a new session", ["1"], async () => {
		const before = (await mustSession(client)).session.id;
		const url = await startAt(client.linkSocial({ provider: upstream.provider, callbackURL: "/linked" }), "linkSocial");
		assert.equal(`${url.origin}${url.pathname}`, `${upstream.url}/api/auth/oauth2/authorize`);
		const landing = await finish(browser, await authorizeAtB(browser, url, upstream.linker));
		assert.equal(landing.href, `${baseURL}/linked`);
		const { user, session } = await mustSession(client);
		assert.equal(user.id, s.user.id);
		assert.equal(session.id, before);
	});

	step("3 listAccounts shows the password and the linked account", ["2"], async () => {
		const accounts = mustOk(await client.listAccounts(), "listAccounts");
		assert.deepEqual(accounts.map((a) => a.providerId).sort(), ["credential", upstream.provider]);
		const linked = accounts.find((a) => a.providerId === upstream.provider);
		assert.equal(linked.accountId, upstream.linker.id);
		assert.equal(linked.userId, s.user.id);
		s.linked = linked;
	});

	step("4 with the password left, unlinkAccount removes the linked account", ["3"], async () => {
		assert.deepEqual(mustOk(await client.unlinkAccount({ accountId: s.linked.id }), "unlinkAccount"), { status: true });
		const accounts = mustOk(await client.listAccounts(), "listAccounts");
		assert.deepEqual(accounts.map((a) => a.providerId), ["credential"]);
		mustFail(await client.getAccessToken({ accountId: s.linked.id }), "ACCOUNT_NOT_FOUND", 400);
	});
});

describe("oauth2-mock-server as the google and github presets", { skip }, () => {
	const step = steps();
	const clients = {
		google: { id: "gatehouse-a-google", secret: `google-secret-${crypto.randomUUID()}` },
		github: { id: "gatehouse-a-github", secret: `github-secret-${crypto.randomUUID()}` },
	};

	before(async () => {
		if (!skip) await startMocks();
	});
	after(stopMocks);

	step("1 the administrator registers google-like (the google preset, the mock's endpoints) and github-like (the github preset, the mock and a GitHub-like API)", [], async () => {
		const iss = mock.issuer;
		const g = await registerProvider({
			id: "google-like",
			preset: "google",
			name: "Google-like",
			issuer: iss,
			clientId: clients.google.id,
			clientSecret: clients.google.secret,
			endpoints: { authorization: `${iss}/authorize`, token: `${iss}/token`, userinfo: `${iss}/userinfo`, jwks: `${iss}/jwks` },
			trustedForLinking: false,
		});
		assert.equal(g.issuer, iss);
		assert.deepEqual(g.scopes, ["openid", "email", "profile"]);
		assert.equal(g.trustedForLinking, false);
		const h = await registerProvider({
			id: "github-like",
			preset: "github",
			name: "GitHub-like",
			clientId: clients.github.id,
			clientSecret: clients.github.secret,
			endpoints: { authorization: `${iss}/authorize`, token: `${iss}/token`, api: gh.url },
		});
		assert.deepEqual(h.scopes, ["read:user", "user:email"]);
		assert.equal(h.endpoints.api, gh.url);
	});

	step("2 google-like: a new user signs in through the mock's authorize, lands on newUserCallbackURL, named by userinfo", ["1"], async () => {
		mock.who = { sub: "google-sub-1001", email: randomEmail("gina").toLowerCase(), email_verified: true, name: "Gina Google" };
		const userinfoBefore = mock.userinfoCalls;
		const browser = new Browser();
		const client = browser.client();
		const url = await startAt(client.signIn.social({ provider: "google-like", callbackURL: "/account", newUserCallbackURL: "/welcome" }), "signIn.social");
		assert.equal(`${url.origin}${url.pathname}`, `${mock.issuer}/authorize`);
		const callback = callbackOf("google-like");
		const r = await browser.go(url, at(callback));
		assert.ok(r.stoppedAt, `the mock did not send the browser to A's callback: ${r.status} ${r.body}`);
		const landing = await finish(browser, r.stoppedAt);
		assert.equal(landing.href, `${baseURL}/welcome`);

		// What the mock saw: the authorization request…
		const q = mock.authorizeQueries.at(-1);
		assert.equal(q.client_id, clients.google.id);
		assert.equal(q.redirect_uri, callback);
		assert.equal(q.response_type, "code");
		assert.equal(q.scope, "openid email profile");
		assert.equal(q.code_challenge_method, "S256");
		assert.ok(q.nonce?.length >= 16, `nonce ${q.nonce}`);
		// …the code exchange, with client_secret_basic (the mock's discovery
		// lists only "none", so Gatehouse keeps the default) and the verifier…
		const t = mock.tokenRequests.at(-1);
		assert.equal(t.body.grant_type, "authorization_code");
		assert.equal(t.body.redirect_uri, callback);
		assert.match(t.body.code_verifier ?? "", /^[A-Za-z0-9._~-]{43,128}$/);
		assert.equal(t.body.client_secret, undefined, "the secret went in the body");
		assert.equal(t.authorization, `Basic ${Buffer.from(`${clients.google.id}:${clients.google.secret}`).toString("base64")}`);
		// …the nonce copied into the ID token, and userinfo read for the name.
		assert.equal(mock.idTokenNonces.at(-1), q.nonce);
		assert.equal(mock.userinfoCalls, userinfoBefore + 1);

		const { user } = await mustSession(client);
		assert.equal(user.email, mock.who.email);
		assert.equal(user.name, "Gina Google");
		assert.equal(user.emailVerified, true);
		const accounts = mustOk(await client.listAccounts(), "listAccounts");
		assert.deepEqual(
			accounts.map((a) => [a.providerId, a.accountId]),
			[["google-like", "google-sub-1001"]],
		);
	});

	step("3 google-like: an ID token whose nonce is not the one sent is refused (error=unable_to_get_user_info), no session", ["1"], async () => {
		mock.who = { sub: "google-sub-1002", email: randomEmail("nora").toLowerCase(), email_verified: true, name: "Nora Nonce" };
		mock.breakNonce = true;
		try {
			const browser = new Browser();
			const client = browser.client();
			const url = await startAt(client.signIn.social({ provider: "google-like", callbackURL: "/account", errorCallbackURL: "/oops" }), "signIn.social");
			const r = await browser.go(url, at(callbackOf("google-like")));
			const landing = await finish(browser, r.stoppedAt);
			assert.equal(landing.href, `${baseURL}/oops?error=unable_to_get_user_info`);
			await mustSignedOut(client, "after a refused ID token");
		} finally {
			mock.breakNonce = false;
		}
	});

	step("4 google-like: a verified address of an existing user is not linked by an untrusted provider (error=account_not_linked)", ["1"], async () => {
		// The administrator's address, verified at A; google-like is not
		// trusted for linking, so its word that the address is verified is
		// not enough (Better Auth would link: trusted OR verified).
		mock.who = { sub: "google-sub-1003", email: admin.email, email_verified: true, name: "Not The Admin" };
		const browser = new Browser();
		const client = browser.client();
		const url = await startAt(client.signIn.social({ provider: "google-like", callbackURL: "/account", errorCallbackURL: "/oops" }), "signIn.social");
		const r = await browser.go(url, at(callbackOf("google-like")));
		const landing = await finish(browser, r.stoppedAt);
		assert.equal(landing.href, `${baseURL}/oops?error=account_not_linked`);
		await mustSignedOut(client, "after a refused link");
	});

	step("5 github-like: the user signs in with the verified primary address from /user/emails", ["1"], async () => {
		const primary = randomEmail("octo").toLowerCase();
		mock.who = { sub: "unused-by-github", email: "unused@example.test", email_verified: true, name: "unused" };
		gh.user = {
			profile: { id: 4242001, login: "octo-hub", name: "Octo Hub", email: "public.octo@example.test", avatar_url: "https://avatars.example.test/4242001" },
			emails: [
				{ email: "old.octo@example.test", primary: false, verified: true },
				{ email: primary, primary: true, verified: true },
			],
		};
		const callsBefore = gh.calls.length;
		const browser = new Browser();
		const client = browser.client();
		const url = await startAt(client.signIn.social({ provider: "github-like", callbackURL: "/gh" }), "signIn.social");
		assert.equal(`${url.origin}${url.pathname}`, `${mock.issuer}/authorize`);
		assert.equal(url.searchParams.get("nonce"), null, "GitHub gets no nonce");
		assert.equal(url.searchParams.get("scope"), "read:user user:email");
		assert.equal(url.searchParams.get("code_challenge_method"), "S256");
		const r = await browser.go(url, at(callbackOf("github-like")));
		assert.ok(r.stoppedAt, `the mock did not send the browser to A's callback: ${r.status} ${r.body}`);
		const landing = await finish(browser, r.stoppedAt);
		assert.equal(landing.href, `${baseURL}/gh`);

		// The code exchange used client_secret_post, as GitHub wants.
		const t = mock.tokenRequests.at(-1);
		assert.equal(t.body.client_id, clients.github.id);
		assert.equal(t.body.client_secret, clients.github.secret);
		assert.equal(t.authorization, "");
		// The API was read as GitHub asks to be.
		const calls = gh.calls.slice(callsBefore);
		assert.deepEqual(calls.map((c) => c.path), ["/user", "/user/emails"]);
		for (const c of calls) {
			assert.equal(c.accept, "application/vnd.github+json");
			assert.equal(c.version, "2022-11-28");
			assert.ok(c.ua.length > 0, "no User-Agent");
		}

		const { user } = await mustSession(client);
		assert.equal(user.email, primary);
		assert.equal(user.name, "Octo Hub");
		assert.equal(user.emailVerified, true);
		const accounts = mustOk(await client.listAccounts(), "listAccounts");
		assert.deepEqual(
			accounts.map((a) => [a.providerId, a.accountId]),
			[["github-like", "4242001"]],
		);
		const info = mustOk(await client.accountInfo({ query: { accountId: accounts[0].id } }), "accountInfo");
		assert.equal(info.user.email, primary);
		assert.equal(info.data.login, "octo-hub");
		assert.deepEqual(info.account, { id: accounts[0].id, providerId: "github-like", accountId: "4242001" });
	});
});
