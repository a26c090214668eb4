// Package application depends on the domain only.
package application

import "example.com/app/domain"

// Err is the domain's error.
var Err = domain.ErrNotFound
