// Register a passkey on the account's security page. Served from
// /account/assets/passkey.js under the console's CSP (script-src 'self', no
// connect-src): it makes no request of its own. The page's form carries the
// registration's options (data-options, from the server); pressing its
// button runs navigator.credentials.create and posts the browser's answer
// in the same form, with its single-use token. Without WebAuthn the page
// says so and the form stays disabled. The shell's webauthn.js, loaded
// before it, holds the helpers it shares with the sign-in page's script.
"use strict";
(() => {
	const form = document.getElementById("passkey-register");
	if (!form) {
		return;
	}
	const status = document.getElementById("passkey-status");
	const button = document.getElementById("passkey-create");
	const field = form.querySelector('input[name="response"]');
	const webauthn = window.gatehouseWebAuthn;
	if (!webauthn || !webauthn.supported() || !status || !button || !field) {
		if (status) {
			status.textContent = "This browser cannot create passkeys.";
		}
		return;
	}
	const { decode, encode } = webauthn;
	let o;
	try {
		o = JSON.parse(form.dataset.options);
	} catch {
		status.textContent = "The passkey could not be prepared: reload the page.";
		return;
	}
	button.disabled = false;
	let sent = false;
	form.addEventListener("submit", async (e) => {
		if (sent) {
			return;
		}
		e.preventDefault();
		button.disabled = true;
		status.textContent = "Follow your browser's prompt to create the passkey.";
		let credential;
		try {
			credential = await navigator.credentials.create({
				publicKey: {
					challenge: decode(o.challenge), rp: o.rp, timeout: o.timeout, attestation: o.attestation,
					user: { id: decode(o.user.id), name: o.user.name, displayName: o.user.displayName },
					pubKeyCredParams: o.pubKeyCredParams, authenticatorSelection: o.authenticatorSelection,
					excludeCredentials: webauthn.credentials(o.excludeCredentials),
				},
			});
		} catch {
			status.textContent = "No passkey was created. Press the button to try again.";
			button.disabled = false;
			return;
		}
		const r = credential.response;
		field.value = JSON.stringify({
			id: credential.id, rawId: encode(credential.rawId), type: credential.type,
			authenticatorAttachment: credential.authenticatorAttachment || undefined, clientExtensionResults: {},
			response: {
				clientDataJSON: encode(r.clientDataJSON), attestationObject: encode(r.attestationObject),
				transports: r.getTransports ? r.getTransports() : [],
			},
		});
		status.textContent = "Saving the passkey…";
		sent = true;
		form.submit();
	});
})();
