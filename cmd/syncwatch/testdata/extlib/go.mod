module example.com/extlib

go 1.22
