module example.com/wsbank

go 1.22
