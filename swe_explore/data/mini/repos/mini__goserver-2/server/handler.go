package server

import (
	"net/http"
	"strconv"
	"time"
)

// Handler serves the API.
type Handler struct {
	DefaultTimeout time.Duration
}

// requestTimeout reads the X-Timeout header in seconds.
func (h *Handler) requestTimeout(r *http.Request) time.Duration {
	raw := r.Header.Get("X-Timeout")
	seconds, err := strconv.Atoi(raw)
	if err != nil {
		return h.DefaultTimeout
	}
	return time.Duration(seconds)
}

// ServeHTTP answers every request with OK.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = h.requestTimeout(r)
	w.WriteHeader(http.StatusOK)
}
