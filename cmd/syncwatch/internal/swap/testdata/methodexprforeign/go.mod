module example.com/methodexprforeign

go 1.22
