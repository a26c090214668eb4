// Ensure openid-client, a strict OpenID Connect client nobody here wrote,
// completes the authorization code flow against Gatehouse's provider:
// discovery from the issuer (OpenID Connect Discovery, and RFC 8414 with the
// path inserted after the well-known prefix), PKCE, nonce and state, the
// hosted sign-in and consent pages driven with fetch and a cookie jar (forms
// read from the HTML, as a browser without JavaScript submits them), the code
// exchange with ID token validation, userinfo, refresh with rotation and
// revocation, after which userinfo and refresh fail. An issuer with a trailing
// slash is refused.
//
// This suite's own platform administrator (GATEHOUSE_TEST_OIDC_ADMIN_EMAIL,
// fresh per run, listed in GATEHOUSE_ADMIN_EMAILS by TestBetterAuthClient)
// registers a confidential third-party client and a public first-party one
// through the admin API.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as oidc from "openid-client";

import { authURL, baseURL, CookieJar, newClient, origin, randomEmail, signUpVerified, steps } from "./lib/gatehouse.mjs";

const adminEmail = process.env.GATEHOUSE_TEST_OIDC_ADMIN_EMAIL?.toLowerCase();
if (!adminEmail) {
	throw new Error(`GATEHOUSE_TEST_OIDC_ADMIN_EMAIL is not set: run this suite through "go test ./test/ -run TestBetterAuthClient"`);
}

/** The issuer: the base URL with the framework's base path, exactly. */
const issuer = authURL;
/** Plain HTTP on loopback in the tests; openid-client refuses it unless told. */
const insecure = { execute: [oidc.allowInsecureRequests] };
const scope = "openid profile email offline_access";

// --- HTML forms -----------------------------------------------------------

const entities = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };

/** decodeEntities decodes the character references an attribute may hold. */
function decodeEntities(s) {
	return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z0-9]+);/gi, (m, e) => {
		if (e[0] === "#") {
			const code = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
			return String.fromCodePoint(code);
		}
		return entities[e.toLowerCase()] ?? m;
	});
}

/** attributes parses the attributes of a start tag's inside. */
function attributes(tag) {
	const out = {};
	const re = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;
	for (const m of tag.matchAll(re)) {
		out[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "");
	}
	return out;
}

/**
 * parseForms returns every <form> of html: its action and method, the
 * fields it submits by default (inputs, checked checkboxes) and its named
 * submit buttons.
 */
export function parseForms(html) {
	const forms = [];
	for (const fm of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form\s*>/gi)) {
		const a = attributes(fm[1]);
		const form = { action: a.action ?? "", method: (a.method ?? "get").toLowerCase(), fields: [], submitters: [], hasPassword: false };
		for (const cm of fm[2].matchAll(/<(input|button)\b([^>]*)>/gi)) {
			const el = cm[1].toLowerCase();
			const c = attributes(cm[2]);
			const type = (c.type ?? (el === "button" ? "submit" : "text")).toLowerCase();
			if ("disabled" in c) continue;
			if (type === "password") form.hasPassword = true;
			if (!c.name) continue;
			if (type === "submit" || type === "image") form.submitters.push({ name: c.name, value: c.value ?? "" });
			else if (type === "checkbox" || type === "radio") {
				if ("checked" in c) form.fields.push({ name: c.name, value: c.value ?? "on" });
			} else if (el === "input" && !["button", "reset", "file"].includes(type)) form.fields.push({ name: c.name, value: c.value ?? "" });
		}
		forms.push(form);
	}
	return forms;
}

// --- A browser without JavaScript ------------------------------------------

/**
 * Browser follows redirects by hand, keeps cookies in a jar, and stops at a
 * client's redirect URI.
 */
class Browser {
	jar = new CookieJar();
	visited = [];

	/**
	 * go requests url (a GET, or a form POST when body is given) and follows
	 * redirects until a page that is not a redirect, or a redirect to stopAt
	 * (scheme, host and path). It returns {url, status, html, headers} or
	 * {callback: URL}.
	 */
	async go(url, { body, stopAt, pageOrigin } = {}) {
		let method = body ? "POST" : "GET";
		for (let hops = 0; hops < 15; hops++) {
			const u = new URL(url);
			this.visited.push(u.pathname);
			const headers = {};
			const cookie = this.jar.header();
			if (cookie && u.origin === origin) headers.cookie = cookie;
			if (method === "POST") {
				headers["content-type"] = "application/x-www-form-urlencoded";
				headers.origin = pageOrigin; // a browser sends the posting page's origin
			}
			const res = await fetch(u, { method, headers, body: method === "POST" ? body : undefined, redirect: "manual" });
			if (u.origin === origin) this.jar.store(res.headers.getSetCookie());
			if (res.status >= 300 && res.status < 400) {
				await res.arrayBuffer();
				const next = new URL(res.headers.get("location"), u);
				if (stopAt && `${next.origin}${next.pathname}` === stopAt) return { callback: next };
				if (res.status !== 307 && res.status !== 308) method = "GET";
				url = next;
				continue;
			}
			return { url: u, status: res.status, html: await res.text(), headers: res.headers };
		}
		throw new Error(`more than 15 redirects from ${url}; visited ${this.visited.join(" ")}`);
	}

	/** submit posts form of page with its fields and, if given, a submit button. */
	async submit(page, form, submitter, stopAt) {
		assert.equal(form.method, "post", `form to ${form.action} is not a POST`);
		const params = new URLSearchParams();
		for (const f of form.fields) params.append(f.name, f.value);
		if (submitter) params.append(submitter.name, submitter.value);
		return this.go(new URL(form.action || page.url.href, page.url), { body: params.toString(), stopAt, pageOrigin: page.url.origin });
	}
}

/** setField sets a field a form must have. */
function setField(form, name, value) {
	const f = form.fields.find((x) => x.name === name);
	assert.ok(f, `form to ${form.action} has no field ${name}: ${JSON.stringify(form.fields)}`);
	f.value = value;
}

/**
 * authorize walks the hosted pages for an authorization URL: the sign-in page
 * when the browser has no session, the consent page when asked, and returns
 * the callback URL.
 */
async function authorize(browser, authUrl, { redirectUri, user, signIn, consent }) {
	browser.visited = [];
	let r = await browser.go(authUrl, { stopAt: redirectUri });
	if (signIn) {
		assert.ok(r.html !== undefined && r.url.pathname === "/sign-in", `authorize without a session: ${r.status} ${r.url ?? r.callback} (visited ${browser.visited.join(" ")})\n${r.html ?? ""}`);
		assert.match(r.headers.get("content-type") ?? "", /^text\/html/);
		const form = parseForms(r.html).find((f) => f.hasPassword);
		assert.ok(form, `no sign-in form on ${r.url}:\n${r.html}`);
		setField(form, "email", user.email);
		setField(form, "password", user.password);
		r = await browser.submit(r, form, undefined, redirectUri);
	}
	if (consent) {
		assert.ok(r.html !== undefined && r.url.pathname === "/consent", `expected the consent page: ${r.status} ${r.url ?? r.callback} (visited ${browser.visited.join(" ")})\n${r.html ?? ""}`);
		let chosen;
		for (const f of parseForms(r.html)) {
			const s = f.submitters.find((x) => x.name === "accept" && x.value === "true");
			if (s) chosen = { form: f, submitter: s };
			else if (f.fields.some((x) => x.name === "accept" && x.value === "true")) chosen = { form: f };
			if (chosen) break;
		}
		assert.ok(chosen, `no form accepting on ${r.url}:\n${r.html}`);
		r = await browser.submit(r, chosen.form, chosen.submitter, redirectUri);
	} else {
		assert.ok(!browser.visited.includes("/consent"), `consent page shown: ${browser.visited.join(" ")}`);
	}
	assert.ok(r.callback, `authorization ended at ${r.status} ${r.url} instead of ${redirectUri} (visited ${browser.visited.join(" ")})\n${r.html}`);
	assert.equal(r.callback.searchParams.get("error"), null, `authorization failed: ${r.callback}`);
	assert.equal(r.callback.searchParams.get("iss"), issuer, "RFC 9207 iss");
	return r.callback;
}

// --- The admin API ---------------------------------------------------------

/** registerClient registers an OAuth client as the signed-in administrator. */
async function registerClient(admin, body) {
	const res = await fetch(`${baseURL}/api/admin/oauth-clients`, {
		method: "POST",
		headers: { "content-type": "application/json", origin, cookie: admin.jar.header() },
		body: JSON.stringify(body),
	});
	const text = await res.text();
	assert.equal(res.status, 201, `POST /api/admin/oauth-clients: ${res.status} ${text}`);
	const out = JSON.parse(text);
	assert.equal(typeof out.clientId, "string", text);
	return out;
}

let adminPromise;

/** adminSession signs the suite's administrator up once and returns its client. */
function adminSession() {
	adminPromise ??= (async () => {
		const admin = newClient();
		await signUpVerified(admin.client, { name: "Oidc Admin", email: adminEmail, password: "oidc-admin-Passw0rd!" });
		return admin;
	})();
	return adminPromise;
}

// --- The flows -------------------------------------------------------------

describe("openid-client discovery", () => {
	test("discovery from the issuer finds the issuer and the endpoints under it", async () => {
		const config = await oidc.discovery(new URL(issuer), "any-client", undefined, oidc.None(), insecure);
		const md = config.serverMetadata();
		assert.equal(md.issuer, issuer);
		assert.equal(md.authorization_endpoint, `${issuer}/oauth2/authorize`);
		assert.equal(md.token_endpoint, `${issuer}/oauth2/token`);
		assert.equal(md.jwks_uri, `${issuer}/jwks`);
		assert.ok(md.supportsPKCE("S256"), "code_challenge_methods_supported lacks S256");
	});

	test("RFC 8414 discovery (path insertion) finds the same issuer", async () => {
		const config = await oidc.discovery(new URL(issuer), "any-client", undefined, oidc.None(), { ...insecure, algorithm: "oauth2" });
		assert.equal(config.serverMetadata().issuer, issuer);
	});

	test("an issuer with a trailing slash is refused", async () => {
		// The document is found (OpenID discovery strips nothing: it appends
		// the well-known path), but its issuer is not the one asked for.
		await assert.rejects(
			oidc.discovery(new URL(`${issuer}/`), "any-client", undefined, oidc.None(), insecure),
			(err) => {
				assert.equal(err?.code, "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED", String(err));
				assert.equal(err?.cause?.attribute, "issuer", String(err));
				return true;
			},
			`discovery accepted ${issuer}/`,
		);
		// RFC 8414 path insertion keeps the slash in the path it asks for.
		await assert.rejects(
			oidc.discovery(new URL(`${issuer}/`), "any-client", undefined, oidc.None(), { ...insecure, algorithm: "oauth2" }),
			(err) => {
				assert.ok(
					["OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED", "OAUTH_RESPONSE_IS_NOT_CONFORM"].includes(err?.code),
					`RFC 8414 discovery of ${issuer}/ failed for another reason: ${err?.code} ${err}`,
				);
				return true;
			},
			`RFC 8414 discovery accepted ${issuer}/`,
		);
	});
});

for (const kind of ["confidential", "public"]) {
	describe(`openid-client code flow, ${kind} client`, () => {
		const step = steps();
		const redirectUri = `https://rp.example.test/node/${kind}/callback`;
		const user = { email: randomEmail(`oidc-${kind}`).toLowerCase(), password: "oidc-Passw0rd!" };
		const s = {};

		step("1 the administrator registers the client and a user signs up and verifies", [], async () => {
			s.client = await registerClient(await adminSession(), {
				name: `Node ${kind}`,
				redirectUris: [redirectUri],
				type: kind,
				firstParty: kind === "public",
			});
			assert.equal(typeof s.client.clientSecret === "string", kind === "confidential", JSON.stringify(s.client));
			const u = newClient();
			s.userId = (await signUpVerified(u.client, { name: `Nina ${kind}`, email: user.email, password: user.password })).id;
		});

		step("2 discovery configures the client", ["1"], async () => {
			s.config =
				kind === "confidential"
					? await oidc.discovery(new URL(issuer), s.client.clientId, s.client.clientSecret, undefined, insecure)
					: await oidc.discovery(new URL(issuer), s.client.clientId, undefined, oidc.None(), insecure);
		});

		step("3 the code flow with PKCE through the hosted pages gives verified tokens", ["2"], async () => {
			const verifier = oidc.randomPKCECodeVerifier();
			const nonce = oidc.randomNonce();
			const state = oidc.randomState();
			const url = oidc.buildAuthorizationUrl(s.config, {
				redirect_uri: redirectUri,
				scope,
				code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
				code_challenge_method: "S256",
				nonce,
				state,
			});
			s.browser = new Browser();
			const callback = await authorize(s.browser, url, { redirectUri, user, signIn: true, consent: kind === "confidential" });
			const tokens = await oidc.authorizationCodeGrant(s.config, callback, {
				pkceCodeVerifier: verifier,
				expectedNonce: nonce,
				expectedState: state,
				idTokenExpected: true,
			});
			const claims = tokens.claims();
			assert.equal(claims.iss, issuer);
			assert.equal(claims.sub, s.userId);
			assert.equal(claims.aud === s.client.clientId || (Array.isArray(claims.aud) && claims.aud.includes(s.client.clientId)), true);
			assert.equal(claims.nonce, nonce);
			assert.equal(claims.email, user.email);
			assert.equal(claims.email_verified, true);
			// How the user signed in: a password alone (docs/multi-factor.md).
			assert.deepEqual(claims.amr, ["pwd"]);
			assert.equal(claims.acr, "urn:gatehouse:acr:pwd");
			assert.equal(typeof claims.auth_time, "number");
			assert.equal(typeof tokens.refresh_token, "string");
			assert.equal(tokens.token_type.toLowerCase(), "bearer");
			s.tokens = tokens;
		});

		step("4 userinfo answers for the user", ["3"], async () => {
			const info = await oidc.fetchUserInfo(s.config, s.tokens.access_token, s.userId);
			assert.equal(info.sub, s.userId);
			assert.equal(info.email, user.email);
			assert.equal(info.email_verified, true);
			assert.deepEqual(info.amr, ["pwd"]);
			assert.equal(info.acr, "urn:gatehouse:acr:pwd");
		});

		step("5 refresh rotates the refresh token", ["3"], async () => {
			const next = await oidc.refreshTokenGrant(s.config, s.tokens.refresh_token);
			assert.notEqual(next.access_token, s.tokens.access_token);
			assert.equal(typeof next.refresh_token, "string");
			assert.notEqual(next.refresh_token, s.tokens.refresh_token);
			if (next.id_token) assert.equal(next.claims().sub, s.userId);
			const info = await oidc.fetchUserInfo(s.config, next.access_token, s.userId);
			assert.equal(info.sub, s.userId);
			s.refreshed = next;
		});

		step("6 after revocation userinfo and refresh fail", ["5"], async () => {
			await oidc.tokenRevocation(s.config, s.refreshed.refresh_token, { token_type_hint: "refresh_token" });
			await assert.rejects(oidc.fetchUserInfo(s.config, s.refreshed.access_token, s.userId), "userinfo accepted a revoked grant's token");
			await assert.rejects(oidc.refreshTokenGrant(s.config, s.refreshed.refresh_token), (err) => {
				assert.equal(err?.error, "invalid_grant", String(err));
				return true;
			});
		});
	});
}
