// Package system implements the Clock and IDGenerator ports on the real clock
// and the operating system's random source.
package system
