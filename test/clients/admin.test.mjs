// Ensure the official better-auth client's adminClient() works against
// Gatehouse unmodified: a platform administrator (the address
// TestBetterAuthClient lists in GATEHOUSE_ADMIN_EMAILS, fresh per run) finds
// users, creates one, bans and unbans it, impersonates it and stops; a plain
// user is refused.
//
// The steps share state and run in order. A step whose prerequisite failed is
// skipped with the reason, so the report shows how far it got.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ADMIN_ERROR_CODES, adminClient } from "better-auth/client/plugins";

import { mustFail, mustOk, mustSession, mustSignedOut, newClient, randomEmail, signUpVerified, steps } from "./lib/gatehouse.mjs";

// The codes compared against below.
const CODES = ["BANNED_USER", "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS"];

const adminEmail = process.env.GATEHOUSE_TEST_ADMIN_EMAIL?.toLowerCase();
if (!adminEmail) {
	throw new Error(`GATEHOUSE_TEST_ADMIN_EMAIL is not set: run this suite through "go test ./test/ -run TestBetterAuthClient"`);
}

const withAdmin = () => newClient({ plugins: [adminClient()] });

describe("adminClient", () => {
	test("the error codes compared against are the plugin's own", () => {
		for (const code of CODES) {
			assert.equal(ADMIN_ERROR_CODES[code]?.code, code, `${code} is not an admin error code`);
		}
	});

	test("checkRolePermission answers locally from the default roles", () => {
		const { client } = withAdmin();
		assert.equal(client.admin.checkRolePermission({ role: "admin", permissions: { user: ["ban"] } }), true);
		assert.equal(client.admin.checkRolePermission({ role: "user", permissions: { user: ["ban"] } }), false);
	});
});

describe("platform administration", () => {
	const step = steps();
	const password = "admin-Passw0rd!";
	const admin = { ...withAdmin(), email: adminEmail };
	const victim = { ...withAdmin(), email: randomEmail("victim").toLowerCase(), password: "victim-Passw0rd!" };
	const plain = { ...withAdmin(), email: randomEmail("plain").toLowerCase() };

	step("1 the administrator signs up with the configured address, verifies and signs in", [], async () => {
		admin.user = await signUpVerified(admin.client, { name: "Ada Admin", email: admin.email, password });
	});

	step("2 admin.listUsers finds this run's administrator, with the total", ["1"], async () => {
		const local = admin.email.split("@")[0]; // random per run
		const page = mustOk(
			await admin.client.admin.listUsers({ query: { searchValue: local, searchField: "email", limit: 10 } }),
			"admin.listUsers",
		);
		assert.ok(Array.isArray(page.users), JSON.stringify(page));
		assert.equal(page.total, 1, JSON.stringify(page));
		assert.equal(page.users.length, 1, JSON.stringify(page));
		assert.equal(page.users[0].id, admin.user.id);
		assert.equal(page.users[0].email, admin.email);
		assert.ok(page.users[0].createdAt instanceof Date, `createdAt is ${typeof page.users[0].createdAt}`);
		assert.equal(page.limit, 10, JSON.stringify(page));
	});

	step("3 admin.createUser creates a user with a password", ["1"], async () => {
		const { user } = mustOk(
			await admin.client.admin.createUser({
				email: victim.email,
				password: victim.password,
				name: "Victor Victim",
				data: { emailVerified: true },
			}),
			"admin.createUser",
		);
		assert.equal(typeof user?.id, "string");
		assert.equal(user.email, victim.email);
		assert.equal(user.name, "Victor Victim");
		victim.id = user.id;
	});

	step("4 the created user signs in on its own client", ["3"], async () => {
		const data = mustOk(await victim.client.signIn.email({ email: victim.email, password: victim.password }), "signIn.email");
		assert.equal(data.user.id, victim.id);
		await mustSession(victim.client);
	});

	step("5 admin.banUser bans the user and ends its sessions", ["4"], async () => {
		const { user } = mustOk(
			await admin.client.admin.banUser({ userId: victim.id, banReason: "client suite" }),
			"admin.banUser",
		);
		assert.equal(user.id, victim.id);
		assert.equal(user.banned, true, JSON.stringify(user));
		assert.equal(user.banReason, "client suite");
		await mustSignedOut(victim.client, "after banUser");
	});

	step("6 the banned user's sign-in is refused with BANNED_USER", ["5"], async () => {
		mustFail(await victim.client.signIn.email({ email: victim.email, password: victim.password }), "BANNED_USER", 403);
	});

	step("7 admin.unbanUser lifts the ban", ["5"], async () => {
		const { user } = mustOk(await admin.client.admin.unbanUser({ userId: victim.id }), "admin.unbanUser");
		assert.equal(user.banned, false, JSON.stringify(user));
		mustOk(await victim.client.signIn.email({ email: victim.email, password: victim.password }), "signIn.email after unbanUser");
	});

	step("8 admin.impersonateUser switches the administrator's client to the user", ["7"], async () => {
		const data = mustOk(await admin.client.admin.impersonateUser({ userId: victim.id }), "admin.impersonateUser");
		assert.equal(data.user?.id, victim.id, JSON.stringify(data));
		assert.equal(data.session?.userId, victim.id, JSON.stringify(data));
		const { session, user } = await mustSession(admin.client);
		assert.equal(user.id, victim.id);
		assert.equal(user.email, victim.email);
		assert.equal(session.impersonatedBy, admin.user.id, JSON.stringify(session));
	});

	step("9 admin.stopImpersonating switches back to the administrator", ["8"], async () => {
		const data = mustOk(await admin.client.admin.stopImpersonating(), "admin.stopImpersonating");
		assert.equal(data.user?.id, admin.user.id, JSON.stringify(data));
		const { session, user } = await mustSession(admin.client);
		assert.equal(user.id, admin.user.id);
		assert.ok(!session.impersonatedBy, `still impersonating: ${JSON.stringify(session)}`);
	});

	step("10 admin.hasPermission: the administrator may ban users", ["1"], async () => {
		const res = mustOk(await admin.client.admin.hasPermission({ permissions: { user: ["ban"] } }), "admin.hasPermission");
		assert.equal(res.success, true, JSON.stringify(res));
	});

	step("11 a plain user's admin.listUsers is refused with 403", [], async () => {
		await signUpVerified(plain.client, { name: "Pat Plain", email: plain.email, password });
		mustFail(await plain.client.admin.listUsers({ query: { limit: 10 } }), "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS", 403);
		const res = mustOk(await plain.client.admin.hasPermission({ permissions: { user: ["ban"] } }), "admin.hasPermission");
		assert.equal(res.success, false, JSON.stringify(res));
	});
});
