package pulpfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Fault describes an injected failure for content requests. Faults never
// apply to the control endpoint.
type Fault struct {
	PathPrefix string        // matched against the path below /pulp/content/ (no leading slash); "" matches all
	Method     string        // "" = any
	Status     int           // e.g. 500, 502, 503, 429; 0 = no status fault (latency/hang only)
	RetryAfter string        // Retry-After header value to send with the status, e.g. "1"
	Times      int           // the first Times matching requests fault, then the fault is spent; 0 = unlimited
	Rate       float64       // 0 < Rate < 1: each matching request faults with this probability; 0 or >=1 = always
	Hang       bool          // hold the request open without answering until the client goes away or the server closes
	Latency    time.Duration // extra delay for matching requests
}

// faultJSON is Fault's wire form: snake_case names and Latency as a Go
// duration string, so control clients need not count nanoseconds.
type faultJSON struct {
	PathPrefix string       `json:"path_prefix,omitempty"`
	Method     string       `json:"method,omitempty"`
	Status     int          `json:"status,omitempty"`
	RetryAfter string       `json:"retry_after,omitempty"`
	Times      int          `json:"times,omitempty"`
	Rate       float64      `json:"rate,omitempty"`
	Hang       bool         `json:"hang,omitempty"`
	Latency    jsonDuration `json:"latency,omitempty"`
}

// MarshalJSON encodes Latency as a duration string such as "50ms".
func (f Fault) MarshalJSON() ([]byte, error) {
	return json.Marshal(faultJSON{
		PathPrefix: f.PathPrefix, Method: f.Method, Status: f.Status,
		RetryAfter: f.RetryAfter, Times: f.Times, Rate: f.Rate, Hang: f.Hang,
		Latency: jsonDuration(f.Latency),
	})
}

// UnmarshalJSON accepts Latency as a duration string or integer nanoseconds
// and rejects unknown fields.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var j faultJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt field would silently disable the fault
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*f = Fault{
		PathPrefix: j.PathPrefix, Method: j.Method, Status: j.Status,
		RetryAfter: j.RetryAfter, Times: j.Times, Rate: j.Rate, Hang: j.Hang,
		Latency: time.Duration(j.Latency),
	}
	return nil
}

// jsonDuration is a time.Duration that travels as "1.5s" in JSON.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = jsonDuration(v)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("pulpfake: duration must be a string like \"50ms\" or integer nanoseconds, got %s", b)
	}
	*d = jsonDuration(n)
	return nil
}

// faultState tracks how often a fault has fired so Times can be honoured.
type faultState struct {
	Fault
	fired int
}

func (f *faultState) matches(method, rel string) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, method) {
		return false
	}
	return strings.HasPrefix(rel, strings.TrimPrefix(f.PathPrefix, "/"))
}

// pickFault returns the first fault that matches and fires for the request.
// Only one fault applies per request so that combinations stay predictable.
func (s *Server) pickFault(method, rel string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if !f.matches(method, rel) {
			continue
		}
		if f.Times > 0 && f.fired >= f.Times {
			continue
		}
		if f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate {
			continue
		}
		f.fired++
		return f.Fault, true
	}
	return Fault{}, false
}

// SetFaults replaces the fault list; counters for Times start afresh.
func (s *Server) SetFaults(faults ...Fault) {
	states := make([]*faultState, len(faults))
	for i, f := range faults {
		states[i] = &faultState{Fault: f}
	}
	s.mu.Lock()
	s.faults = states
	s.mu.Unlock()
}

// Faults returns a copy of the configured fault list.
func (s *Server) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, len(s.faults))
	for i, f := range s.faults {
		out[i] = f.Fault
	}
	return out
}

// FaultHits returns how often each configured fault has fired, in the
// order of SetFaults: a test waits on it to know a request has arrived
// (and, for a Hang or Latency fault, is being held).
func (s *Server) FaultHits() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	hits := make([]int, len(s.faults))
	for i, f := range s.faults {
		hits[i] = f.fired
	}
	return hits
}
