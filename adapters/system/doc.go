// Package system implements the Clock, IDGenerator and TokenGenerator ports on
// the real clock and the operating system's random source.
package system
