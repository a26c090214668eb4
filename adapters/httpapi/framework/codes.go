package framework

import (
	"net/http"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// This file is the framework contract's one vocabulary map: each neutral
// code the inner layers raise (an "area.reason" string) becomes the
// UPPER_SNAKE code the Better Auth client compares against
// (reference/better-auth-wire.md appendix A), with the status Better Auth
// answers where it differs from the one its kind maps to. A code missing
// here answers the framework's code for its status (edge.FrameworkCodeFor).

// wireCode is one framework answer: its code, and its status when Better
// Auth's wire fixes another than the kind's.
type wireCode struct {
	Code   string
	Status int // 0: the status of the error's kind
}

// frameworkCodes maps neutral codes to Better Auth's.
var frameworkCodes = map[string]wireCode{
	// E-mail addresses (domain.NewEmail).
	"email.invalid":              {Code: "INVALID_EMAIL"},
	"email.invisible_characters": {Code: "INVALID_EMAIL"},
	"email.not_normalized":       {Code: "INVALID_EMAIL"},
	"email.mixed_script":         {Code: "INVALID_EMAIL"},

	// Users (domain.User).
	"user.invalid_name":       {Code: "INVALID_NAME"},
	"user.invalid_image":      {Code: "INVALID_IMAGE"},
	"user.invalid_ban_reason": {Code: "INVALID_BAN_REASON"},
	"user.invalid_ban_expiry": {Code: "INVALID_BAN_EXPIRY"},

	// Passwords (domain.PasswordPolicy).
	"password.invalid":    {Code: "INVALID_PASSWORD"},
	"password.too_short":  {Code: "PASSWORD_TOO_SHORT"},
	"password.too_long":   {Code: "PASSWORD_TOO_LONG"},
	"password.too_common": {Code: "PASSWORD_TOO_COMMON"},

	// Roles and permissions (domain access control).
	"role.invalid_type":             {Code: "INVALID_ROLE_TYPE"},
	"role.not_found":                {Code: "ROLE_NOT_FOUND"},
	"role.unknown_value":            {Code: "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE"},
	"organization.invalid_name":     {Code: "INVALID_NAME"},
	"organization.invalid_slug":     {Code: "INVALID_SLUG"},
	"organization.invalid_logo":     {Code: "INVALID_LOGO"},
	"organization.invalid_metadata": {Code: "INVALID_METADATA"},

	"invitation.not_open": {Code: "INVITATION_NOT_FOUND"},

	// Service keys, OAuth clients and domains (their rules in domain).
	"service_key.invalid_name":          {Code: "INVALID_NAME"},
	"service_key.invalid_scope":         {Code: "INVALID_SCOPE"},
	"service_key.invalid_expiry":        {Code: "INVALID_EXPIRY"},
	"oauth_client.invalid_name":         {Code: "INVALID_NAME"},
	"oauth_client.invalid_type":         {Code: "INVALID_CLIENT_TYPE"},
	"oauth_client.invalid_redirect_uri": {Code: "INVALID_REDIRECT_URI"},
	"domain.invalid_hostname":           {Code: "INVALID_HOSTNAME"},
	"domain.invalid_reason":             {Code: "INVALID_REASON"},

	// Paging (ports).
	"paging.invalid_limit":  {Code: "INVALID_LIMIT"},
	"paging.invalid_offset": {Code: "INVALID_OFFSET"},

	// The application layer's conditions.
	"account_deletion.invalid_token":         {Code: "INVALID_TOKEN"},
	"admin.ban_forbidden":                    {Code: "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"},
	"admin.cannot_ban_self":                  {Code: "YOU_CANNOT_BAN_YOURSELF"},
	"admin.cannot_impersonate_admin":         {Code: "YOU_CANNOT_IMPERSONATE_ADMINS"},
	"admin.cannot_remove_self":               {Code: "YOU_CANNOT_REMOVE_YOURSELF"},
	"admin.create_user_forbidden":            {Code: "YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS"},
	"admin.delete_user_forbidden":            {Code: "YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS"},
	"admin.get_user_forbidden":               {Code: "YOU_ARE_NOT_ALLOWED_TO_GET_USER"},
	"admin.impersonate_forbidden":            {Code: "YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS"},
	"admin.list_sessions_forbidden":          {Code: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS"},
	"admin.list_users_forbidden":             {Code: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS"},
	"admin.no_data_to_update":                {Code: "NO_DATA_TO_UPDATE"},
	"admin.not_impersonating":                {Code: "NOT_IMPERSONATING"},
	"admin.revoke_sessions_forbidden":        {Code: "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"},
	"admin.session_not_found":                {Code: "SESSION_NOT_FOUND"},
	"admin.set_email_forbidden":              {Code: "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL"},
	"admin.set_password_forbidden":           {Code: "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD"},
	"admin.set_role_forbidden":               {Code: "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE"},
	"admin.update_user_forbidden":            {Code: "YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS"},
	"admin.user_not_found":                   {Code: "USER_NOT_FOUND"},
	"auth.email_not_verified":                {Code: "EMAIL_NOT_VERIFIED"},
	"auth.invalid_credentials":               {Code: "INVALID_EMAIL_OR_PASSWORD"},
	"auth.session_not_fresh":                 {Code: "SESSION_NOT_FRESH"},
	"auth.too_many_attempts":                 {Code: "TOO_MANY_REQUESTS"},
	"auth.wrong_password":                    {Code: "INVALID_PASSWORD"},
	"email_change.same_address":              {Code: "EMAIL_IS_THE_SAME"},
	"invitation.already_invited":             {Code: "USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION"},
	"invitation.answer_needs_verified_email": {Code: "EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION"},
	"invitation.cancel_forbidden":            {Code: "YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION"},
	"invitation.create_forbidden":            {Code: "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION"},
	"invitation.limit_reached":               {Code: "INVITATION_LIMIT_REACHED"},
	"invitation.list_forbidden":              {Code: "YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS"},
	"invitation.list_needs_verified_email":   {Code: "EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION"},
	"invitation.not_recipient":               {Code: "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION"},
	"invitation.role_not_allowed":            {Code: "YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE"},
	"mfa.step_up_required":                   {Code: "SECOND_FACTOR_REQUIRED"},
	"admin.mfa_required":                     {Code: "ADMIN_MFA_REQUIRED"},
	"admin.impersonation_read_only":          {Code: "IMPERSONATION_READ_ONLY"},
	"organization.two_factor_required":       {Code: "TWO_FACTOR_REQUIRED_BY_ORGANIZATION"},
	"organization.enforcer_needs_two_factor": {Code: "SET_UP_A_SECOND_FACTOR_BEFORE_REQUIRING_ONE"},
	"mfa.account_locked":                     {Code: "ACCOUNT_TEMPORARILY_LOCKED", Status: http.StatusTooManyRequests},
	"mfa.invalid_backup_code":                {Code: "INVALID_BACKUP_CODE", Status: http.StatusUnauthorized},
	"mfa.invalid_challenge":                  {Code: "INVALID_TWO_FACTOR_COOKIE", Status: http.StatusUnauthorized},
	"mfa.invalid_code":                       {Code: "INVALID_CODE", Status: http.StatusUnauthorized},
	"mfa.otp_expired":                        {Code: "OTP_HAS_EXPIRED", Status: http.StatusBadRequest},
	"mfa.otp_pending":                        {Code: "TOO_MANY_REQUESTS", Status: http.StatusTooManyRequests},
	"mfa.too_many_attempts":                  {Code: "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE", Status: http.StatusBadRequest},
	"mfa.totp_already_enabled":               {Code: "TOTP_ALREADY_ENABLED", Status: http.StatusBadRequest},
	"mfa.totp_not_enabled":                   {Code: "TOTP_NOT_ENABLED", Status: http.StatusBadRequest},
	"mfa.two_factor_not_enabled":             {Code: "TWO_FACTOR_NOT_ENABLED", Status: http.StatusBadRequest},
	"member.delete_forbidden":                {Code: "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER"},
	"member.update_forbidden":                {Code: "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER"},
	"oauth_consent.not_found":                {Code: "CONSENT_NOT_FOUND"},
	"organization.already_exists":            {Code: "ORGANIZATION_ALREADY_EXISTS"},
	"organization.delete_forbidden":          {Code: "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION"},
	"organization.owner_required":            {Code: "YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER"},
	"organization.user_limit_reached":        {Code: "YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS"},
	"organization.member_limit_reached":      {Code: "ORGANIZATION_MEMBERSHIP_LIMIT_REACHED"},
	"organization.no_such_member":            {Code: "MEMBER_NOT_FOUND"},
	"organization.none_active":               {Code: "NO_ACTIVE_ORGANIZATION"},
	"organization.not_a_member":              {Code: "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION"},
	"organization.unknown":                   {Code: "ORGANIZATION_NOT_FOUND"},
	"organization.only_owner_leaving":        {Code: "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER"},
	"organization.slug_unavailable":          {Code: "ORGANIZATION_SLUG_ALREADY_TAKEN"},
	"organization.update_forbidden":          {Code: "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION"},
	"organization.user_already_member":       {Code: "USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION"},
	"password_reset.invalid_token":           {Code: "INVALID_TOKEN"},
	"user.banned":                            {Code: "BANNED_USER"},
	"user.email_exists":                      {Code: "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL", Status: http.StatusUnprocessableEntity},
	"user.no_fields_to_update":               {Code: "NO_FIELDS_TO_UPDATE"},
	"verification.already_verified":          {Code: "EMAIL_ALREADY_VERIFIED"},
	"verification.email_mismatch":            {Code: "EMAIL_MISMATCH"},
	"verification.invalid_token":             {Code: "INVALID_TOKEN"},
	"verification.token_expired":             {Code: "TOKEN_EXPIRED"},
	"verification.user_not_found":            {Code: "USER_NOT_FOUND"},
	"FAILED_TO_CREATE_USER":                  {Code: "FAILED_TO_CREATE_USER", Status: http.StatusUnprocessableEntity},

	// Step-up (usecase.StepUp) and passkeys (@better-auth/passkey's
	// PASSKEY_ERROR_CODES where it has one; account.ErrPasskey*).
	"passkey.challenge_not_found":   {Code: "CHALLENGE_NOT_FOUND", Status: http.StatusBadRequest},
	"passkey.not_allowed":           {Code: "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY", Status: http.StatusUnauthorized},
	"passkey.registration_failed":   {Code: "FAILED_TO_VERIFY_REGISTRATION", Status: http.StatusBadRequest},
	"passkey.authentication_failed": {Code: "AUTHENTICATION_FAILED", Status: http.StatusUnauthorized},
	"passkey.unknown":               {Code: "PASSKEY_NOT_FOUND", Status: http.StatusUnauthorized},
	"passkey.not_found":             {Code: "PASSKEY_NOT_FOUND", Status: http.StatusNotFound},
	"passkey.exists":                {Code: "PREVIOUSLY_REGISTERED", Status: http.StatusBadRequest},
	"passkey.counter_regressed":     {Code: "PASSKEY_COUNTER_REGRESSED", Status: http.StatusUnauthorized},
	"passkey.disabled":              {Code: "PASSKEYS_DISABLED", Status: http.StatusForbidden},

	// Social sign-in and linked accounts (application/federation; design
	// note better-auth-social-wire §1–3).
	"identity_provider.not_found":         {Code: "PROVIDER_NOT_FOUND", Status: http.StatusNotFound},
	"federation.id_token_not_supported":   {Code: "ID_TOKEN_NOT_SUPPORTED", Status: http.StatusNotFound},
	"federation.invalid_id_token":         {Code: "INVALID_TOKEN", Status: http.StatusUnauthorized},
	"federation.user_info_failed":         {Code: "FAILED_TO_GET_USER_INFO", Status: http.StatusUnauthorized},
	"federation.email_not_found":          {Code: "USER_EMAIL_NOT_FOUND", Status: http.StatusUnauthorized},
	"federation.account_not_linked":       {Code: "OAUTH_LINK_ERROR", Status: http.StatusUnauthorized},
	"federation.link_failed":              {Code: "LINKING_NOT_ALLOWED", Status: http.StatusUnauthorized},
	"federation.link_email_mismatch":      {Code: "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED", Status: http.StatusUnauthorized},
	"federation.linked_to_another_user":   {Code: "SOCIAL_ACCOUNT_ALREADY_LINKED", Status: http.StatusConflict},
	"federation.refresh_failed":           {Code: "FAILED_TO_REFRESH_ACCESS_TOKEN", Status: http.StatusBadRequest},
	"federation.discovery_failed":         {Code: "PROVIDER_UNAVAILABLE", Status: http.StatusServiceUnavailable},
	"federation.invalid_scopes":           {Code: "INVALID_SCOPES", Status: http.StatusBadRequest},
	"federation.additional_params":        {Code: "VALIDATION_ERROR", Status: http.StatusBadRequest},
	"federation.sso_required":             {Code: "SSO_REQUIRED", Status: http.StatusForbidden},
	"federation.sso_password":             {Code: "SSO_REQUIRED", Status: http.StatusBadRequest},
	"federation.email_not_verified":       {Code: "EMAIL_NOT_VERIFIED", Status: http.StatusForbidden},
	"federation.sso_not_found":            {Code: "SSO_PROVIDER_NOT_FOUND", Status: http.StatusNotFound},
	"federation.sso_selector":             {Code: "VALIDATION_ERROR", Status: http.StatusBadRequest},
	"federation.email_outside_domains":    {Code: "EMAIL_OUTSIDE_SSO_DOMAINS", Status: http.StatusForbidden},
	"linked_account.not_found":            {Code: "ACCOUNT_NOT_FOUND", Status: http.StatusBadRequest},
	"linked_account.not_named":            {Code: "ACCOUNT_NOT_FOUND", Status: http.StatusBadRequest},
	"linked_account.last":                 {Code: "FAILED_TO_UNLINK_LAST_ACCOUNT", Status: http.StatusBadRequest},
	"linked_account.credential":           {Code: "CREDENTIAL_ACCOUNT_NOT_UNLINKABLE", Status: http.StatusBadRequest},
	"linked_account.no_refresh_token":     {Code: "REFRESH_TOKEN_NOT_FOUND", Status: http.StatusBadRequest},
	"linked_account.no_access_token":      {Code: "ACCESS_TOKEN_NOT_FOUND", Status: http.StatusBadRequest},
	"linked_account.provider_unavailable": {Code: "PROVIDER_NOT_SUPPORTED", Status: http.StatusBadRequest},
	"passkey.invalid_name":                {Code: "VALIDATION_ERROR", Status: http.StatusBadRequest},
	"passkey.invalid_id":                  {Code: "VALIDATION_ERROR", Status: http.StatusBadRequest},
	"passkey.invalid_response":            {Code: "VALIDATION_ERROR", Status: http.StatusBadRequest},
	"passkey.invalid_attachment":          {Code: "VALIDATION_ERROR", Status: http.StatusBadRequest},
}

// Words is the framework contract's vocabulary: a neutral code's
// entry in frameworkCodes, else the framework's status mapping (a wire code
// the edge raised is kept, anything else answers the code for its status).
var Words = edge.WordsFunc(func(c edge.Condition) edge.Condition {
	if w, ok := frameworkCodes[c.Code]; ok {
		if w.Status != 0 {
			c.Status = w.Status
		}
		c.Code = w.Code
		return c
	}
	return edge.FrameworkStatusWord(c)
})

// AuditCode is the code the audit log publishes for a refusal recorded with
// code: Better Auth's code for the conditions the framework names (what the
// log recorded before the inner layers spoke neutral codes, so entries old
// and new read alike), and the recorded code otherwise (the admin API's own
// codes). A service key's entries are worded by auditEntryCode first.
func AuditCode(code string) string {
	if w, ok := frameworkCodes[code]; ok {
		return w.Code
	}
	return code
}
