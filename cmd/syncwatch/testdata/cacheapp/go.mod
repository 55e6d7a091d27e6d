module example.com/cacheapp

go 1.22

require example.com/extlib v1.0.0
