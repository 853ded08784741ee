package cloud

import (
	"encoding/json"
	"net/http"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/faultinject"
)

// Fault is one fault rule (testworld/faultinject, shared with the Pulp
// doubles). The cloud's kinds:
//
//   - "http" (or ""): matches requests by Service ("identity", "compute",
//     "image", "network", "volume"; "" = any), Method ("" = any), Path
//     (a regexp searched in the URL path, e.g. "/servers/[^/]+/action$";
//     "" = any) and Body (a regexp searched in the request body, e.g.
//     "createImage"; "" = any). A matching request first sleeps Latency, then, if Hang,
//     is held until the client gives up (or the cloud closes); otherwise
//     if Status != 0 it is answered with that status (500/503/429...) in
//     the service's error shape and, with RetryAfter, a Retry-After
//     header. Latency alone just slows the request down.
//   - "lose_answer": the backend acts, the answer is lost. A matching
//     request is served (the server, volume, image or keypair exists
//     afterwards), then its connection is closed without an answer, or
//     with Status != 0 the answer is replaced by that status (502/503/504,
//     as a proxy would). LoseAnswer arms it for one request;
//     faultinject.LoseAnswer("POST", path, n) for the nth POST to path.
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
// Nth skips the matching requests before the nth; Rate (0 < Rate < 1)
// applies the fault with that probability (0 = always); Times limits how
// often it applies (0 = unlimited). Rules are tried in order; the first
// that answers (Status, Hang or a lost answer) ends the search, so
// FaultHits counts exactly the answers injected. Durations are Go
// duration strings in JSON ("50ms"; nanoseconds are accepted).
type Fault = faultinject.Rule

const (
	FaultHTTP            = faultinject.KindHTTP
	FaultLoseAnswer      = faultinject.KindLoseAnswer
	FaultServerError     = "server_error"
	FaultServerStuck     = "server_stuck_build"
	FaultServerHardReset = "server_hard_reset"
	FaultSSHDelay        = "ssh_delay"
	FaultImageKilled     = "image_killed"
	FaultVolumeError     = "volume_error"
	FaultVolumeStuck     = "volume_stuck_creating"
)

// LoseAnswer is the fault that serves the next request on svc matching
// method, path and body (regexps, "" = any) and then loses its answer:
// status replaces it, or with status 0 the connection is dropped.
func LoseAnswer(svc, method, path, body string, status int) Fault {
	f := faultinject.LoseAnswer(method, path, 1)
	f.Service, f.Body, f.Status = svc, body, status
	return f
}

// newFaults is the cloud's injector: injected statuses in each service's
// error shape, the resource kinds taken by the services.
func (c *Cloud) newFaults() *faultinject.Injector {
	return faultinject.New(faultinject.Options{
		Kinds: []string{FaultServerError, FaultServerStuck, FaultServerHardReset, FaultSSHDelay,
			FaultImageKilled, FaultVolumeError, FaultVolumeStuck},
		Answer: func(w http.ResponseWriter, _ *http.Request, svc string, status int, msg string) {
			if msg == "" {
				msg = "Injected fault: " + http.StatusText(status)
			}
			fail(w, svc, status, "", msg)
		},
		Done: c.done,
		Logf: func(format string, args ...any) { c.logf("cloud: "+format, args...) },
	})
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
	if err := c.faults.Set(f...); err != nil {
		return err
	}
	for _, s := range c.compute.activeServers() {
		c.compute.maybeHardReset(s)
	}
	return nil
}

// FaultHits returns, for each rule of the last SetFaults in order, how
// often it has applied: HTTP answers (or delays) injected or lost,
// resources failed. Tests use it to show a probabilistic fault really
// fired.
func (c *Cloud) FaultHits() []int { return c.faults.Hits() }

// takeFault consumes and returns the first resource fault of kind whose
// Name matches name. The injector's lock is a leaf, so services call
// this with their own lock held.
func (c *Cloud) takeFault(kind, name string) *Fault { return c.faults.Take(kind, name) }

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
		writeJSON(w, http.StatusOK, c.faults.Rules())
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
	Servers     []StatusItem `json:"servers"`
	Volumes     []StatusItem `json:"volumes"`
	Keypairs    []StatusItem `json:"keypairs"`
	FloatingIPs []StatusItem `json:"floating_ips"`
	Ports       []StatusItem `json:"ports"`
	Images      []StatusItem `json:"images"` // images not active (queued/saving/killed...)
	Snapshots   []StatusItem `json:"volume_snapshots"`
	Backups     []StatusItem `json:"volume_backups"`
	// SecurityGroups are the groups beyond each project's default
	SecurityGroups []StatusItem   `json:"security_groups"`
	Counts         map[string]int `json:"counts"`
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
	st.SecurityGroups = c.network.groupStatus()
	st.Counts = map[string]int{"security_groups": len(st.SecurityGroups), "servers": len(st.Servers), "volumes": len(st.Volumes), "keypairs": len(st.Keypairs),
		"floating_ips": len(st.FloatingIPs), "ports": len(st.Ports), "images": len(st.Images),
		"volume_snapshots": len(st.Snapshots), "volume_backups": len(st.Backups)}
	return st
}
