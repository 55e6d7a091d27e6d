module example.com/embedgeneric

go 1.22
