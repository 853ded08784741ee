package cloud

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// StateEvent is a resource reaching a status: Changed is when the cloud
// put it there, Observed when a client first read it in that status
// through a GET of the resource (zero until then). Benchmarks use the
// difference to measure how fast a client notices a state change.
type StateEvent struct {
	Kind     string // "server", "image" or "volume"
	ID       string
	Status   string // "ACTIVE", "SHUTOFF", "active", "available"
	Changed  time.Time
	Observed time.Time
}

// stateLog records state changes and first observations; it has its own
// lock because services note changes with their own lock held.
type stateLog struct {
	mu      sync.Mutex
	on      bool
	events  []*StateEvent
	pending map[string]time.Time // observations before the change was noted
}

// RecordStates starts (or stops) recording state changes and their first
// observation by clients, clearing what was recorded.
func (c *Cloud) RecordStates(on bool) {
	c.states.mu.Lock()
	defer c.states.mu.Unlock()
	c.states.on, c.states.events, c.states.pending = on, nil, map[string]time.Time{}
}

// StateEvents returns the state changes recorded since RecordStates(true).
func (c *Cloud) StateEvents() []StateEvent {
	c.states.mu.Lock()
	defer c.states.mu.Unlock()
	out := make([]StateEvent, len(c.states.events))
	for i, e := range c.states.events {
		out[i] = *e
	}
	return out
}

// note records that kind/id reached status now.
func (l *stateLog) note(kind, id, status string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	l.events = append(l.events, &StateEvent{Kind: kind, ID: id, Status: status, Changed: time.Now()})
}

// observe records that a client read kind/id in status at t.
func (l *stateLog) observe(kind, id, status string, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		e := l.events[i]
		if e.Kind == kind && e.ID == id {
			if e.Status == status && e.Observed.IsZero() {
				e.Observed = t
			}
			return
		}
	}
}

func (l *stateLog) recording() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.on
}

// bodyRecorder keeps a copy of a GET response body for observe.
type bodyRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (b *bodyRecorder) WriteHeader(s int) { b.status = s; b.ResponseWriter.WriteHeader(s) }
func (b *bodyRecorder) Write(p []byte) (int, error) {
	if b.body.Len() < 1<<20 {
		b.body.Write(p)
	}
	return b.ResponseWriter.Write(p)
}

// observeResponse notes the status of a server, volume or image that a
// GET of that one resource returned.
func (l *stateLog) observeResponse(svc string, r *http.Request, b *bodyRecorder) {
	if b.status != 0 && b.status != http.StatusOK {
		return
	}
	t := time.Now()
	var body struct {
		Server *struct{ ID, Status string } `json:"server"`
		Volume *struct{ ID, Status string } `json:"volume"`
		ID     string                       `json:"id"`
		Status string                       `json:"status"`
	}
	if json.Unmarshal(b.body.Bytes(), &body) != nil {
		return
	}
	switch {
	case svc == SvcCompute && body.Server != nil:
		l.observe("server", body.Server.ID, body.Server.Status, t)
	case svc == SvcVolume && body.Volume != nil:
		l.observe("volume", body.Volume.ID, body.Volume.Status, t)
	case svc == SvcImage && body.ID != "" && strings.Contains(r.URL.Path, "/images/"):
		l.observe("image", body.ID, body.Status, t)
	}
}
