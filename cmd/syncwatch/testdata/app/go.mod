module example.com/app

go 1.22

require example.com/extlib v0.0.0

replace example.com/extlib => ../extlib
