module example.com/keep

go 1.22
