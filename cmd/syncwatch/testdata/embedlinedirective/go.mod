module example.com/embedlinedirective

go 1.22
