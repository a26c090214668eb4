// Helpers for driving Gatehouse with the official better-auth client from
// Node: where Gatehouse and the test mailbox are, a cookie jar, a client
// bound to a jar, and reading mail.

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
 */
export function newClient(jar = new CookieJar()) {
	const client = createAuthClient({
		baseURL,
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
 * linkTo returns the link in message whose path is authURL + path (or starts
 * with it, for paths ending in "/"), looking at the mailbox's links first and
 * then at the text.
 */
export function linkTo(message, path) {
	const want = new URL(authURL + path).pathname;
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
