package bootstrap_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// Ensure the token settings have their documented defaults: one issuer, and
// access tokens addressed to an audience framework tokens never carry.
func TestLoadConfig_token_settings(t *testing.T) {
	c, err := load(t, nil, map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer() != "https://id.example.com/api/auth" || c.Tokens.JWTIssuer != c.Issuer() || !slices.Equal(c.Tokens.JWTAudience, []string{"https://id.example.com"}) ||
		c.Tokens.AccessTokenAudience != c.Issuer() || c.Tokens.JWTLifetime != 15*time.Minute || c.Tokens.CodeLifetime != time.Minute ||
		c.Tokens.AccessTokenLifetime != 15*time.Minute || c.Tokens.IDTokenLifetime != time.Hour || c.Tokens.RefreshTokenLifetime != 720*time.Hour {
		t.Fatalf("token defaults = %+v", c)
	}
}

// Ensure bad token settings are refused naming their variable.
func TestLoadConfig_refuses_bad_token_settings(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantVar string
	}{
		{"access_audience_is_a_framework_audience", map[string]string{"GATEHOUSE_JWT_AUDIENCE": "https://api.example.com,https://app.example.com",
			"GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE": "https://app.example.com"}, "GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE"},
		{"default_audiences_clash", map[string]string{"GATEHOUSE_JWT_AUDIENCE": "http://localhost:8080/api/auth"}, "GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE"},
		{"issuer_not_a_url", map[string]string{"GATEHOUSE_JWT_ISSUER": "gatehouse"}, "GATEHOUSE_JWT_ISSUER"},
		{"code_lifetime_over_ten_minutes", map[string]string{"GATEHOUSE_OAUTH_CODE_LIFETIME": "11m"}, "GATEHOUSE_OAUTH_CODE_LIFETIME"},
		{"refresh_lifetime_not_a_duration", map[string]string{"GATEHOUSE_OAUTH_REFRESH_TOKEN_LIFETIME": "30d"}, "GATEHOUSE_OAUTH_REFRESH_TOKEN_LIFETIME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, nil, tt.env)
			var ce *bootstrap.ConfigError
			if !errors.As(err, &ce) || ce.Var != tt.wantVar {
				t.Fatalf("err = %v, want a ConfigError for %s", err, tt.wantVar)
			}
		})
	}
}
