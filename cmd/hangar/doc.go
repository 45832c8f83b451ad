// Command hangar is the hangar daemon and its operator tools.
//
//	hangar serve     run the daemon (webhook, queue, blog API, SSH console)
//	hangar help      show this text
package main
