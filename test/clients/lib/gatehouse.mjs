// Helpers for driving Gatehouse with the official better-auth client from
// Node: where Gatehouse and the test mailbox are, a cookie jar, a client
// bound to a jar, reading mail, and steps that share state.

import assert from "node:assert/strict";
import { test } from "node:test";

import { createAuthClient } from "better-auth/client";

/** Reads a required environment variable, naming it when it is missing. */
function required(name) {
	const v = process.env[name];
	if (!v) {
		throw new Error(`${name} is not set: run this suite through "go test ./test/ -run TestBetterAuthClient"`);
	}
	return v.replace(/\/+$/, "");
}

/** GATEHOUSE_URL: Gatehouse's public base URL (an origin, no path). */
export const baseURL = required("GATEHOUSE_URL");
/** MAILBOX_URL: serves GET /messages?to=<address> for the test SMTP server. */
export const mailboxURL = required("MAILBOX_URL");
/** The origin every request claims, as a browser on Gatehouse's own pages would. */
export const origin = new URL(baseURL).origin;
/** Where the framework routes live. */
export const authURL = `${baseURL}/api/auth`;

/**
 * CookieJar keeps the cookies one "browser" holds. Node's fetch keeps none,
 * and the client never reads Set-Cookie itself (better-auth-wire.md §12.5).
 */
export class CookieJar {
	#cookies = new Map();

	/** Applies Set-Cookie header values: an empty value, Max-Age<=0 or a past Expires deletes. */
	store(setCookies) {
		for (const line of setCookies) {
			const [pair, ...attrs] = line.split(";");
			const eq = pair.indexOf("=");
			if (eq <= 0) continue;
			const name = pair.slice(0, eq).trim();
			const value = pair.slice(eq + 1).trim();
			let expired = value === "";
			for (const attr of attrs) {
				const [k, v = ""] = attr.trim().split("=", 2);
				if (k.toLowerCase() === "max-age" && Number(v) <= 0) expired = true;
				if (k.toLowerCase() === "expires" && Date.parse(v) <= Date.now()) expired = true;
			}
			if (expired) this.#cookies.delete(name);
			else this.#cookies.set(name, value);
		}
	}

	/** Returns the Cookie request header, or "" when the jar is empty. */
	header() {
		return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
	}

	/** Returns the names of the cookies held. */
	names() {
		return [...this.#cookies.keys()];
	}
}

/**
 * newClient returns a better-auth client whose requests carry jar's cookies
 * and a trusted Origin (Node's fetch sends none, and Gatehouse, like Better
 * Auth, refuses sign-up, sign-in and cookie-bearing POSTs without one).
 * It takes a jar, or options {jar, plugins}: plugins are the client's own
 * (organizationClient(), adminClient(), …) and add their actions.
 */
export function newClient(jarOrOptions = {}) {
	const { jar = new CookieJar(), plugins = [] } = jarOrOptions instanceof CookieJar ? { jar: jarOrOptions } : jarOrOptions;
	const client = createAuthClient({
		baseURL,
		plugins,
		fetchOptions: {
			headers: { origin },
			onRequest(ctx) {
				const cookie = jar.header();
				if (cookie) ctx.headers.set("cookie", cookie);
				else ctx.headers.delete("cookie");
			},
			onResponse(ctx) {
				jar.store(ctx.response.headers.getSetCookie());
			},
		},
	});
	return { client, jar };
}

/** Returns a fresh, random, mixed-case address so every run starts clean. */
export function randomEmail(label) {
	const id = crypto.randomUUID().slice(0, 12);
	return `${label}.${id}@Clients.Example.TEST`;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * waitForMail polls the mailbox until more than `seen` messages to `to`
 * have a subject containing `word` (case-insensitive), and returns the newest.
 */
export async function waitForMail(to, word, { seen = 0, timeoutMs = 10_000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	const url = `${mailboxURL}/messages?to=${encodeURIComponent(to)}`;
	let last = [];
	for (;;) {
		const res = await fetch(url);
		if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
		last = await res.json();
		const hits = last.filter((m) => (m.subject ?? "").toLowerCase().includes(word.toLowerCase()));
		if (hits.length > seen) return hits[hits.length - 1];
		if (Date.now() > deadline) {
			const subjects = last.map((m) => JSON.stringify(m.subject)).join(", ") || "none";
			throw new Error(`no mail to ${to} with "${word}" in its subject within ${timeoutMs} ms (subjects: ${subjects})`);
		}
		await sleep(100);
	}
}

/**
 * linkTo returns the link in message whose path is base + path (or starts
 * with it, for paths ending in "/"), looking at the mailbox's links first and
 * then at the text. base is authURL unless given (pages outside the framework
 * routes, such as the invitation page, sit under baseURL).
 */
export function linkTo(message, path, { base = authURL } = {}) {
	const want = new URL(base + path).pathname;
	const candidates = [...(message.links ?? []), ...((message.text ?? "").match(/https?:\/\/[^\s<>"']+/g) ?? [])];
	for (const c of candidates) {
		let u;
		try {
			u = new URL(c);
		} catch {
			continue;
		}
		if (want.endsWith("/") ? u.pathname.startsWith(want) : u.pathname === want) return u;
	}
	throw new Error(`no link to ${want} in mail ${JSON.stringify(message.subject)}: ${JSON.stringify(candidates)}`);
}

// Helpers shared by the suites that drive a whole flow step by step.

/**
 * steps returns step(name, needs, fn): a test that runs only when the steps
 * it needs passed, and is skipped naming them otherwise. A step is known by
 * the first word of its name ("3a", "4", …). Declare steps in order inside a
 * describe: node:test runs them one after the other.
 */
export function steps({ timeout = 30_000 } = {}) {
	const done = new Set();
	return function step(name, needs, fn) {
		test(name, { timeout }, async (t) => {
			const missing = needs.filter((n) => !done.has(n));
			if (missing.length > 0) {
				t.skip(`needs ${missing.join(", ")}`);
				return;
			}
			await fn(t);
			done.add(name.split(" ")[0]);
		});
	};
}

/** mustOk asserts that a client call succeeded and returns its data. */
export function mustOk(result, what) {
	assert.equal(result.error, null, `${what} failed: ${JSON.stringify(result.error)}`);
	return result.data;
}

/** mustFail asserts that result is an error with code and status. */
export function mustFail(result, code, status) {
	assert.equal(result.data, null, `expected ${code}, got data ${JSON.stringify(result.data)}`);
	assert.ok(result.error, `expected ${code}, got no error`);
	assert.equal(result.error.code, code, `error: ${JSON.stringify(result.error)}`);
	assert.equal(result.error.status, status, `error: ${JSON.stringify(result.error)}`);
}

/** mustSession asserts that client is signed in and returns {session, user}. */
export async function mustSession(client) {
	const data = mustOk(await client.getSession(), "getSession");
	assert.ok(data?.session && data?.user, `getSession returned no session: ${JSON.stringify(data)}`);
	return data;
}

/** mustSignedOut asserts that getSession answers null for client. */
export async function mustSignedOut(client, why) {
	const data = mustOk(await client.getSession(), "getSession");
	assert.equal(data, null, `${why}: getSession still returns ${JSON.stringify(data)}`);
}

/**
 * signUpVerified signs up on client, follows the verification mail's link and
 * signs in; it returns the signed-in user.
 */
export async function signUpVerified(client, { name, email, password }) {
	const up = mustOk(await client.signUp.email({ name, email, password }), `signUp.email ${email}`);
	assert.equal(up.user.emailVerified, false);
	const address = email.toLowerCase();
	const link = linkTo(await waitForMail(address, "verif"), "/verify-email");
	const res = await fetch(link, { redirect: "manual" });
	const body = await res.text();
	assert.ok(res.status === 200 || res.status === 302, `GET ${link.pathname}: ${res.status} ${body}`);
	if (res.status === 302) {
		const location = res.headers.get("location") ?? "";
		assert.ok(!location.includes("error="), `verification redirected to ${location}`);
	}
	const data = mustOk(await client.signIn.email({ email: address, password }), `signIn.email ${address}`);
	assert.equal(data.user.emailVerified, true);
	return data.user;
}
