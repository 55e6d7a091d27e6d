module example.com/embedtestmain

go 1.22
