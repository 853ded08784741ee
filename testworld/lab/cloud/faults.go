package cloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Fault kinds. A Fault with an empty Kind is an HTTP fault.
//
//   - "http": matches requests by Service ("identity", "compute", "image",
//     "network", "volume"; "" = any), Method ("" = any) and Path (a regexp
//     searched in the URL path, e.g. "/servers/[^/]+/action$"; "" = any)
//     and Body (a regexp searched in the request body, e.g. "createImage";
//     "" = any).
//     A matching request first sleeps Latency, then, if Hang, is held until
//     the client gives up (or the cloud closes); otherwise if Status != 0 it
//     is answered with that status (500/503/429...) in the service's error
//     shape and, when RetryAfter > 0, a Retry-After header (seconds).
//     Latency alone just slows the request down. With Lost, the request
//     is served (the cloud acts) and then its answer is lost: replaced by
//     Status (a gateway's 502/503/504) or, when Status is 0, the
//     connection is dropped without an answer.
//   - "server_error": the next created server (whose name matches Name, a
//     regexp; "" = any) goes to ERROR with fault {"code": 500, "message":
//     Message}.
//   - "server_stuck_build": the next created server stays in BUILD forever.
//   - "server_hard_reset": a server whose name matches Name has its Machine
//     HardReset() called Delay after it becomes ACTIVE (or after SetFaults,
//     when already ACTIVE).
//   - "ssh_delay": the next booted server gets MachineSpec.SSHDelay = Delay.
//   - "image_killed": the next image that would become active (snapshot,
//     volume upload or file upload; Name matches the image name) becomes
//     "killed" instead.
//   - "volume_error": the next created volume goes to "error".
//   - "volume_stuck_creating": the next created volume stays "creating".
//
// Rate (0 < Rate < 1) applies the fault with that probability (0 = always);
// Times limits how often it applies (0 = unlimited). Rules are tried in
// order; the first that answers (Status, Hang or Lost) ends the search, so
// FaultHits counts exactly the answers injected. Durations are
// nanoseconds in JSON.
type Fault struct {
	Kind       string        `json:"kind,omitempty"`
	Service    string        `json:"service,omitempty"`
	Method     string        `json:"method,omitempty"`
	Path       string        `json:"path,omitempty"`
	Body       string        `json:"body,omitempty"`
	Name       string        `json:"name,omitempty"`
	Latency    time.Duration `json:"latency,omitempty"`
	Rate       float64       `json:"rate,omitempty"`
	Times      int           `json:"times,omitempty"`
	Status     int           `json:"status,omitempty"`
	RetryAfter int           `json:"retry_after,omitempty"`
	Hang       bool          `json:"hang,omitempty"`
	Lost       bool          `json:"lost,omitempty"`
	Message    string        `json:"message,omitempty"`
	Delay      time.Duration `json:"delay,omitempty"`
}

const (
	FaultHTTP            = "http"
	FaultServerError     = "server_error"
	FaultServerStuck     = "server_stuck_build"
	FaultServerHardReset = "server_hard_reset"
	FaultSSHDelay        = "ssh_delay"
	FaultImageKilled     = "image_killed"
	FaultVolumeError     = "volume_error"
	FaultVolumeStuck     = "volume_stuck_creating"
)

var faultKinds = map[string]bool{FaultHTTP: true, FaultServerError: true, FaultServerStuck: true,
	FaultServerHardReset: true, FaultSSHDelay: true, FaultImageKilled: true, FaultVolumeError: true, FaultVolumeStuck: true}

type faultState struct {
	Fault
	path, name, body *regexp.Regexp
	hits             int
}

func compileFaults(fs []Fault) ([]*faultState, error) {
	var out []*faultState
	for i, f := range fs {
		if f.Kind == "" {
			f.Kind = FaultHTTP
		}
		if !faultKinds[f.Kind] {
			return nil, fmt.Errorf("fault %d: unknown kind %q", i, f.Kind)
		}
		st := &faultState{Fault: f}
		var err error
		if f.Path != "" {
			if st.path, err = regexp.Compile(f.Path); err != nil {
				return nil, fmt.Errorf("fault %d: path: %v", i, err)
			}
		}
		if f.Name != "" {
			if st.name, err = regexp.Compile(f.Name); err != nil {
				return nil, fmt.Errorf("fault %d: name: %v", i, err)
			}
		}
		if f.Body != "" {
			if st.body, err = regexp.Compile(f.Body); err != nil {
				return nil, fmt.Errorf("fault %d: body: %v", i, err)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// SetFaults replaces the fault rules. If a rule is invalid (unknown kind,
// bad regexp) the error is logged and the previous rules stay in force;
// PUT /_control/faults answers 400 instead.
func (c *Cloud) SetFaults(f ...Fault) {
	if err := c.setFaults(f); err != nil {
		c.logf("cloud: SetFaults: %v", err)
	}
}

func (c *Cloud) setFaults(f []Fault) error {
	fs, err := compileFaults(f)
	if err != nil {
		return err
	}
	c.faultMu.Lock()
	c.faults = fs
	c.faultMu.Unlock()
	for _, s := range c.compute.activeServers() {
		c.compute.maybeHardReset(s)
	}
	return nil
}

// takeFault consumes and returns the first resource fault of kind whose
// Name matches name. faultMu is a leaf lock, so services call this with
// their own lock held.
func (c *Cloud) takeFault(kind, name string) *Fault {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	for _, f := range c.faults {
		if f.Kind != kind || (f.name != nil && !f.name.MatchString(name)) {
			continue
		}
		if f.Times > 0 && f.hits >= f.Times {
			continue
		}
		if f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate {
			continue
		}
		f.hits++
		ff := f.Fault
		return &ff
	}
	return nil
}

// LoseAnswer is the fault that serves the next request matching method,
// path and body (regexps, "" = any) on svc and then loses its answer:
// status replaces it, or with status 0 the connection is dropped.
func LoseAnswer(svc, method, path, body string, status int) Fault {
	return Fault{Service: svc, Method: method, Path: path, Body: body, Lost: true, Status: status, Times: 1}
}

// applyHTTPFaults applies request faults; false when the request was
// answered. A Lost rule is returned for the caller to apply once the
// request has been served.
func (c *Cloud) applyHTTPFaults(w http.ResponseWriter, r *http.Request, svc string) (*Fault, bool) {
	var apply []Fault
	c.faultMu.Lock()
	for _, f := range c.faults {
		if f.Kind != FaultHTTP || (f.Service != "" && f.Service != svc) || (f.Method != "" && f.Method != r.Method) {
			continue
		}
		if f.path != nil && !f.path.MatchString(r.URL.Path) {
			continue
		}
		if f.Times > 0 && f.hits >= f.Times {
			continue
		}
		if f.body != nil && !f.body.Match(peekBody(r)) {
			continue
		}
		if f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate {
			continue
		}
		f.hits++
		apply = append(apply, f.Fault)
		if f.Status != 0 || f.Hang || f.Lost {
			// This rule answers the request: later rules neither apply
			// nor count a hit, so hits add up to the answers injected.
			break
		}
	}
	c.faultMu.Unlock()
	for _, f := range apply {
		if f.Lost {
			return &f, true
		}
		if f.Latency > 0 {
			t := time.NewTimer(f.Latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return nil, false
			case <-c.done:
				t.Stop()
			}
		}
		if f.Hang {
			c.logf("cloud: fault: hanging %s %s", r.Method, r.URL.Path)
			select {
			case <-r.Context().Done():
			case <-c.done:
			}
			return nil, false
		}
		if f.Status != 0 {
			c.logf("cloud: fault: %d for %s %s", f.Status, r.Method, r.URL.Path)
			if f.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
			}
			msg := f.Message
			if msg == "" {
				msg = "Injected fault: " + http.StatusText(f.Status)
			}
			fail(w, svc, f.Status, "", msg)
			return nil, false
		}
	}
	return nil, true
}

// peekBody reads the request body and puts it back for the handler.
func peekBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(r.Body) // a short read matches less; the handler then sees what was read
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

// lostAnswer takes the answer of a served request and throws it away.
type lostAnswer struct{ h http.Header }

func (l *lostAnswer) Header() http.Header         { return l.h }
func (l *lostAnswer) WriteHeader(int)             {}
func (l *lostAnswer) Write(b []byte) (int, error) { return len(b), nil }

// loseAnswer ends a request served through a lostAnswer as f says: a
// gateway error, or a dropped connection.
func (c *Cloud) loseAnswer(w http.ResponseWriter, r *http.Request, svc string, f *Fault) {
	if f.Status != 0 {
		c.logf("cloud: fault: served %s %s, answered %d instead", r.Method, r.URL.Path, f.Status)
		fail(w, svc, f.Status, "", "Injected fault after the request was served: "+http.StatusText(f.Status))
		return
	}
	c.logf("cloud: fault: served %s %s, dropping the connection", r.Method, r.URL.Path)
	hj, ok := w.(http.Hijacker)
	if !ok {
		fail(w, svc, http.StatusBadGateway, "", "Injected fault after the request was served (connection cannot be dropped)")
		return
	}
	if conn, _, err := hj.Hijack(); err == nil {
		_ = conn.Close()
	}
}

func (c *Cloud) serveControl(w http.ResponseWriter, r *http.Request, segs []string) {
	switch {
	case len(segs) == 1 && segs[0] == "faults" && r.Method == http.MethodPut:
		var fs []Fault
		if err := json.NewDecoder(r.Body).Decode(&fs); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := c.setFaults(fs); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case len(segs) == 1 && segs[0] == "faults" && r.Method == http.MethodGet:
		c.faultMu.Lock()
		fs := []Fault{}
		for _, f := range c.faults {
			fs = append(fs, f.Fault)
		}
		c.faultMu.Unlock()
		writeJSON(w, http.StatusOK, fs)
	case len(segs) == 1 && segs[0] == "status" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, c.Status())
	case len(segs) == 1 && segs[0] == "calls" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, c.Calls())
	case len(segs) == 1 && c.o.Control[segs[0]] != nil:
		c.o.Control[segs[0]].ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// Status lists every live resource the API created or holds.
type Status struct {
	Servers     []StatusItem   `json:"servers"`
	Volumes     []StatusItem   `json:"volumes"`
	Keypairs    []StatusItem   `json:"keypairs"`
	FloatingIPs []StatusItem   `json:"floating_ips"`
	Ports       []StatusItem   `json:"ports"`
	Images      []StatusItem   `json:"images"` // images not active (queued/saving/killed...)
	Snapshots   []StatusItem   `json:"volume_snapshots"`
	Backups     []StatusItem   `json:"volume_backups"`
	Counts      map[string]int `json:"counts"`
}

// StatusItem is one live resource.
type StatusItem struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Total is the number of listed resources.
func (s Status) Total() int {
	n := 0
	for _, v := range s.Counts {
		n += v
	}
	return n
}

// Status returns every live resource by kind.
func (c *Cloud) Status() Status {
	st := Status{}
	st.Servers, st.Keypairs = c.compute.status()
	st.Volumes = c.volume.status()
	st.FloatingIPs, st.Ports = c.network.status()
	st.Images = c.image.status()
	st.Snapshots, st.Backups = c.volume.snapshotStatus()
	st.Counts = map[string]int{"servers": len(st.Servers), "volumes": len(st.Volumes), "keypairs": len(st.Keypairs),
		"floating_ips": len(st.FloatingIPs), "ports": len(st.Ports), "images": len(st.Images),
		"volume_snapshots": len(st.Snapshots), "volume_backups": len(st.Backups)}
	return st
}
