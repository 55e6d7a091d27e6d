package dotimport

import . "sync"

var mu Mutex

var l Locker = &mu

var onlyLockers = []Locker{&Mutex{}, new(RWMutex).RLocker()}
