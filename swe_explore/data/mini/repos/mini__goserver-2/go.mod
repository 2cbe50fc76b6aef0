module example.com/goserver

go 1.21
