module example.com/clean

go 1.22
