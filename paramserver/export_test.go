package paramserver

// Rewind makes version v, which must still be in the history, current
// again: a server bug on purpose, to show that Get reports it.
func Rewind(s *Server, v uint64) {
	s.commit.Lock()
	defer s.commit.Unlock()
	st, err := s.at(v)
	if err != nil {
		panic(err)
	}
	s.cur.Store(st)
}

// Shards returns the number of shard locks of s.
func Shards(s *Server) int { return len(s.shards) }
