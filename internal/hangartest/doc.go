// Package hangartest assembles a real hangar in-process for tests: a Badger store in a
// temp dir, the engine with its actors, and the Fiber app listening on a loopback
// socket, with a fake Telegram Bot API and a clock the test can move.
package hangartest
