// Command cluster replays the training-cluster and RDMA incidents across
// 8 OS processes (this binary, re-executed) of 2 ranks each, coordinated
// through an embedded etcd that the parent starts on a loopback port with
// its data in a temporary directory. Three cases:
//
//	(a) lock:       rank 6 blocks on aggregation_lock, held by rank 7 (same
//	                process), which waits at the barrier: the break, seen by
//	                every process, names the lock and its holder
//	(b) kill:       process 5 (ranks 10, 11) hangs and is killed with
//	                SIGKILL: the others' generation breaks within the bound,
//	                naming both ranks and "lease expired"
//	(c) collective: rank 5 calls bus.all_sum while the others call
//	                model.all_sum: collective-mismatch, at once
//
// It prints a summary and exits 0 when all three cases were caught as
// expected, 1 otherwise.
//
//	cd barrier/etcd && go run ./examples/cluster
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier/etcd/embedded"
)

// The layout of the replay.
const (
	procs      = 8
	parties    = 2 * procs
	lockHolder = 7 // takes aggregation_lock, then waits at the barrier
	lockWaiter = 6 // same process; needs the lock to arrive
	busRank    = 5 // calls the control bus's all-reduce
	victimProc = 5 // ranks 10 and 11: killed with SIGKILL
	leaseTTL   = 2 * time.Second
)

// A case is one barrier of the replay.
type demoCase struct {
	name, barrier string
	timeout       time.Duration
}

var cases = []demoCase{
	{name: "lock", barrier: "allreduce", timeout: 6 * time.Second},
	{name: "collective", barrier: "tp-allreduce", timeout: 30 * time.Second},
	{name: "kill", barrier: "step", timeout: 20 * time.Second},
}

// The environment of a child process.
const (
	envChild     = "SYNCWATCH_CLUSTER_CHILD"
	envEndpoints = "SYNCWATCH_CLUSTER_ENDPOINTS"
	envRun       = "SYNCWATCH_CLUSTER_RUN"
)

func main() {
	if p := os.Getenv(envChild); p != "" {
		proc, _ := strconv.Atoi(p)
		if err := runChild(proc, strings.Split(os.Getenv(envEndpoints), ","), os.Getenv(envRun)); err != nil {
			fmt.Fprintln(os.Stderr, "child", proc, err)
			os.Exit(2)
		}
		return
	}
	os.Exit(runParent())
}

// child is a running child process.
type child struct {
	proc   int
	cmd    *exec.Cmd
	stderr strings.Builder
	waited chan error
}

func runParent() int {
	start := time.Now()
	dir, err := os.MkdirTemp("", "syncwatch-cluster-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer srv.Close()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	fmt.Printf("syncwatch across processes: %d processes x 2 ranks, one embedded etcd at %s (data in %s)\n\n",
		procs, srv.Endpoints()[0], dir)

	self, err := os.Executable()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	var (
		mu       sync.Mutex
		results  = map[string]map[int]result{}
		ready    = 0
		hanging  = make(chan struct{})
		hangOnce sync.Once
		children []*child
		readers  sync.WaitGroup
	)
	for p := range procs {
		c := &child{proc: p, waited: make(chan error, 1)}
		c.cmd = exec.Command(self)
		c.cmd.Env = append(os.Environ(), envChild+"="+strconv.Itoa(p),
			envEndpoints+"="+strings.Join(srv.Endpoints(), ","), envRun+"="+run)
		c.cmd.Stderr = &c.stderr
		stdout, err := c.cmd.StdoutPipe()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		if err := c.cmd.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		children = append(children, c)
		readers.Go(func() {
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var ev event
				if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event != "" {
					mu.Lock()
					switch ev.Event {
					case "ready":
						ready++
					case "hanging":
						hangOnce.Do(func() { close(hanging) })
					}
					mu.Unlock()
					continue
				}
				var res result
				if json.Unmarshal(sc.Bytes(), &res) == nil && res.Case != "" {
					mu.Lock()
					if results[res.Case] == nil {
						results[res.Case] = map[int]result{}
					}
					results[res.Case][res.Rank] = res
					mu.Unlock()
				}
			}
		})
		go func() { c.waited <- c.cmd.Wait() }()
	}

	// (b) Once the victim hangs in generation 1 of the kill case, and the
	// others had time to arrive, kill its process.
	var killedAt time.Time
	select {
	case <-hanging:
		time.Sleep(500 * time.Millisecond)
		killedAt = time.Now()
		children[victimProc].cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // checked by its exit
	case <-time.After(2 * time.Minute):
		fmt.Println("the victim process never reached case (b)")
	}
	failed := false
	for _, c := range children {
		select {
		case err := <-c.waited:
			if c.proc != victimProc && err != nil {
				fmt.Printf("process %d failed: %v\n%s\n", c.proc, err, c.stderr.String())
				failed = true
			}
		case <-time.After(2 * time.Minute):
			c.cmd.Process.Kill() //nolint:errcheck // it hangs
			fmt.Printf("process %d hung; killed\n", c.proc)
			failed = true
		}
	}
	readers.Wait()

	caught := 0
	for _, check := range []func() bool{
		func() bool { return checkLock(results["lock"]) },
		func() bool { return checkKill(results["kill"], killedAt) },
		func() bool { return checkCollective(results["collective"]) },
	} {
		if check() {
			caught++
		}
	}
	left := leftover(srv, run)
	fmt.Printf("\n%d/3 cases caught in %v; %s\n", caught, time.Since(start).Round(100*time.Millisecond), left)
	if caught != 3 || failed {
		return 1
	}
	return 0
}

// leftover deletes what the run left in etcd (the killed process could
// not clean up after itself) and says what it was.
func leftover(srv *embedded.Server, run string) string {
	cli, err := srv.Client()
	if err != nil {
		return err.Error()
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := "/syncwatch/cluster/" + run + "/"
	resp, err := cli.Delete(ctx, p, clientv3.WithPrefix())
	if err != nil {
		return err.Error()
	}
	if resp.Deleted == 0 {
		return "etcd: nothing left under " + p
	}
	return fmt.Sprintf("etcd: %d keys left under %s (the killed process could not close), deleted", resp.Deleted, p)
}
