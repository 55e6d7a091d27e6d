module example.com/embedself

go 1.22
