package oidc

// FrameworkTokensKept returns how many framework tokens k keeps for reuse.
func FrameworkTokensKept(k *SigningKeys) int { return k.frameworkTokens.len() }

// FrameworkTokenCacheSize exposes the bound on kept framework tokens.
const FrameworkTokenCacheSize = frameworkTokenCacheSize
