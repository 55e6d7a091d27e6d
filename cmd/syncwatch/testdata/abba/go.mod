module example.com/abba

go 1.22
