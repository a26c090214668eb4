// The helpers both passkey scripts share: the account's security page
// (registration) and the hosted sign-in page (authentication). WebAuthn
// speaks bytes where the framework's options and answers carry base64url.
// Served by the shell from /assets/webauthn.js under script-src
// 'self' (the account's CSP, the sign-in page's); each page loads it,
// deferred, before its own script, which reads window.gatehouseWebAuthn.
"use strict";
(() => {
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
	window.gatehouseWebAuthn = Object.freeze({
		// supported says whether the browser can run a passkey ceremony.
		supported: () => Boolean(window.PublicKeyCredential && navigator.credentials),
		// decode reads base64url into bytes.
		decode,
		// encode writes bytes (an ArrayBuffer) as base64url.
		encode,
		// credentials reads a list of credential descriptors
		// (excludeCredentials, allowCredentials) with their ids as bytes.
		credentials: (list) => (list || []).map((c) => ({ type: c.type, id: decode(c.id), transports: c.transports })),
	});
})();
