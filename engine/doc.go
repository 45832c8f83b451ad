// Package engine owns hangar's actors and the only Hollywood engine in the process: one
// rate-limit actor per Telegram user (its window lives in the store), the update
// router that feeds them from the durable inbox, the outbox sender that talks to
// Telegram, and the metrics those actors report. Nothing outside this package spawns
// actors; other packages talk to it through the Engine type.
package engine
