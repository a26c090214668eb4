// Package passwordhash implements ports.PasswordHasher: argon2id for new
// hashes (PHC strings, OWASP's m=19 MiB, t=2, p=1 row), and verification of
// imported Better Auth scrypt hashes and bcrypt hashes, which are reported for
// rehashing on the next successful sign-in.
package passwordhash
