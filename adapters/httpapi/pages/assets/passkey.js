// Sign in with a passkey on the hosted sign-in page. Served from
// /assets/passkey.js under the page's CSP (script-src 'self',
// connect-src 'self'); without JavaScript, or without WebAuthn, the button
// stays hidden. It runs the framework's ceremony (generate-authenticate-
// options, navigator.credentials.get, verify-authentication) and then goes
// where the password form would: the page's callbackURL, else the account.
"use strict";
(() => {
	const box = document.getElementById("passkey");
	const button = document.getElementById("passkey-sign-in");
	const status = document.getElementById("passkey-status");
	if (!box || !button || !status || !window.PublicKeyCredential || !navigator.credentials) {
		return;
	}
	const decode = (s) => {
		const b = atob(s.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(s.length / 4) * 4, "="));
		return Uint8Array.from(b, (c) => c.charCodeAt(0));
	};
	const encode = (buf) => {
		let s = "";
		for (const c of new Uint8Array(buf)) {
			s += String.fromCharCode(c);
		}
		return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
	};
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
					allowCredentials: (o.allowCredentials || []).map((c) => ({ type: c.type, id: decode(c.id), transports: c.transports })),
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
