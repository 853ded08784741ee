package lab

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// Content servers (the Ark double, release server, git server, package
// index) can each be cut off from the VMs while the host still reaches
// them, to prove a build fetches on the host or goes through a site Pulp.
// They are known by a short name.

// contentServers maps each content server's name to its base URL.
func (l *Lab) contentServers() map[string]string {
	out := map[string]string{}
	if l.Pulp != nil {
		out["ark"] = l.Pulp.URL()
	}
	if l.Releases != nil {
		out["releases"] = l.Releases.URL()
	}
	if l.Git != nil {
		out["git"] = l.Git.URL()
	}
	if l.PyPI != nil {
		out["pypi"] = l.PyPI.URL()
	}
	if l.Registry != nil {
		out["registry"] = l.Registry.URL()
	}
	if l.RegistryAuth != nil {
		out["registry-auth"] = l.RegistryAuth.URL()
	}
	return out
}

// ContentServers are the names SetServerReachableFromVMs accepts, sorted.
func (l *Lab) ContentServers() []string {
	var names []string
	for n := range l.contentServers() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SetServerReachableFromVMs(name, false) makes a content server
// unreachable from the lab's VMs while the host still reaches it: a host
// iptables rule rejects TCP arriving on the lab bridge for the server's
// address and port with a TCP reset, so a VM's client fails at once
// ("Connection refused") instead of hanging. The host's own connections
// to the gateway address go over lo and are not matched. true removes the
// rule; so does Close.
func (l *Lab) SetServerReachableFromVMs(name string, ok bool) error {
	base, known := l.contentServers()[name]
	if !known {
		return fmt.Errorf("lab: no content server %q (have %s)", name, strings.Join(l.ContentServers(), ", "))
	}
	l.fwMu.Lock()
	defer l.fwMu.Unlock()
	if l.blocked == nil {
		l.blocked = map[string]bool{}
	}
	if ok != l.blocked[name] { // already as asked
		return nil
	}
	op := "-I"
	if ok {
		op = "-D"
	}
	host, port, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	if err != nil {
		return err
	}
	args := []string{"-w", "5", op, "INPUT", "-i", l.Network.Bridge, "-d", host, "-p", "tcp", "--dport", port,
		"-j", "REJECT", "--reject-with", "tcp-reset"}
	if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("lab: iptables %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	l.blocked[name] = !ok
	l.Logf("lab: %s server reachable from VMs: %v", name, ok)
	return nil
}

// ServerReachableFromVMs reports the state SetServerReachableFromVMs set.
func (l *Lab) ServerReachableFromVMs(name string) bool {
	l.fwMu.Lock()
	defer l.fwMu.Unlock()
	return !l.blocked[name]
}

// SetAllServersReachableFromVMs applies SetServerReachableFromVMs to every
// content server.
func (l *Lab) SetAllServersReachableFromVMs(ok bool) error {
	for _, n := range l.ContentServers() {
		if err := l.SetServerReachableFromVMs(n, ok); err != nil {
			return err
		}
	}
	return nil
}

// reachability is the body of GET and PUT $LAB_CONTROL_URL/<server>.
type reachability struct {
	ReachableFromVMs *bool `json:"reachable_from_vms"`
}

// serverStatus is one entry of GET $LAB_CONTROL_URL/servers.
type serverStatus struct {
	URL              string `json:"url"`
	ReachableFromVMs bool   `json:"reachable_from_vms"`
}

// serveControl lets other processes (make lab-up users, e2e drivers)
// toggle SetServerReachableFromVMs and list the servers:
//
//	curl -X PUT -d '{"reachable_from_vms": false}' $LAB_CONTROL_URL/git
//	curl $LAB_CONTROL_URL/servers
func (l *Lab) serveControl(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	if name == "servers" {
		out := map[string]serverStatus{}
		for n, u := range l.contentServers() {
			out[n] = serverStatus{URL: u, ReachableFromVMs: l.ServerReachableFromVMs(n)}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
		return
	}
	if _, ok := l.contentServers()[name]; !ok {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut:
		var body reachability
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ReachableFromVMs == nil {
			http.Error(w, `want {"reachable_from_vms": true|false}`, http.StatusBadRequest)
			return
		}
		if err := l.SetServerReachableFromVMs(name, *body.ReachableFromVMs); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	default:
		w.Header().Set("Allow", "GET, PUT")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	ok := l.ServerReachableFromVMs(name)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(reachability{ReachableFromVMs: &ok})
}
