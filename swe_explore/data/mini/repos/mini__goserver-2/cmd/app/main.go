package main

import (
	"net/http"
	"time"

	"example.com/goserver/server"
)

func main() {
	h := &server.Handler{DefaultTimeout: 30 * time.Second}
	http.ListenAndServe(":8080", h)
}
