package etcd

import (
	"fmt"
	"strconv"
	"strings"
)

// The keys of a barrier or clock under its prefix P. Numbers are
// zero-padded so that keys sort, and compare as etcd values, in numeric
// order.
//
//	P/c/m/RANK        member: one per joined rank, attached to its lease;
//	                  its value is the rank's published state
//	P/c/ask           ask: "GEN.ROUND", the latest request for the
//	                  missing ranks to publish what they are doing
//	P/c/left/RANK     a clock worker that left (no lease)
//	P/settings        the Settings every rank must share, recorded by
//	                  the first Join and never changed
//	P/floor           the oldest generation still kept
//	P/g/GEN           generation GEN: pending, then done or broken, once
//	P/g/GEN/op        the operation label of GEN's first labelled arrival
//	P/g/GEN/a/RANK    RANK's arrival for GEN, attached to its lease
//
// Everything a process watches continuously is under P/c/, in one watch,
// in revision order; a waiter also watches its generation's key.
type keys struct {
	prefix string // ends with "/"
}

func newKeys(prefix string) keys {
	if prefix == "" {
		panic("barrier/etcd: empty key prefix")
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return keys{prefix: prefix}
}

const (
	rankDigits = 10
	genDigits  = 20
)

func padRank(r int) string   { return fmt.Sprintf("%0*d", rankDigits, r) }
func padGen(g uint64) string { return fmt.Sprintf("%0*d", genDigits, g) }

func (k keys) control() string     { return k.prefix + "c/" }
func (k keys) members() string     { return k.prefix + "c/m/" }
func (k keys) member(r int) string { return k.members() + padRank(r) }
func (k keys) ask() string         { return k.prefix + "c/ask" }
func (k keys) lefts() string       { return k.prefix + "c/left/" }
func (k keys) left(r int) string   { return k.lefts() + padRank(r) }
func (k keys) floor() string       { return k.prefix + "floor" }
func (k keys) settings() string    { return k.prefix + "settings" }
func (k keys) gens() string        { return k.prefix + "g/" }
func (k keys) gen(g uint64) string { return k.gens() + padGen(g) }
func (k keys) op(g uint64) string  { return k.gen(g) + "/op" }
func (k keys) arrivals(g uint64) string {
	return k.gen(g) + "/a/"
}
func (k keys) arrival(g uint64, r int) string { return k.arrivals(g) + padRank(r) }

// rankOf parses the rank at the end of a member, left or arrival key.
func rankOf(key, under string) (int, bool) {
	s, ok := strings.CutPrefix(key, under)
	if !ok || len(s) != rankDigits {
		return 0, false
	}
	r, err := strconv.Atoi(s)
	return r, err == nil
}

// genOf parses the generation of a key under P/g/.
func (k keys) genOf(key string) (uint64, bool) {
	s, ok := strings.CutPrefix(key, k.gens())
	if !ok || len(s) < genDigits {
		return 0, false
	}
	g, err := strconv.ParseUint(s[:genDigits], 10, 64)
	return g, err == nil
}

// askValue is the value of the ask key for round of generation g: later
// asks compare greater as strings.
func askValue(g uint64, round int) string { return padGen(g) + "." + strconv.Itoa(round) }
