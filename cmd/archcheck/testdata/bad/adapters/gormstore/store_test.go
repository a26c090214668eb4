package gormstore

// Tests may name wire codes.
var wantCode = "MEMBER_NOT_FOUND"
