// Sign in with a passkey on the hosted sign-in page. Served from
// /assets/passkey.js under the page's CSP (script-src 'self',
// connect-src 'self'); without JavaScript, or without WebAuthn, the button
// stays hidden. It runs the framework's ceremony (generate-authenticate-
// options, navigator.credentials.get, verify-authentication) and then goes
// where the password form would: the page's callbackURL, else the account.
// The shell's webauthn.js, loaded before it, holds the helpers it shares
// with the account's passkey script.
"use strict";
(() => {
	const box = document.getElementById("passkey");
	const button = document.getElementById("passkey-sign-in");
	const status = document.getElementById("passkey-status");
	const webauthn = window.gatehouseWebAuthn;
	if (!box || !button || !status || !webauthn || !webauthn.supported()) {
		return;
	}
	const { decode, encode } = webauthn;
	const fail = (message) => {
		status.textContent = message;
		button.disabled = false;
	};
	box.hidden = false;
	button.addEventListener("click", async () => {
		button.disabled = true;
		status.textContent = "";
		let credential;
		try {
			const res = await fetch("/api/auth/passkey/generate-authenticate-options", { credentials: "same-origin" });
			if (!res.ok) {
				return fail("Passkeys are not available right now.");
			}
			const o = await res.json();
			credential = await navigator.credentials.get({
				publicKey: {
					challenge: decode(o.challenge), rpId: o.rpId, timeout: o.timeout, userVerification: o.userVerification,
					allowCredentials: webauthn.credentials(o.allowCredentials),
				},
			});
		} catch {
			return fail("No passkey was used.");
		}
		const r = credential.response;
		const body = {
			response: {
				id: credential.id, rawId: encode(credential.rawId), type: credential.type,
				authenticatorAttachment: credential.authenticatorAttachment || undefined, clientExtensionResults: {},
				response: {
					authenticatorData: encode(r.authenticatorData), clientDataJSON: encode(r.clientDataJSON),
					signature: encode(r.signature), userHandle: r.userHandle ? encode(r.userHandle) : undefined,
				},
			},
		};
		const res = await fetch("/api/auth/passkey/verify-authentication", {
			method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
		});
		if (!res.ok) {
			const e = await res.json().catch(() => ({}));
			return fail(e.message || "This passkey was not accepted.");
		}
		const callback = document.querySelector('form input[name="callbackURL"]');
		location.assign(callback && callback.value ? callback.value : "/account");
	});
})();
