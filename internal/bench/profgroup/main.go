// Command profgroup reads CPU profiles written by `make bench BENCHARGS=-cpuprofile=x.prof`
// and says where the server's CPU went by kind: allocation and GC, goroutine hand-offs
// and scheduling, system calls, JSON, maps, Badger, Fiber, Hollywood, hangar's own code.
// The load generator runs in the same process; its goroutines carry the label
// bench=load and are left out (-generator shows them instead).
//
//	go run ./internal/bench/profgroup /tmp/cpu.orders-accept-*.prof
//
// It reads `go tool pprof -traces` (several files are merged), classifies each
// sample's leaf frame for the flat view and every frame for the cumulative one, and
// prints the top functions both ways.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kind is a group of functions, matched on the function name.
type kind struct {
	name string
	re   *regexp.Regexp
}

func k(name, re string) kind { return kind{name, regexp.MustCompile(re)} }

// flatKinds classify a sample by its leaf frame; the first match wins.
var flatKinds = []kind{
	k("syscalls (socket I/O, fdatasync, ...)", `^(syscall\.|internal/runtime/syscall|golang\.org/x/sys/unix\.|runtime/internal/syscall\.)`),
	k("scheduling, hand-offs, wake-ups", `^runtime\.(schedule|findRunnable|park_m|gopark|goready|ready|runqget|runqput|runqsteal|runqgrab|stealWork|execute|futex|futexsleep|futexwakeup|notesleep|notewakeup|notetsleepg|wakep|startm|stopm|mPark|netpoll|epollwait|chansend|chanrecv|chanrecv1|chansend1|closechan|selectgo|send|recv|lock2|unlock2|lock|unlock|lockWithRank|unlockWithRank|casgstatus|mcall|goschedImpl|gosched_m|goexit0|newproc|newproc1|gfget|gfput|resetspinning|checkTimers|usleep|osyield|procyield|sellock|selunlock|acquirep|releasep|handoffp|sysmon|retake|dropg|gogo|runqempty|injectglist|netpollready|netpollunblock|(\(\*timers\)|\(\*timer\))\..*|runOneTimer|modtimer|resettimer|deltimer|addtimer|pidleget|pidleput|globrunqget.*|exitsyscall.*|entersyscall.*|reentersyscall|save|goready\.func1|ready\.func1|acquireSudog|releaseSudog|chanparkcommit|procyieldAsm|releasem|acquirem|\(\*waitq\)\..*|gopark.*|park.*)$`),
	k("locks and atomics (sync, semaphores)", `^(sync\.|sync/atomic\.|internal/runtime/atomic\.|internal/sync\.|runtime\.(semacquire.*|semrelease.*|sync_runtime_.*|readyWithTime|(\(\*semaRoot\))\..*|cansemacquire))`),
	k("allocation and GC", `^runtime\.(mallocgc.*|newobject|makeslice.*|growslice|makemap.*|newarray|rawstring.*|rawbyteslice|rawruneslice|slicebytetostring|concatstring.*|stringtoslicebyte|gcBgMarkWorker.*|gcDrain.*|scanobject|scanblock|scanstack|scanframeworker|greyobject|markBits.*|findObject|heapBits.*|heapSetType.*|(\(\*mspan\)|\(\*mheap\)|\(\*mcache\)|\(\*mcentral\)|\(\*gcWork\)|\(\*sweepLocked\)|\(\*gcControllerState\)|\(\*pageAlloc\)|\(\*gcBits\)|\(\*limiterEvent\)|\(\*gcCPULimiterState\)|\(\*unwinder\)|\(\*activeSweep\)|\(\*mSpanStateBox\)|\(\*spanSet\)|\(\*fixalloc\)|\(\*pallocBits\)|\(\*stackScanState\))\..*|sweepone|bgsweep|bgscavenge|memclrNoHeapPointers.*|wbBufFlush.*|gcWriteBarrier.*|bulkBarrier.*|typePointers.*|gcmarknewobject|nextFreeFast|markroot.*|deductAssistCredit|gcAssist.*|gcFlushBgCredit|publicationBarrier|spanOf.*|pcvalue|funcInfo\..*|findfunc|step|readvarint|pcdatavalue.*|stackalloc|stackfree|stackcache.*|morestack|newstack|copystack|adjust.*|memclr.*|tracebackPCs|gentraceback|typedmemmove|typedslicecopy|wbMove|wbZero|(gc|sweep|scav|mark).*|spanClass\..*|tryDeferToSpanScan|scanObject.*|scanSpan.*|(\(\*stackObjectRecord\)|\(\*stkframe\)|\(\*mSpanList\)|\(\*atomicHeadTailIndex\)|\(\*spanInlineMarkBits\)|\(\*mspan\))\..*|bool2int|extractHeapBits.*|getMCache|heapArenaOf|makeSpanClass|roundupsize|nextFree.*|(\(\*mcache\)|\(\*mheap\))\..*)$|^internal/runtime/gc/`),
	k("maps and hashing", `^(runtime\.(map.*|memhash.*|strhash.*|aeshash.*|nilinterhash|interhash|typehash|efaceeq|ifaceeq)|internal/runtime/maps\.|maps\.|aeshashbody)`),
	k("clock (time.Now)", `^(time\.|runtime\.(nanotime|nanotime1|walltime))`),
	k("JSON", `^(encoding/json|github\.com/goccy/go-json|github\.com/bytedance/sonic|github\.com/json-iterator|unicode/utf8)`),
	k("Badger", `^github\.com/dgraph-io/(badger|ristretto)`),
	k("Fiber, fasthttp", `^github\.com/(gofiber|valyala)/`),
	k("Hollywood", `^github\.com/anthdm/hollywood`),
	k("Prometheus", `^github\.com/prometheus`),
	k("hangar's own code", `^github\.com/hangarhq/hangar/`),
	k("other runtime (memmove, compare, ...)", `^(runtime\.|memeqbody|cmpbody|indexbytebody|internal/bytealg\.|bytes\.|internal/abi\.|reflect\.)`),
	k("other", `.`),
}

// cumKinds count a sample once when any of its frames matches.
var cumKinds = []kind{
	k("allocation: runtime.mallocgc (incl. GC assists)", `^runtime\.mallocgc$`),
	k("GC workers: runtime.gcBgMarkWorker", `^runtime\.gcBgMarkWorker$`),
	k("scheduler: runtime.mcall / schedule (park, find work)", `^runtime\.(mcall|schedule|park_m)$`),
	k("wake-ups: goready / ready / wakep", `^runtime\.(goready|ready|wakep)$`),
	k("channel operations", `^runtime\.(chansend|chanrecv|selectgo|closechan)$`),
	k("locks: sync.Mutex slow paths, semaphores", `^(sync\.\(\*Mutex\)\.(lockSlow|unlockSlow)|sync\.\(\*RWMutex\)\.(RLock|Lock)|runtime\.semacquire1|runtime\.semrelease1)$`),
	k("syscalls: all", `^(syscall\.(Syscall|Syscall6|RawSyscall|RawSyscall6)|internal/runtime/syscall(/linux)?\.Syscall6)$`),
	k("syscalls: fdatasync", `(?i)^golang\.org/x/sys/unix\.(Fdatasync|Fsync)$|^os\.\(\*File\)\.Sync$`),
	k("syscalls: socket reads and writes", `^internal/poll\.\(\*FD\)\.(Read|Write)$`),
	k("syscalls: epoll (netpoll)", `^runtime\.netpoll$`),
	k("JSON", `^(encoding/json|github\.com/goccy/go-json|github\.com/bytedance/sonic)`),
	k("maps", `^(runtime\.map|internal/runtime/maps\.)`),
	k("Badger", `^github\.com/dgraph-io/badger`),
	k("Fiber, fasthttp", `^github\.com/(gofiber|valyala)/`),
	k("Hollywood", `^github\.com/anthdm/hollywood`),
	k("Prometheus", `^github\.com/prometheus`),
	k("hangar http/", `^github\.com/hangarhq/hangar/http`),
	k("hangar engine/", `^github\.com/hangarhq/hangar/engine`),
	k("hangar store/", `^github\.com/hangarhq/hangar/store`),
	k("log/slog", `^log/slog`),
}

type sample struct {
	value  time.Duration
	frames []string // leaf first
	load   bool     // the generator's (label bench=load)
}

func main() {
	gen := flag.Bool("generator", false, "report the load generator's samples instead of the server's")
	top := flag.Int("top", 15, "functions to list, flat and cumulative")
	others := flag.Bool("others", false, "also list the leaf functions the flat view put under other")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: profgroup [-generator] [-top N] file.prof...")
		os.Exit(2)
	}
	samples, err := readTraces(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "profgroup:", err)
		os.Exit(1)
	}
	var all, mine time.Duration
	var sel []sample
	for _, s := range samples {
		all += s.value
		if s.load == *gen {
			sel = append(sel, s)
			mine += s.value
		}
	}
	who := "server"
	if *gen {
		who = "load generator"
	}
	fmt.Printf("%s: %s of %s CPU samples (%.0f%%) in %s\n", who, mine, all, pct(mine, all), strings.Join(flag.Args(), " "))
	if mine == 0 {
		return
	}
	flat := map[string]time.Duration{}
	cum := map[string]time.Duration{}
	fnFlat := map[string]time.Duration{}
	fnCum := map[string]time.Duration{}
	for _, s := range sel {
		if len(s.frames) == 0 {
			continue
		}
		leaf := s.frames[0]
		fnFlat[leaf] += s.value
		for _, kd := range flatKinds {
			if kd.re.MatchString(leaf) {
				flat[kd.name] += s.value
				break
			}
		}
		seen := map[string]bool{}
		for _, f := range s.frames {
			if !seen[f] {
				seen[f] = true
				fnCum[f] += s.value
			}
		}
		for _, kd := range cumKinds {
			if slices.ContainsFunc(s.frames, kd.re.MatchString) {
				cum[kd.name] += s.value
			}
		}
	}
	if *others {
		m := map[string]time.Duration{}
		for _, s := range sel {
			if len(s.frames) > 0 && kindOf(s.frames[0]) >= len(flatKinds)-2 {
				m[s.frames[0]] += s.value
			}
		}
		fmt.Println("\nunclassified leaves:")
		printTop(m, mine, 40)
	}
	fmt.Println("\nflat, by the kind of the function on top of the stack:")
	printShares(flat, mine, kindNames(flatKinds))
	fmt.Println("\ncumulative, samples with such a function anywhere on the stack (they overlap):")
	printShares(cum, mine, kindNames(cumKinds))
	fmt.Printf("\ntop %d functions, flat:\n", *top)
	printTop(fnFlat, mine, *top)
	fmt.Printf("\ntop %d functions of hangar, Badger, Fiber, Hollywood and encoding/json, cumulative:\n", *top)
	lib := regexp.MustCompile(`^(github\.com/(hangarhq|dgraph-io|gofiber|valyala|anthdm)|encoding/json)`)
	for f := range fnCum {
		if !lib.MatchString(f) {
			delete(fnCum, f)
		}
	}
	printTop(fnCum, mine, *top)
}

func kindOf(f string) int {
	for i, kd := range flatKinds {
		if kd.re.MatchString(f) {
			return i
		}
	}
	return len(flatKinds)
}

func kindNames(ks []kind) []string {
	out := make([]string, len(ks))
	for i, kd := range ks {
		out[i] = kd.name
	}
	return out
}

func printShares(m map[string]time.Duration, total time.Duration, order []string) {
	for _, n := range order {
		if m[n] > 0 {
			fmt.Printf("  %5.1f%%  %s\n", pct(m[n], total), n)
		}
	}
}

func printTop(m map[string]time.Duration, total time.Duration, n int) {
	type kv struct {
		f string
		v time.Duration
	}
	var s []kv
	for f, v := range m {
		s = append(s, kv{f, v})
	}
	slices.SortFunc(s, func(a, b kv) int {
		if a.v != b.v {
			return int(b.v - a.v)
		}
		return strings.Compare(a.f, b.f)
	})
	for i, e := range s {
		if i == n {
			break
		}
		fmt.Printf("  %5.1f%%  %s\n", pct(e.v, total), e.f)
	}
}

func pct(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// readTraces runs `go tool pprof -traces` on files and parses its blocks:
//
//	-----------+-------------------------------------------------------
//	     bench:  load
//	     230ms   runtime.nanotime (inline)
//	             time.Since
func readTraces(files []string) ([]sample, error) {
	cmd := exec.Command("go", append([]string{"tool", "pprof", "-traces"}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof -traces: %v: %s", err, stderr.String())
	}
	var samples []sample
	var cur *sample
	var label bool
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			if cur != nil {
				samples = append(samples, *cur)
			}
			cur, label = nil, false
			continue
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if cur == nil {
			f := strings.Fields(trimmed)
			if strings.HasSuffix(f[0], ":") { // a label line
				if f[0] == "bench:" && len(f) > 1 && f[1] == "load" {
					label = true
				}
				continue
			}
			if d, err := parseValue(f[0]); err == nil && len(f) > 1 {
				cur = &sample{value: d, load: label, frames: []string{f[1]}}
			}
			continue
		}
		cur.frames = append(cur.frames, strings.Fields(trimmed)[0])
	}
	if cur != nil {
		samples = append(samples, *cur)
	}
	return samples, sc.Err()
}

// parseValue reads pprof's "230ms", "1.20s", "10us" and the like.
func parseValue(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(v), nil
	}
	return 0, fmt.Errorf("not a value: %q", s)
}
