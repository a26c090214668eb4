// Gatehouse's webhooks, received on loopback and verified with the
// standardwebhooks library (the Standard Webhooks reference implementation,
// which nobody here wrote): retries with the same id and fresh timestamps,
// the library's timestamp tolerance, two signatures after a rotation,
// replays, an endpoint disabled after failing, and SSRF refusals.
//
// Run by TestWebhookClients in test/webhooks_clients_test.go, which starts
// two Gatehouse instances: A allows private targets (the receiver is on
// loopback) and retries fast; B does not allow them.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";

import { Webhook, WebhookVerificationError } from "standardwebhooks";

const env = (name) => (process.env[name] ?? "").replace(/\/+$/, "");
const A = { url: env("WEBHOOK_A_URL"), key: env("WEBHOOK_A_KEY") };
const B = { url: env("WEBHOOK_B_URL"), key: env("WEBHOOK_B_KEY") };
const mailboxURL = env("MAILBOX_URL");
const adminEmail = env("WEBHOOK_ADMIN_EMAIL");
const skip = !A.url && "run through go test ./test/ -run TestWebhookClients";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** waitFor polls fn until it returns a truthy value, and returns it. */
async function waitFor(what, fn, timeoutMs = 20_000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await sleep(50);
	}
}

/** api calls Gatehouse's trusted API with the instance's service key. */
async function api(instance, method, path, body) {
	const res = await fetch(instance.url + path, {
		method,
		headers: { authorization: `Bearer ${instance.key}`, ...(body ? { "content-type": "application/json" } : {}) },
		body: body ? JSON.stringify(body) : undefined,
	});
	const text = await res.text();
	return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function mustAPI(instance, method, path, body, want) {
	const r = await api(instance, method, path, body);
	assert.equal(r.status, want, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
	return r.body;
}

/** createUser makes a user, which emits user.created, and returns its id. */
async function createUser(instance, label) {
	const email = `${label}.${crypto.randomUUID().slice(0, 8)}@hooks.example.test`;
	return (await mustAPI(instance, "POST", "/api/users", { email, name: label }, 201)).id;
}

// The receiver: every request is recorded; paths choose the answer.
const received = [];
const answers = new Map(); // path → (request, nthForThisId) → status
let receiverURL = "";
const server = createServer((req, res) => {
	const chunks = [];
	req.on("data", (c) => chunks.push(c));
	req.on("end", () => {
		const body = Buffer.concat(chunks).toString("utf8");
		const r = { path: req.url, headers: req.headers, body, at: Date.now() };
		r.data = JSON.parse(body).data;
		const n = received.filter((x) => x.path === r.path && x.headers["webhook-id"] === r.headers["webhook-id"]).length;
		received.push(r);
		const answer = answers.get(req.url) ?? (() => 204);
		const status = answer(r, n);
		res.writeHead(status, { "content-type": "text/plain" });
		res.end(status >= 400 ? `receiver says no (${status}) ` + "x".repeat(2000) : "ok");
	});
});

/** deliveries returns what path received about the user id, in order. */
const deliveries = (path, userId) => received.filter((r) => r.path === path && r.data?.id === userId);

/** headersOf returns a delivery's Standard Webhooks headers. */
const headersOf = (r) => ({
	"webhook-id": r.headers["webhook-id"],
	"webhook-timestamp": r.headers["webhook-timestamp"],
	"webhook-signature": r.headers["webhook-signature"],
});

async function register(instance, path, extra = {}) {
	return mustAPI(instance, "POST", "/api/webhooks", { url: receiverURL + path, eventTypes: ["user.created"], ...extra }, 201);
}

describe("webhooks received with the standardwebhooks library", { skip }, () => {
	before(async () => {
		await new Promise((r) => server.listen(0, "127.0.0.1", r));
		receiverURL = `http://127.0.0.1:${server.address().port}`;
	});
	after(() => server.close());

	test("retries after 500s carry the same webhook-id, each signed with a current timestamp", async () => {
		answers.set("/flaky", (_r, n) => (n < 2 ? 500 : 204));
		const hook = await register(A, "/flaky");
		assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
		const wh = new Webhook(hook.secret);
		const user = await createUser(A, "flaky");
		const got = await waitFor("three attempts at /flaky", () => {
			const d = deliveries("/flaky", user);
			return d.length >= 3 && d;
		});
		const ids = new Set(got.map((r) => r.headers["webhook-id"]));
		assert.equal(ids.size, 1, `attempts carried several ids: ${[...ids]}`);
		assert.match([...ids][0], /^msg_/);
		const stamps = got.map((r) => Number(r.headers["webhook-timestamp"]));
		for (const [i, r] of got.entries()) {
			// verify checks the signature and that the timestamp is within
			// five minutes of now: each retry is signed anew.
			const payload = wh.verify(r.body, headersOf(r));
			assert.equal(payload.type, "user.created");
			assert.equal(payload.data.id, user);
			assert.ok(Math.abs(stamps[i] * 1000 - r.at) < 2000, `attempt ${i} was signed at ${stamps[i]}, received at ${r.at}`);
			if (i > 0) assert.ok(stamps[i] > stamps[i - 1], `retry ${i} reused the timestamp ${stamps[i]}`);
		}
		// The API shows the story: succeeded after three attempts, the
		// failures with their status, latency and response snippet.
		const messages = await waitFor("the message to succeed", async () => {
			const page = await mustAPI(A, "GET", `/api/webhooks/${hook.id}/messages`, undefined, 200);
			return page.data.find((m) => m.messageId === [...ids][0] && m.status === "succeeded") && page;
		});
		const m = messages.data.find((x) => x.messageId === [...ids][0]);
		assert.equal(m.attempts, 3);
		assert.equal(m.lastAttempt.statusCode, 204);
		const attempts = await mustAPI(A, "GET", `/api/webhooks/${hook.id}/messages/${m.messageId}/attempts`, undefined, 200);
		assert.deepEqual(attempts.data.map((a) => a.statusCode), [500, 500, 204]);
		assert.equal(attempts.data[0].error, "status 500");
		assert.ok(attempts.data[0].response.startsWith("receiver says no (500)"));
		assert.ok(Buffer.byteLength(attempts.data[0].response) <= 1024, "the snippet is longer than 1 KiB");
		assert.ok(attempts.data.every((a) => Number.isInteger(a.latencyMs) && a.latencyMs >= 0));
	});

	test("the library refuses a stale timestamp, and ours are current", async () => {
		const hook = await register(A, "/tolerance");
		const wh = new Webhook(hook.secret);
		const user = await createUser(A, "tolerance");
		const [r] = await waitFor("a delivery at /tolerance", () => deliveries("/tolerance", user).length && deliveries("/tolerance", user));
		wh.verify(r.body, headersOf(r)); // current: accepted
		const stale = { ...headersOf(r), "webhook-timestamp": String(Math.floor(Date.now() / 1000) - 600) };
		assert.throws(() => wh.verify(r.body, stale), (e) => e instanceof WebhookVerificationError && /too old/i.test(e.message));
		assert.throws(() => wh.verify(r.body.replace(user, "someone-else"), headersOf(r)), WebhookVerificationError);
		assert.throws(() => new Webhook("whsec_" + Buffer.from("not the secret at all").toString("base64")).verify(r.body, headersOf(r)),
			WebhookVerificationError);
	});

	test("after a rotation each delivery carries two signatures, and both secrets verify it", async () => {
		const hook = await register(A, "/rotate");
		const before = await createUser(A, "before-rotation");
		const [first] = await waitFor("the first delivery", () => deliveries("/rotate", before).length && deliveries("/rotate", before));
		assert.equal(first.headers["webhook-signature"].split(" ").length, 1);

		const rotated = await mustAPI(A, "POST", `/api/webhooks/${hook.id}/rotate-secret`, undefined, 200);
		assert.notEqual(rotated.secret, hook.secret);
		assert.ok(rotated.previousSecretExpiresAt, "the old secret's overlap is not shown");
		const user = await createUser(A, "after-rotation");
		const [r] = await waitFor("a delivery after the rotation", () => deliveries("/rotate", user).length && deliveries("/rotate", user));
		const sigs = r.headers["webhook-signature"].split(" ");
		assert.equal(sigs.length, 2, `signatures: ${r.headers["webhook-signature"]}`);
		assert.ok(sigs.every((s) => s.startsWith("v1,")));
		assert.equal(new Webhook(hook.secret).verify(r.body, headersOf(r)).data.id, user);
		assert.equal(new Webhook(rotated.secret).verify(r.body, headersOf(r)).data.id, user);
		// Each signature is one secret's: the new one alone verifies with the new secret only.
		const onlyNew = { ...headersOf(r), "webhook-signature": sigs[0] };
		new Webhook(rotated.secret).verify(r.body, onlyNew);
		assert.throws(() => new Webhook(hook.secret).verify(r.body, onlyNew), WebhookVerificationError);
	});

	test("replay sends one message again, and every message since a time, with their ids", async () => {
		const since = new Date(Date.now() - 1000).toISOString();
		const hook = await register(A, "/replay");
		const wh = new Webhook(hook.secret);
		const u1 = await createUser(A, "replay-one");
		const u2 = await createUser(A, "replay-two");
		const [d1] = await waitFor("u1's delivery", () => deliveries("/replay", u1).length && deliveries("/replay", u1));
		const [d2] = await waitFor("u2's delivery", () => deliveries("/replay", u2).length && deliveries("/replay", u2));
		const id1 = d1.headers["webhook-id"];

		const one = await mustAPI(A, "POST", `/api/webhooks/${hook.id}/messages/${id1}/replay`, undefined, 202);
		assert.equal(one.replayed, 1);
		const again = await waitFor("the replay of u1", () => deliveries("/replay", u1).length === 2 && deliveries("/replay", u1)[1]);
		assert.equal(again.headers["webhook-id"], id1);
		assert.equal(wh.verify(again.body, headersOf(again)).data.id, u1);
		assert.equal(deliveries("/replay", u2).length, 1, "replaying one message sent another");

		const all = await mustAPI(A, "POST", `/api/webhooks/${hook.id}/replay`, { since }, 202);
		assert.ok(all.replayed >= 2, `replayed ${all.replayed}`);
		const r2 = await waitFor("the replay of u2", () => deliveries("/replay", u2).length === 2 && deliveries("/replay", u2)[1]);
		assert.equal(r2.headers["webhook-id"], d2.headers["webhook-id"]);
		wh.verify(r2.body, headersOf(r2));
		await waitFor("u1's second replay", () => deliveries("/replay", u1).length === 3);

		const r = await api(A, "POST", `/api/webhooks/${hook.id}/messages/msg_nope/replay`);
		assert.equal(r.status, 404);
		assert.equal(r.body.code, "webhook.message_not_found");
	});

	test("an endpoint failing past the threshold is disabled, and the administrators are told", async () => {
		answers.set("/down", () => 500);
		const hook = await register(A, "/down");
		const user = await createUser(A, "down");
		const disabled = await waitFor("the endpoint to be disabled", async () => {
			const e = await mustAPI(A, "GET", `/api/webhooks/${hook.id}`, undefined, 200);
			return !e.enabled && e;
		});
		assert.equal(disabled.disabledReason, "failing");
		assert.ok(disabled.failingSince && disabled.disabledAt);
		assert.ok(deliveries("/down", user).length >= 2);
		const mail = await waitFor("the administrators' mail", async () => {
			const res = await fetch(`${mailboxURL}/messages?to=${encodeURIComponent(adminEmail)}`);
			const list = await res.json();
			return list.find((m) => m.subject.includes("webhook endpoint was disabled") && m.text.includes(hook.id));
		});
		assert.ok(mail.text.includes(receiverURL + "/down"));
		// A disabled endpoint gets no new event.
		const later = await createUser(A, "after-disable");
		await createUser(A, "after-disable-2");
		await sleep(500);
		assert.equal(deliveries("/down", later).length, 0);
		// Enabled again, it receives.
		answers.set("/down", () => 204);
		const enabled = await mustAPI(A, "PATCH", `/api/webhooks/${hook.id}`, { enabled: true }, 200);
		assert.equal(enabled.enabled, true);
		assert.equal(enabled.disabledReason, null);
		const back = await createUser(A, "back-up");
		await waitFor("a delivery once enabled", () => deliveries("/down", back).length);
	});

	test("private targets are refused at registration and when connecting", async () => {
		const port = server.address().port;
		for (const url of [`http://127.0.0.1:${port}/ssrf`, `https://127.0.0.1:${port}/ssrf`, `https://[::ffff:127.0.0.1]:${port}/ssrf`,
			"https://169.254.169.254/latest/meta-data/", "https://10.0.0.1/hook", "https://[fd00::1]/hook"]) {
			const r = await api(B, "POST", "/api/webhooks", { url });
			assert.equal(r.status, 400, `${url}: ${r.status} ${JSON.stringify(r.body)}`);
			assert.equal(r.body.code, "webhook.invalid");
			assert.equal(r.body.errors[0].location, "body.url");
		}
		// A host name is accepted, and checked when connecting: localhost
		// resolves to loopback, so nothing reaches the receiver.
		const hook = await mustAPI(B, "POST", "/api/webhooks", { url: `https://localhost:${port}/ssrf`, eventTypes: ["user.created"] }, 201);
		const user = await createUser(B, "ssrf");
		const m = await waitFor("a refused attempt", async () => {
			const page = await mustAPI(B, "GET", `/api/webhooks/${hook.id}/messages`, undefined, 200);
			return page.data.find((x) => x.lastAttempt?.error);
		});
		assert.match(m.lastAttempt.error, /^refused: /);
		assert.equal(m.lastAttempt.statusCode, null);
		assert.equal(received.filter((r) => r.path === "/ssrf").length, 0, "a refused delivery reached the receiver");
		assert.ok(user);
	});
});
