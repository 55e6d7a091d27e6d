module example.com/stopped

go 1.22
