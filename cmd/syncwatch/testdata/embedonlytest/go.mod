module example.com/embedonlytest

go 1.22
