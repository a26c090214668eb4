// Gatehouse API explorer: Swagger UI over the three published contracts.
// Everything it loads is served by Gatehouse itself, so it works offline.

// GatehouseBranding replaces the logo of Swagger UI's top bar with
// Gatehouse's name; the top bar keeps the contract selector beside it.
function GatehouseBranding(system) {
  var h = system.React.createElement;
  return {
    components: {
      Logo: function () {
        return h("span", { className: "gatehouse-brand" },
          h("span", { className: "gatehouse-name" }, "Gatehouse"),
          h("span", { className: "gatehouse-what" }, "API explorer"));
      }
    }
  };
}

window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    urls: [
      { url: "/api/auth-openapi.json", name: "Auth and admin" },
      { url: "/api/auth/open-api/generate-schema", name: "Authentication framework" },
      { url: "/api/backend-openapi.json", name: "Trusted backend" }
    ],
    "urls.primaryName": "Auth and admin",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null, // the default validator badge calls an outside service
    withCredentials: true,
    // The contracts name the configured base URL as their server. The explorer
    // is served by this same Gatehouse, so "Try it out" always goes to the
    // page's own origin, which is also all its CSP allows (connect-src 'self').
    requestInterceptor: function (req) {
      var u = new URL(req.url, window.location.href);
      if (u.origin !== window.location.origin) {
        req.url = window.location.origin + u.pathname + u.search;
      }
      return req;
    },
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl, GatehouseBranding],
    layout: "StandaloneLayout"
  });
});
