package pulpfake

import (
	"net/http"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/faultinject"
)

// Fault is an injected failure of content requests (testworld/faultinject,
// shared with the cloud double): PathPrefix and Path match the path below
// /pulp/content/ (no leading slash). Faults never apply to the control
// endpoint.
type Fault = faultinject.Rule

// newFaults answers injected statuses as aiohttp does.
func (s *Server) newFaults() *faultinject.Injector {
	return faultinject.New(faultinject.Options{
		Answer: func(w http.ResponseWriter, r *http.Request, _ string, status int, msg string) {
			writeText(w, r, status, msg)
		},
		Done: s.closing,
	})
}

// SetFaults replaces the fault list; counters for Times start afresh. An
// invalid fault (a bad regexp, an unknown kind) is a programming error in
// the caller and panics; PUT /_control/faults answers 400 instead.
func (s *Server) SetFaults(faults ...Fault) {
	if err := s.faults.Set(faults...); err != nil {
		panic(err)
	}
}

// Faults returns a copy of the configured fault list.
func (s *Server) Faults() []Fault { return s.faults.Rules() }

// FaultHits returns how often each configured fault has fired, in the
// order of SetFaults: a test waits on it to know a request has arrived
// (and, for a Hang or Latency fault, is being held).
func (s *Server) FaultHits() []int { return s.faults.Hits() }
