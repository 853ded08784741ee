// Package httprec records the status a handler answered with, for the
// request logs of the lab's test doubles.
package httprec

import "net/http"

// Recorder wraps a ResponseWriter and remembers the first status written.
// Status stays 0 when the handler never answered (e.g. an aborted request).
type Recorder struct {
	http.ResponseWriter
	Status int
}

// WriteHeader implements http.ResponseWriter.
func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
