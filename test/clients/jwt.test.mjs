// Ensure the official better-auth client's jwtClient() works against
// Gatehouse unmodified: authClient.token() returns a JWT for the signed-in
// user, authClient.jwks() the key set, and the token verifies against that
// key set with the jose library (as a consumer API would, offline) with the
// issuer, audience, algorithm and type Gatehouse documents. get-session sends
// the same kind of token in its set-auth-jwt header, readable by the client.
//
// The steps share state and run in order. A step whose prerequisite failed is
// skipped with the reason, so the report shows how far it got.

import assert from "node:assert/strict";
import { describe } from "node:test";

import { jwtClient } from "better-auth/client/plugins";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";

import { authURL, baseURL, mustFail, mustOk, newClient, randomEmail, signUpVerified, steps } from "./lib/gatehouse.mjs";

describe("jwtClient", () => {
	const step = steps();
	const withJWT = () => newClient({ plugins: [jwtClient()] });
	const ada = { ...withJWT(), email: randomEmail("jwt").toLowerCase(), password: "jwt-Passw0rd!" };
	const state = {};

	step("1 token() without a session is 401 UNAUTHORIZED", [], async () => {
		const { client } = withJWT();
		mustFail(await client.token(), "UNAUTHORIZED", 401);
	});

	step("2 jwks() returns an EdDSA and an RS256 key, public members only", [], async () => {
		const { client } = withJWT();
		const set = mustOk(await client.jwks(), "jwks");
		assert.ok(Array.isArray(set.keys), JSON.stringify(set));
		const kids = new Set(set.keys.map((k) => k.kid));
		assert.equal(kids.size, set.keys.length, "kids are unique");
		for (const k of set.keys) {
			assert.equal(k.use, "sig");
			for (const member of ["d", "p", "q", "dp", "dq", "qi", "k"]) {
				assert.equal(k[member], undefined, `key ${k.kid} publishes ${member}`);
			}
		}
		const ed = set.keys.find((k) => k.alg === "EdDSA");
		assert.ok(ed && ed.kty === "OKP" && ed.crv === "Ed25519" && ed.x, JSON.stringify(set));
		const rsa = set.keys.find((k) => k.alg === "RS256");
		assert.ok(rsa && rsa.kty === "RSA" && rsa.n && rsa.e, JSON.stringify(set));
		state.jwks = set;
	});

	step("3 a verified user signs in", [], async () => {
		ada.user = await signUpVerified(ada.client, { name: "Ada JWT", email: ada.email, password: ada.password });
	});

	step("4 token() returns a JWT that verifies against jwks() with jose", ["2", "3"], async () => {
		const { token } = mustOk(await ada.client.token(), "token");
		const header = decodeProtectedHeader(token);
		assert.equal(header.alg, "EdDSA");
		assert.equal(header.typ, "JWT");
		assert.ok(state.jwks.keys.some((k) => k.kid === header.kid), `kid ${header.kid} is in the key set`);
		const { payload } = await jwtVerify(token, createLocalJWKSet(state.jwks), {
			issuer: authURL,
			audience: baseURL,
			algorithms: ["EdDSA"],
			typ: "JWT",
		});
		assert.equal(payload.sub, ada.user.id);
		assert.equal(payload.id, ada.user.id);
		assert.equal(payload.email, ada.email);
		assert.equal(payload.emailVerified, true);
		assert.equal(payload.name, "Ada JWT");
		assert.equal(payload.exp - payload.iat, 15 * 60);
	});

	step("5 getSession exposes set-auth-jwt, a token of the same user", ["2", "3"], async () => {
		let header = null;
		mustOk(
			await ada.client.getSession({
				fetchOptions: {
					onSuccess(ctx) {
						header = ctx.response.headers.get("set-auth-jwt");
					},
				},
			}),
			"getSession",
		);
		assert.ok(header, "set-auth-jwt is missing");
		const { payload } = await jwtVerify(header, createLocalJWKSet(state.jwks), { issuer: authURL, audience: baseURL, algorithms: ["EdDSA"] });
		assert.equal(payload.sub, ada.user.id);
	});

	step("6 a token with a changed payload does not verify", ["4"], async () => {
		const { token } = mustOk(await ada.client.token(), "token");
		const [h, p, s] = token.split(".");
		const claims = JSON.parse(Buffer.from(p, "base64url").toString());
		claims.sub = "someone-else";
		const forged = [h, Buffer.from(JSON.stringify(claims)).toString("base64url"), s].join(".");
		await assert.rejects(jwtVerify(forged, createLocalJWKSet(state.jwks), { algorithms: ["EdDSA"] }));
	});
});
