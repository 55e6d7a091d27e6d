module example.com/goexperiment

go 1.22
