package edge

// This file is the problem contracts' one vocabulary map (the service,
// admin and trusted routes, RFC 9457): each neutral code the inner layers
// raise becomes the problem code those routes publish. Most neutral codes
// are published as they are; the entries below keep the codes the admin
// and trusted routes answered before the inner layers became neutral.
var problemCodes = map[string]string{
	// Domain rules the admin and trusted routes publish in the request area.
	"email.invalid":                     "request.invalid_email",
	"user.invalid_name":                 "request.invalid_name",
	"user.invalid_ban_reason":           "request.invalid_ban_reason",
	"user.invalid_ban_expiry":           "request.invalid_ban_expiry",
	"password.invalid":                  "request.invalid_password",
	"password.too_short":                "request.password_too_short",
	"password.too_long":                 "request.password_too_long",
	"password.too_common":               "request.password_too_common",
	"role.invalid_type":                 "request.invalid_role_type",
	"role.not_found":                    "request.role_not_found",
	"role.unknown_value":                "request.you_are_not_allowed_to_set_non_existent_value",
	"organization.invalid_name":         "request.invalid_name",
	"organization.invalid_slug":         "request.invalid_slug",
	"organization.invalid_logo":         "request.invalid_logo",
	"organization.invalid_metadata":     "request.invalid_metadata",
	"invitation.not_open":               "request.invitation_not_found",
	"service_key.invalid_name":          "request.invalid_name",
	"service_key.invalid_scope":         "request.invalid_scope",
	"service_key.invalid_expiry":        "request.invalid_expiry",
	"oauth_client.invalid_name":         "request.invalid_name",
	"oauth_client.invalid_type":         "request.invalid_client_type",
	"oauth_client.invalid_redirect_uri": "request.invalid_redirect_uri",
	"domain.invalid_hostname":           "request.invalid_hostname",
	"domain.invalid_reason":             "request.invalid_reason",
	// The application layer's conditions the admin routes answer.
	"account_deletion.invalid_token":         "request.invalid_token",
	"admin.ban_forbidden":                    "request.you_are_not_allowed_to_ban_users",
	"admin.cannot_ban_self":                  "request.you_cannot_ban_yourself",
	"admin.cannot_impersonate_admin":         "request.you_cannot_impersonate_admins",
	"admin.cannot_remove_self":               "request.you_cannot_remove_yourself",
	"admin.create_user_forbidden":            "request.you_are_not_allowed_to_create_users",
	"admin.delete_user_forbidden":            "request.you_are_not_allowed_to_delete_users",
	"admin.get_user_forbidden":               "request.you_are_not_allowed_to_get_user",
	"admin.impersonate_forbidden":            "request.you_are_not_allowed_to_impersonate_users",
	"admin.list_sessions_forbidden":          "request.you_are_not_allowed_to_list_users_sessions",
	"admin.list_users_forbidden":             "request.you_are_not_allowed_to_list_users",
	"admin.no_data_to_update":                "request.no_data_to_update",
	"admin.not_impersonating":                "request.not_impersonating",
	"admin.revoke_sessions_forbidden":        "request.you_are_not_allowed_to_revoke_users_sessions",
	"admin.session_not_found":                "request.session_not_found",
	"admin.set_email_forbidden":              "request.you_are_not_allowed_to_set_users_email",
	"admin.set_password_forbidden":           "request.you_are_not_allowed_to_set_users_password",
	"admin.set_role_forbidden":               "request.you_are_not_allowed_to_change_users_role",
	"admin.update_user_forbidden":            "request.you_are_not_allowed_to_update_users",
	"admin.user_not_found":                   "request.user_not_found",
	"auth.email_not_verified":                "request.email_not_verified",
	"auth.invalid_credentials":               "request.invalid_email_or_password",
	"auth.session_not_fresh":                 "request.session_not_fresh",
	"auth.too_many_attempts":                 "request.too_many_requests",
	"auth.wrong_password":                    "request.invalid_password",
	"email_change.same_address":              "request.email_is_the_same",
	"invitation.already_invited":             "request.user_is_already_invited_to_this_organization",
	"invitation.answer_needs_verified_email": "request.email_verification_required_before_accepting_or_rejecting_invitation",
	"invitation.cancel_forbidden":            "request.you_are_not_allowed_to_cancel_this_invitation",
	"invitation.create_forbidden":            "request.you_are_not_allowed_to_invite_users_to_this_organization",
	"invitation.limit_reached":               "request.invitation_limit_reached",
	"invitation.list_forbidden":              "request.you_are_not_allowed_to_list_invitations",
	"invitation.list_needs_verified_email":   "request.email_verification_required_for_invitation",
	"invitation.not_recipient":               "request.you_are_not_the_recipient_of_the_invitation",
	"invitation.role_not_allowed":            "request.you_are_not_allowed_to_invite_user_with_this_role",
	"member.delete_forbidden":                "request.you_are_not_allowed_to_delete_this_member",
	"member.update_forbidden":                "request.you_are_not_allowed_to_update_this_member",
	"oauth_consent.not_found":                "request.consent_not_found",
	"organization.already_exists":            "request.organization_already_exists",
	"organization.delete_forbidden":          "request.you_are_not_allowed_to_delete_this_organization",
	"organization.owner_required":            "request.you_cannot_leave_the_organization_without_an_owner",
	"organization.user_limit_reached":        "request.you_have_reached_the_maximum_number_of_organizations",
	"organization.member_limit_reached":      "request.organization_membership_limit_reached",
	"organization.no_such_member":            "request.member_not_found",
	"organization.none_active":               "request.no_active_organization",
	"organization.not_a_member":              "request.user_is_not_a_member_of_the_organization",
	"organization.only_owner_leaving":        "request.you_cannot_leave_the_organization_as_the_only_owner",
	"organization.slug_unavailable":          "request.organization_slug_already_taken",
	"organization.update_forbidden":          "request.you_are_not_allowed_to_update_this_organization",
	"organization.user_already_member":       "request.user_is_already_a_member_of_this_organization",
	"password_reset.invalid_token":           "request.invalid_token",
	"user.banned":                            "request.banned_user",
	"user.email_exists":                      "request.user_already_exists_use_another_email",
	"user.no_fields_to_update":               "request.no_fields_to_update",
	"verification.already_verified":          "request.email_already_verified",
	"verification.email_mismatch":            "request.email_mismatch",
	"verification.invalid_token":             "request.invalid_token",
	"verification.token_expired":             "request.token_expired",
	"verification.user_not_found":            "request.user_not_found",
	"organization.unknown":                   "request.organization_not_found",
	"paging.invalid_limit":                   "request.invalid_limit",
	"paging.invalid_cursor":                  "request.invalid_cursor",
	"paging.invalid_offset":                  "request.invalid_offset",
}

// ProblemWords is the problem contracts' vocabulary: a neutral code's entry
// in problemCodes, else the code itself, else (for codes the edge decides)
// the problem code for the status (ProblemStatusWord).
var ProblemWords = WordsFunc(func(c Condition) Condition {
	if p, ok := problemCodes[c.Code]; ok {
		c.Code = p
		return c
	}
	return ProblemStatusWord(c)
})
