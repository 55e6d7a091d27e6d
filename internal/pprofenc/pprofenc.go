// Package pprofenc writes profiles of symbolized stacks in pprof's format,
// the protocol buffer that go tool pprof reads (profile.proto in
// github.com/google/pprof). It writes only: the pprof package, which also
// parses, merges and symbolizes, links regexp and its text parsers into
// every program that uses lockorder. It does not compress either: go tool
// pprof reads a profile gzipped or not, and a caller that gzips, as
// runtime/pprof does, links compress/gzip itself (the syncwatch_off build
// does not).
//
// A profile has one mapping, marked as having functions, file names and
// line numbers, so that pprof looks for no binary to symbolize with.
// Functions are interned by name and file, locations by frame, and both are
// numbered from 1 in the order samples first use them.
package pprofenc

import "encoding/binary"

// A Profile is a pprof profile of symbolized stacks.
type Profile struct {
	SampleTypes       []ValueType // one per value of every sample
	DefaultSampleType string      // the Type of one of SampleTypes
	PeriodType        ValueType
	Period            int64
	TimeNanos         int64 // when the profile was taken
	DurationNanos     int64 // the span of time it covers
	Samples           []Sample
}

// A ValueType names a sample value and its unit.
type ValueType struct{ Type, Unit string }

// A Sample is a stack and its values.
type Sample struct {
	Stack  []Frame // innermost first
	Values []int64 // one per sample type
	Labels []Label
}

// A Frame is one symbolized call site.
type Frame struct {
	Function, File string
	Line           int64
}

// A Label is a string label of a sample.
type Label struct{ Key, Value string }

// Field numbers of profile.proto's messages, and the wire types used.
const (
	profileSampleType        = 1
	profileSample            = 2
	profileMapping           = 3
	profileLocation          = 4
	profileFunction          = 5
	profileStringTable       = 6
	profileTimeNanos         = 9
	profileDurationNanos     = 10
	profilePeriodType        = 11
	profilePeriod            = 12
	profileDefaultSampleType = 14

	valueTypeType = 1
	valueTypeUnit = 2

	sampleLocationID = 1
	sampleValue      = 2
	sampleLabel      = 3

	labelKey = 1
	labelStr = 2

	mappingID             = 1
	mappingHasFunctions   = 7
	mappingHasFilenames   = 8
	mappingHasLineNumbers = 9

	locationID        = 1
	locationMappingID = 2
	locationLine      = 4

	lineFunctionID = 1
	lineLine       = 2

	functionID         = 1
	functionName       = 2
	functionSystemName = 3
	functionFilename   = 4

	wireVarint = 0
	wireBytes  = 2
)

// theMapping is the ID of the profile's one mapping.
const theMapping = 1

// encoder builds the message; strings, functions and locations are
// interned as they are first met and written at the end.
type encoder struct {
	buf       []byte
	strings   map[string]int64
	table     []string
	functions map[[2]string]uint64
	funcs     []byte // the encoded Function messages
	locations map[Frame]uint64
	locs      []byte // the encoded Location messages
}

// Encode returns p as profile.proto's Profile message, uncompressed.
func (p *Profile) Encode() []byte {
	e := &encoder{strings: map[string]int64{}, functions: map[[2]string]uint64{}, locations: map[Frame]uint64{}}
	e.str("") // index 0 is the empty string
	for _, t := range p.SampleTypes {
		e.message(profileSampleType, e.valueType(t))
	}
	for _, s := range p.Samples {
		e.message(profileSample, e.sample(s))
	}
	var m []byte
	m = appendInt(m, mappingID, theMapping)
	m = appendInt(m, mappingHasFunctions, 1)
	m = appendInt(m, mappingHasFilenames, 1)
	m = appendInt(m, mappingHasLineNumbers, 1)
	e.message(profileMapping, m)
	e.buf = append(e.buf, e.locs...)
	e.buf = append(e.buf, e.funcs...)
	e.buf = appendInt(e.buf, profileTimeNanos, p.TimeNanos)
	e.buf = appendInt(e.buf, profileDurationNanos, p.DurationNanos)
	e.message(profilePeriodType, e.valueType(p.PeriodType))
	e.buf = appendInt(e.buf, profilePeriod, p.Period)
	e.buf = appendInt(e.buf, profileDefaultSampleType, e.str(p.DefaultSampleType))
	for _, s := range e.table {
		e.message(profileStringTable, []byte(s))
	}
	return e.buf
}

func (e *encoder) message(field int, m []byte) { e.buf = appendBytes(e.buf, field, m) }

// str returns s's index in the string table, adding it if it is new.
func (e *encoder) str(s string) int64 {
	i, ok := e.strings[s]
	if !ok {
		i = int64(len(e.table))
		e.strings[s] = i
		e.table = append(e.table, s)
	}
	return i
}

func (e *encoder) valueType(t ValueType) []byte {
	return appendInt(appendInt(nil, valueTypeType, e.str(t.Type)), valueTypeUnit, e.str(t.Unit))
}

func (e *encoder) sample(s Sample) []byte {
	var ids, values []byte // packed repeated fields
	for _, f := range s.Stack {
		ids = binary.AppendUvarint(ids, e.location(f))
	}
	for _, v := range s.Values {
		values = binary.AppendUvarint(values, uint64(v))
	}
	m := appendBytes(nil, sampleLocationID, ids)
	m = appendBytes(m, sampleValue, values)
	for _, l := range s.Labels {
		m = appendBytes(m, sampleLabel, appendInt(appendInt(nil, labelKey, e.str(l.Key)), labelStr, e.str(l.Value)))
	}
	return m
}

// location returns f's location ID, adding the location (and its function)
// if it is new.
func (e *encoder) location(f Frame) uint64 {
	if id, ok := e.locations[f]; ok {
		return id
	}
	fk := [2]string{f.Function, f.File}
	fn, ok := e.functions[fk]
	if !ok {
		fn = uint64(len(e.functions) + 1)
		e.functions[fk] = fn
		name := e.str(f.Function)
		var m []byte
		m = appendInt(m, functionID, int64(fn))
		m = appendInt(m, functionName, name)
		m = appendInt(m, functionSystemName, name)
		m = appendInt(m, functionFilename, e.str(f.File))
		e.funcs = appendBytes(e.funcs, profileFunction, m)
	}
	id := uint64(len(e.locations) + 1)
	e.locations[f] = id
	var m []byte
	m = appendInt(m, locationID, int64(id))
	m = appendInt(m, locationMappingID, theMapping)
	m = appendBytes(m, locationLine, appendInt(appendInt(nil, lineFunctionID, int64(fn)), lineLine, f.Line))
	e.locs = appendBytes(e.locs, profileLocation, m)
	return id
}

// appendInt appends a varint field; negative values take ten bytes, as
// protobuf's int64 does.
func appendInt(b []byte, field int, v int64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|wireVarint)
	return binary.AppendUvarint(b, uint64(v))
}

// appendBytes appends a length-delimited field: a string, a message or a
// packed repeated field.
func appendBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}
