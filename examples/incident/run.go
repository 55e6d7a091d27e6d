package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/paramserver"
)

// Config is what run needs; the flags of main fill it.
type Config struct {
	// Fixed runs the corrected design instead of the incident's.
	Fixed bool
	// OutDir receives the spans, the lock graph and the wait profile; ""
	// makes a new temporary directory.
	OutDir string
	// BarrierTimeout bounds every barrier generation (default 1.5s).
	BarrierTimeout time.Duration
	// Deadline bounds the whole run (default 30s).
	Deadline time.Duration
	// Verbose prints every violation in full, with its stacks.
	Verbose bool
	// Out receives the report (default os.Stdout).
	Out io.Writer
}

const (
	parties      = 32
	maxStaleness = 10
)

func (c Config) withDefaults() Config {
	if c.BarrierTimeout <= 0 {
		c.BarrierTimeout = 1500 * time.Millisecond
	}
	if c.Deadline <= 0 {
		c.Deadline = 30 * time.Second
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	return c
}

// sim is one run: the cluster and what it observed.
type sim struct {
	cfg          Config
	start        time.Time
	log          *eventLog
	tracer       trace.Tracer
	parties      int
	maxStaleness uint64
	sched        schedule
	shards       []shard
	barrier      *barrier.Barrier
	coord        coordinator
	ps           parameterServer
	server       *paramserver.Server // the fixed run's, for Stats and Watch

	mu         sync.Mutex // guards what follows; a plain mutex, outside the story
	violations []seen
	losses     []float64
	stale      []StaleEvent
	broken     *barrier.BrokenError
	brokenAt   time.Time
	recovered  bool
	// notHeldSeen are the functions whose not-held report was printed.
	notHeldSeen map[string]bool
}

// seen is a violation, when the handler received it, and how many
// goroutines were blocked on a lockorder lock at that moment (lockorder's
// waiting-lock profile).
type seen struct {
	v       lockorder.Violation
	at      time.Time
	blocked int
}

// run replays the incident (or, with cfg.Fixed, the corrected design) and
// returns what it observed. It returns an error if a symptom was not caught
// (or, fixed, if the run was not clean), after printing the summary.
func run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg = cfg.withDefaults()
	s := &sim{
		cfg:          cfg,
		start:        time.Now(),
		parties:      parties,
		maxStaleness: maxStaleness,
		sched:        incidentSchedule,
	}
	s.log = &eventLog{w: cfg.Out, start: s.start}
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()

	files, err := newFiles(cfg.OutDir)
	if err != nil {
		return res, err
	}
	// main says where the files are (res.Files). If the run fails before
	// writing them, a temporary directory made for them is removed.
	defer func() {
		if res.Files.Dir == "" && cfg.OutDir == "" {
			err = errors.Join(err, os.RemoveAll(files.Dir))
		}
	}()
	tp, shutdown, err := newTracerProvider(files.Spans, cfg.Fixed)
	if err != nil {
		return res, err
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer scancel()
		err = errors.Join(err, shutdown(sctx))
	}()
	s.tracer = tp.Tracer("github.com/syncwatch/syncwatch/examples/incident")

	lockorder.Reset()
	lockorder.ResetWaitProfile()
	lockorder.Configure(
		lockorder.WithMode(lockorder.ModeCheck),
		lockorder.WithHandler(s.handle),
		lockorder.WithTracerProvider(tp),
		// Investigating a hang: list the goroutines blocked on locks.
		lockorder.WithHeldProfile(true),
	)
	defer lockorder.Configure(
		lockorder.WithHandler(nil),
		lockorder.WithTracerProvider(otel.GetTracerProvider()),
		lockorder.WithHeldProfile(os.Getenv("SYNCWATCH_HELD_PROFILE") == "1"))

	s.barrier = barrier.New(s.parties,
		barrier.WithName("allreduce"),
		barrier.WithTimeout(cfg.BarrierTimeout),
		barrier.WithTracerProvider(tp))
	for rank := range s.parties {
		s.shards = append(s.shards, newShard(rank))
	}
	name := "incident replay"
	if cfg.Fixed {
		name = "fixed design"
		s.coord = &fixedCoordinator{newAllReduceCoordinator(s.barrier)}
		s.server, err = paramserver.New(initialParams(),
			paramserver.WithWorkers(s.parties),
			paramserver.WithMaxStaleness(s.maxStaleness),
			paramserver.WithLearningRate(learningRate),
			paramserver.WithHistory(4*s.sched.steps),
			paramserver.WithMaxWait(cfg.Deadline),
			paramserver.WithTracerProvider(tp))
		if err != nil {
			return res, err
		}
		s.ps = lockedPS{s.server}
	} else {
		s.coord = &incidentCoordinator{newAllReduceCoordinator(s.barrier)}
		s.ps = newIncidentPS(initialParams(), s.maxStaleness)
	}
	ctx, span := s.tracer.Start(ctx, name, trace.WithAttributes(
		attribute.Int("incident.workers", s.parties),
		attribute.Int("incident.max_staleness", int(s.maxStaleness)),
		attribute.String("incident.barrier_timeout", cfg.BarrierTimeout.String())))
	defer span.End()

	s.printIntro()
	watched := s.startWatch(ctx)
	trainErr := s.runWorkers(ctx)
	if trainErr != nil {
		span.RecordError(trainErr)
		span.SetStatus(codes.Error, trainErr.Error())
	}
	res = s.result(watched())
	werr := files.write(ctx)
	res.Files = files // written, if only in part: main says where
	if werr != nil {
		return res, werr
	}
	res.Elapsed = time.Since(s.start)
	verdict := s.printSummary(res)
	return res, errors.Join(trainErr, verdict)
}

// runWorkers runs the 32 workers to the end. The first to fail cancels the
// others' waits; every wait they make is bounded anyway.
func (s *sim) runWorkers(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	errs := make([]error, s.parties)
	for rank := range s.parties {
		wg.Go(func() {
			wctx, span := s.tracer.Start(ctx, fmt.Sprintf("worker %d", rank), trace.WithAttributes(attribute.Int("incident.rank", rank)))
			defer span.End()
			if err := s.train(wctx, rank); err != nil {
				errs[rank] = err
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
				cancel(err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// handle is lockorder's handler: every distinct violation of the run comes
// here, on the goroutine that found it.
func (s *sim) handle(v lockorder.Violation) {
	sv := seen{v: v, at: time.Now(), blocked: pprof.Lookup(lockorder.WaitingProfileName).Count()}
	s.mu.Lock()
	s.violations = append(s.violations, sv)
	s.mu.Unlock()
	s.printViolation(sv)
}

func (s *sim) recordLoss(step int, version uint64, loss float64) {
	s.mu.Lock()
	s.losses = append(s.losses, loss)
	s.mu.Unlock()
	if step%4 == 0 || step == s.sched.steps-1 {
		s.log.printf("  step %2d  version %2d  loss %8.4f\n", step, version, loss)
	}
}

func (s *sim) recordStale(e StaleEvent) {
	e.Elapsed = time.Since(s.start)
	s.mu.Lock()
	s.stale = append(s.stale, e)
	s.mu.Unlock()
	s.printStale(e)
}

// recordBroken keeps the all-reduce's BrokenError. All waiters of the
// generation get the same one; it is printed once.
func (s *sim) recordBroken(be *barrier.BrokenError) {
	s.mu.Lock()
	first := s.broken == nil
	if first {
		s.broken, s.brokenAt = be, time.Now()
	}
	s.mu.Unlock()
	if first {
		s.printBroken(be)
	}
}

func (s *sim) recordRecovery(gen uint64) {
	s.mu.Lock()
	s.recovered = true
	s.mu.Unlock()
	s.log.eventf(time.Now(), "recovered: rank %d released aggregation_lock when its Await failed, rank %d finished\n"+
		"         submit_gradients, and generation %d completed with all %d ranks\n",
		s.sched.reducer, s.sched.straggler, gen, s.parties)
}
