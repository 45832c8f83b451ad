// Package sshtest is a test client for the console's SSH server: throwaway keys,
// dialing, and a PTY session whose screen a test can wait on. The tui package's tests
// and the end-to-end tests of `hangar serve` share it.
package sshtest
