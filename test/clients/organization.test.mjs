// Ensure the official better-auth client's organizationClient() works against
// Gatehouse unmodified: an owner creates an organization, invites a second
// user by mail, who accepts, is promoted to admin and leaves; the only owner
// cannot leave. TestBetterAuthClient (test/clients_test.go) runs this file
// with the test mailbox; each run uses fresh addresses and a fresh slug.
//
// The steps share state and run in order. A step whose prerequisite failed is
// skipped with the reason, so the report shows how far it got.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ORGANIZATION_ERROR_CODES, organizationClient } from "better-auth/client/plugins";

import { baseURL, linkTo, mustFail, mustOk, mustSession, newClient, randomEmail, signUpVerified, steps, waitForMail } from "./lib/gatehouse.mjs";

// The codes compared against below.
const CODES = ["ORGANIZATION_SLUG_ALREADY_TAKEN", "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER"];

const withOrganizations = () => newClient({ plugins: [organizationClient()] });

describe("organizationClient", () => {
	test("the error codes compared against are the plugin's own", () => {
		for (const code of CODES) {
			assert.equal(ORGANIZATION_ERROR_CODES[code]?.code, code, `${code} is not an organization error code`);
		}
	});

	test("checkRolePermission answers locally from the default roles", () => {
		const { client } = withOrganizations();
		const check = (role, permissions) => client.organization.checkRolePermission({ role, permissions });
		assert.equal(check("owner", { organization: ["delete"] }), true);
		assert.equal(check("admin", { member: ["update"] }), true);
		assert.equal(check("admin", { organization: ["delete"] }), false);
		assert.equal(check("member", { member: ["update"] }), false);
	});
});

describe("an organization's life", () => {
	const step = steps();
	const password = "org-Passw0rd!";
	const owner = { ...withOrganizations(), email: randomEmail("owner").toLowerCase() };
	const guest = { ...withOrganizations(), email: randomEmail("guest").toLowerCase() };
	const slug = `acme-${crypto.randomUUID().slice(0, 8)}`;
	let org; // as created
	let invitation; // as returned by inviteMember
	let guestMember; // the guest's membership

	step("1 the owner signs up, verifies by mail and signs in", [], async () => {
		owner.user = await signUpVerified(owner.client, { name: "Olive Owner", email: owner.email, password });
	});

	step("2 organization.create returns the organization with its owner", ["1"], async () => {
		org = mustOk(await owner.client.organization.create({ name: "Acme Clients", slug }), "organization.create");
		assert.equal(typeof org.id, "string");
		assert.ok(org.id.length > 0);
		assert.equal(org.slug, slug);
		assert.equal(org.name, "Acme Clients");
		assert.ok(org.createdAt instanceof Date, `createdAt is ${typeof org.createdAt}: dates must have millisecond precision`);
		assert.ok(Array.isArray(org.members), `members: ${JSON.stringify(org.members)}`);
		assert.equal(org.members.length, 1, `members: ${JSON.stringify(org.members)}`);
		assert.equal(org.members[0].userId, owner.user.id);
		assert.equal(org.members[0].role, "owner");
		assert.equal(org.members[0].organizationId, org.id);
	});

	step("3 organization.checkSlug on the taken slug is ORGANIZATION_SLUG_ALREADY_TAKEN", ["2"], async () => {
		mustFail(await owner.client.organization.checkSlug({ slug }), "ORGANIZATION_SLUG_ALREADY_TAKEN", 400);
		const free = mustOk(await owner.client.organization.checkSlug({ slug: `${slug}-free` }), "organization.checkSlug (free)");
		assert.equal(free.status, true);
	});

	step("4 getSession shows the new organization as the active one", ["2"], async () => {
		const { session } = await mustSession(owner.client);
		assert.equal(session.activeOrganizationId, org.id);
	});

	step("5 organization.list shows it", ["2"], async () => {
		const list = mustOk(await owner.client.organization.list(), "organization.list");
		assert.ok(Array.isArray(list), `organization.list returned ${JSON.stringify(list)}`);
		const mine = list.find((o) => o.id === org.id);
		assert.ok(mine, `not listed: ${JSON.stringify(list)}`);
		assert.equal(mine.slug, slug);
	});

	step("6 organization.getFullOrganization returns the active one with members and users", ["4"], async () => {
		const full = mustOk(await owner.client.organization.getFullOrganization(), "organization.getFullOrganization");
		assert.ok(full, "getFullOrganization returned null with an active organization");
		assert.equal(full.id, org.id);
		assert.equal(full.slug, slug);
		assert.equal(full.members.length, 1, `members: ${JSON.stringify(full.members)}`);
		assert.equal(full.members[0].user?.email, owner.email, `members: ${JSON.stringify(full.members)}`);
		assert.ok(Array.isArray(full.invitations), `an owner must see the invitations: ${JSON.stringify(full)}`);
	});

	step("7 a second user signs up, verifies by mail and signs in", [], async () => {
		guest.user = await signUpVerified(guest.client, { name: "Gus Guest", email: guest.email, password });
	});

	step("8 the owner invites the second user as a member", ["2", "7"], async () => {
		invitation = mustOk(await owner.client.organization.inviteMember({ email: guest.email, role: "member" }), "organization.inviteMember");
		assert.equal(typeof invitation.id, "string");
		assert.equal(invitation.email, guest.email);
		assert.equal(invitation.role, "member");
		assert.equal(invitation.status, "pending");
		assert.equal(invitation.organizationId, org.id);
		assert.equal(invitation.inviterId, owner.user.id);
		assert.ok(invitation.expiresAt instanceof Date && invitation.expiresAt > new Date(), `expiresAt: ${invitation.expiresAt}`);
	});

	step("9 the invitation mail reaches the second user with the invitation's id in its link", ["8"], async () => {
		const mail = await waitForMail(guest.email, "invite");
		assert.ok(mail.to.some((to) => to.toLowerCase() === guest.email), `mail to ${JSON.stringify(mail.to)}`);
		const link = linkTo(mail, "/accept-invitation/", { base: baseURL });
		assert.equal(link.origin, new URL(baseURL).origin, "links must be built from GATEHOUSE_BASE_URL");
		const id = decodeURIComponent(link.pathname.split("/").pop());
		assert.equal(id, invitation.id, `link ${link}`);
	});

	step("10 the second user reads the invitation and accepts it", ["9"], async () => {
		const seen = mustOk(await guest.client.organization.getInvitation({ query: { id: invitation.id } }), "organization.getInvitation");
		assert.equal(seen.id, invitation.id);
		assert.equal(seen.email, guest.email);
		assert.equal(seen.organizationId, org.id);
		assert.equal(seen.organizationName, "Acme Clients");
		assert.equal(seen.organizationSlug, slug);
		assert.equal(seen.inviterEmail, owner.email);

		const res = mustOk(await guest.client.organization.acceptInvitation({ invitationId: invitation.id }), "organization.acceptInvitation");
		assert.equal(res.invitation?.id, invitation.id, JSON.stringify(res));
		assert.equal(res.invitation.status, "accepted");
		guestMember = res.member;
		assert.ok(guestMember?.id, `no member: ${JSON.stringify(res)}`);
		assert.equal(guestMember.userId, guest.user.id);
		assert.equal(guestMember.organizationId, org.id);
		assert.equal(guestMember.role, "member");

		const { session } = await mustSession(guest.client);
		assert.equal(session.activeOrganizationId, org.id, "accepting makes the organization active");
	});

	step("11 organization.listMembers shows both, with total 2", ["10"], async () => {
		const page = mustOk(await owner.client.organization.listMembers(), "organization.listMembers");
		assert.equal(page.total, 2, JSON.stringify(page));
		assert.equal(page.members.length, 2, JSON.stringify(page));
		const emails = page.members.map((m) => m.user?.email).sort();
		assert.deepEqual(emails, [owner.email, guest.email].sort());
	});

	step("12 the owner makes the member an admin", ["10"], async () => {
		const m = mustOk(
			await owner.client.organization.updateMemberRole({ memberId: guestMember.id, role: "admin" }),
			"organization.updateMemberRole",
		);
		assert.equal(m.id, guestMember.id);
		assert.equal(m.role, "admin");
	});

	step("13 organization.hasPermission: the new admin may update members, not delete the organization", ["12"], async () => {
		const may = mustOk(await guest.client.organization.hasPermission({ permissions: { member: ["update"] } }), "organization.hasPermission");
		assert.equal(may.success, true, JSON.stringify(may));
		const mayNot = mustOk(await guest.client.organization.hasPermission({ permissions: { organization: ["delete"] } }), "organization.hasPermission");
		assert.equal(mayNot.success, false, JSON.stringify(mayNot));
	});

	step("14 the second user leaves", ["10"], async () => {
		const left = mustOk(await guest.client.organization.leave({ organizationId: org.id }), "organization.leave");
		assert.equal(left?.userId, guest.user.id, JSON.stringify(left));
		const page = mustOk(await owner.client.organization.listMembers(), "organization.listMembers");
		assert.equal(page.total, 1, JSON.stringify(page));
		const list = mustOk(await guest.client.organization.list(), "organization.list");
		assert.ok(!list.some((o) => o.id === org.id), `still listed: ${JSON.stringify(list)}`);
	});

	step("15 the only owner cannot leave: YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER", ["2"], async () => {
		mustFail(
			await owner.client.organization.leave({ organizationId: org.id }),
			"YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER",
			400,
		);
	});
});
