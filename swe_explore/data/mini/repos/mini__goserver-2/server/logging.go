package server

import "log"

// LogRequest prints the method and path of a request.
func LogRequest(method, path string) {
	log.Printf("%s %s", method, path)
}
