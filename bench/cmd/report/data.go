package main

import (
	"slices"
	"sort"
)

// A Run is the parsed output of one go test invocation, and whether it
// was built with the syncwatch_off tag.
type Run struct {
	Tagged bool
	Out    *Output
}

// Key identifies one benchmark configuration across repeated counts.
type Key struct {
	// Tagged is set for results of the syncwatch_off build.
	Tagged bool
	Bench  string
	Impl   string
	Procs  int
}

// Stat maps each unit of a configuration to its median over the counts.
type Stat map[string]float64

// Data is every configuration's medians, with what is needed to render
// them.
type Data struct {
	Env   Env
	stats map[Key]Stat
	// samples counts the results behind each Stat.
	samples map[Key]int
	// SameCode is the compiler check of the syncwatch_off build, nil when
	// it was not made.
	SameCode *SameCode
	// Failed lists the benchmarks go test reported as failed.
	Failed []string
	// Primitives are the coordination primitives' runs, one per package,
	// reported as they are.
	Primitives []*Output
}

// Collect groups the runs' results by configuration and takes medians.
func Collect(env Env, runs []Run) *Data {
	values := map[Key]map[string][]float64{}
	d := &Data{Env: env, stats: map[Key]Stat{}, samples: map[Key]int{}}
	for _, r := range runs {
		for _, res := range r.Out.Results {
			k := Key{r.Tagged, res.Bench, res.Impl, res.Procs}
			if values[k] == nil {
				values[k] = map[string][]float64{}
			}
			for unit, v := range res.Metrics {
				values[k][unit] = append(values[k][unit], v)
			}
			d.samples[k]++
		}
		d.Failed = append(d.Failed, r.Out.Failed...)
	}
	for k, units := range values {
		s := Stat{}
		for unit, vs := range units {
			s[unit] = median(vs)
		}
		d.stats[k] = s
	}
	return d
}

// median returns the middle value of vs, or the mean of the two middle
// values when there is an even number. vs is reordered.
func median(vs []float64) float64 {
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// Get returns the medians of bench/impl=impl. Procs 0 means the highest
// GOMAXPROCS it ran with.
func (d *Data) Get(tagged bool, bench, impl string, procs int) (Stat, bool) {
	if procs == 0 {
		ps := d.Procs(tagged, bench)
		if len(ps) == 0 {
			return nil, false
		}
		procs = ps[len(ps)-1]
	}
	s, ok := d.stats[Key{tagged, bench, impl, procs}]
	return s, ok
}

// Value returns one median: unit of bench/impl=impl at procs (0: highest).
func (d *Data) Value(tagged bool, bench, impl string, procs int, unit string) (float64, bool) {
	s, ok := d.Get(tagged, bench, impl, procs)
	if !ok {
		return 0, false
	}
	v, ok := s[unit]
	return v, ok
}

// Procs returns the GOMAXPROCS values bench ran with, in increasing order.
func (d *Data) Procs(tagged bool, bench string) []int {
	var ps []int
	for k := range d.stats {
		if k.Tagged == tagged && k.Bench == bench && !slices.Contains(ps, k.Procs) {
			ps = append(ps, k.Procs)
		}
	}
	slices.Sort(ps)
	return ps
}

// Impls returns the impls bench ran as, in the order of implOrder, then
// any others by name.
func (d *Data) Impls(tagged bool, bench string) []string {
	var is []string
	for k := range d.stats {
		if k.Tagged == tagged && k.Bench == bench && !slices.Contains(is, k.Impl) {
			is = append(is, k.Impl)
		}
	}
	slices.SortFunc(is, func(a, b string) int {
		ia, ib := implRank(a), implRank(b)
		if ia != ib {
			return ia - ib
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	return is
}

// Samples returns how many results the medians of bench/impl=impl at procs
// (0: highest) were taken over.
func (d *Data) Samples(tagged bool, bench, impl string, procs int) int {
	if procs == 0 {
		ps := d.Procs(tagged, bench)
		if len(ps) == 0 {
			return 0
		}
		procs = ps[len(ps)-1]
	}
	return d.samples[Key{tagged, bench, impl, procs}]
}

// Units returns the units bench reported beyond ns/op, B/op and allocs/op,
// sorted.
func (d *Data) Units(tagged bool, bench string) []string {
	var us []string
	for k, s := range d.stats {
		if k.Tagged != tagged || k.Bench != bench {
			continue
		}
		for u := range s {
			if !standardUnit(u) && !slices.Contains(us, u) {
				us = append(us, u)
			}
		}
	}
	slices.Sort(us)
	return us
}

func standardUnit(u string) bool { return u == "ns/op" || u == "B/op" || u == "allocs/op" }
