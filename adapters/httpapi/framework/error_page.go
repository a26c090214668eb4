package framework

// errorPageGeneric is what the error page says for a code Gatehouse does
// not send there.
const errorPageGeneric = "The sign-in could not be completed. Go back to the application and try again."

// errorPageMessages are the error page's words for each code Gatehouse
// sends a browser there with (a federation callback without an
// errorCallbackURL): every value of callbackErrors, the provider's own
// RFC 6749 codes it passes on, upstream_error and internal_server_error.
// TestErrorPageMessages keeps it complete.
var errorPageMessages = map[string]string{ // #nosec G101 -- error codes and their messages, no credentials
	"state_not_found":                          "The sign-in took too long or was started in another browser. Try again.",
	"state_mismatch":                           "The sign-in took too long or was started in another browser. Try again.",
	"oauth_provider_not_found":                 "This way of signing in is not available.",
	"no_code":                                  "The provider's answer could not be checked. Try again.",
	"issuer_mismatch":                          "The provider's answer could not be checked. Try again.",
	"issuer_missing":                           "The provider's answer could not be checked. Try again.",
	"invalid_code":                             "The provider's answer could not be checked. Try again.",
	"unable_to_get_user_info":                  "The provider's answer could not be checked. Try again.",
	"email_not_found":                          "The provider did not share an e-mail address.",
	"account_not_linked":                       "An account with this e-mail address exists already. Sign in with it, then link this provider from your account.",
	"unable_to_link_account":                   "The provider's account could not be linked to yours. Try again.",
	"email_does_not_match":                     "The provider's account has another e-mail address than yours.",
	"account_already_linked_to_different_user": "The provider's account is linked to another account already.",
	"banned":                                   "This account is suspended.",
	"email_not_verified":                       "Confirm your e-mail address first: open the link we mailed you.",
	"unable_to_create_user":                    "An account could not be made from the provider's details.",
	"sso_required":                             "Addresses of this domain sign in through their organization's identity provider.",
	"email_outside_sso_domains":                "This identity provider signs in addresses of its organization's domains only.",
	"internal_server_error":                    "Something went wrong on our side. Try again later.",
	"upstream_error":                           "The provider refused the sign-in.",
	"access_denied":                            "The sign-in was cancelled at the provider.",
	"server_error":                             "The provider could not sign you in just now. Try again later.",
	"temporarily_unavailable":                  "The provider could not sign you in just now. Try again later.",
	"invalid_request":                          "The provider refused the sign-in.",
	"unauthorized_client":                      "The provider refused the sign-in.",
	"unsupported_response_type":                "The provider refused the sign-in.",
	"invalid_scope":                            "The provider refused the sign-in.",
	"interaction_required":                     "The provider needs you to sign in there first. Try again.",
	"login_required":                           "The provider needs you to sign in there first. Try again.",
	"account_selection_required":               "The provider needs you to choose an account there first. Try again.",
	"consent_required":                         "The provider needs your consent first. Try again.",
	"invalid_request_uri":                      "The provider refused the sign-in.",
	"invalid_request_object":                   "The provider refused the sign-in.",
	"request_not_supported":                    "The provider refused the sign-in.",
	"request_uri_not_supported":                "The provider refused the sign-in.",
	"registration_not_supported":               "The provider refused the sign-in.",
}
