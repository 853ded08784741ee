// Package labhttp is what the lab's small content servers (git server,
// package index) share: listening, a switch that makes every request
// answer 503 (an upstream that is down, for host-side tests), a request
// count, and a quiet Close.
package labhttp

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Server serves one handler; embed it to get URL, Requests, SetAvailable
// and Close.
type Server struct {
	name      string
	available atomic.Bool
	requests  atomic.Int64
	ln        net.Listener
	srv       *http.Server
}

// Start listens on addr (default "127.0.0.1:0") and serves h. name says
// which server answered 503.
func Start(name, addr string, h http.Handler) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	s := &Server{name: name}
	s.available.Store(true)
	var err error
	if s.ln, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("%s: listen: %w", name, err)
	}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			if !s.available.Load() {
				http.Error(w, "503 Service Unavailable (lab: "+s.name+" switched off)", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go s.srv.Serve(s.ln) //nolint:errcheck // ErrServerClosed on Close
	return s, nil
}

// URL is the base URL, "http://host:port".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Requests is how many requests the server answered.
func (s *Server) Requests() int64 { return s.requests.Load() }

// SetAvailable(false) answers every request 503.
func (s *Server) SetAvailable(ok bool) { s.available.Store(ok) }

// Close stops the server.
func (s *Server) Close() error {
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
