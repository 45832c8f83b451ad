// Command floor serves POST /orders with the least work issue 3 allows, so that
// `make bench` can tell what this machine gives before any of hangar's code runs.
//
// It is a module of its own, outside hangar's: it puts Fiber, Hollywood and Badger
// side by side in one package on purpose, which hangar's package boundaries (only
// http/ touches Fiber, only engine/ spawns actors, only store/ touches Badger) forbid
// in hangar itself. Nothing in hangar imports it; internal/bench builds and drives it.
//
// Per order it does, and no more:
//
//   - a constant-time bearer check and the order's JSON decoded into a struct;
//   - one record appended to a group-committed log (one write and one fdatasync for
//     every record waiting), durable before the 201;
//   - the order's life: "provisioning" with no work, and its outcome appended to the
//     same log, durable before the order counts as done.
//
// No status index, no start record, no funds, no notifications, no metrics, no event
// feed. The flags add the parts hangar's design prescribes, one by one:
//
//	-fiber    the Fiber app (one route) instead of a bare fasthttp handler
//	-actors   a Hollywood dispatcher actor and one actor per order, instead of a goroutine
//	-badger   every record also written to Badger behind the log, in batches
//
// Any implementation of the issue with the same parts does at least this much per
// order, so what the floor reaches bounds hangar's figures from above.
package main
