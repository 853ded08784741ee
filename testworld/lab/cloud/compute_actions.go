package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// serverAction is POST /servers/{id}/action, with nv.mu held.
func (nv *nova) serverAction(w http.ResponseWriter, r *http.Request, s *server, t *token, mv microversion) []func() {
	var body map[string]json.RawMessage
	if err := decodeBody(r, &body); err != nil || len(body) != 1 {
		fail(w, SvcCompute, http.StatusBadRequest, "", "Malformed request body")
		return nil
	}
	var action string
	var arg json.RawMessage
	for k, v := range body {
		action, arg = k, v
	}
	switch action {
	case "os-stop":
		nv.power(w, s, "stop", "powering-off", "", "ACTIVE", func(m Machine) error { return m.Stop(context.Background()) }, func() {
			s.Status, s.VMState, s.Power = "SHUTOFF", "stopped", novaPowerShutdown
			nv.c.states.note("server", s.ID, "SHUTOFF")
		})
	case "os-start":
		nv.power(w, s, "start", "powering-on", "", "SHUTOFF", func(m Machine) error { return m.Start(context.Background()) }, func() {
			s.Status, s.VMState, s.Power = "ACTIVE", "active", novaPowerRunning
		})
	case "reboot":
		nv.reboot(w, s, arg)
	case "forceDelete":
		nv.deleteServer(s)
		w.WriteHeader(http.StatusAccepted)
	case "os-getConsoleOutput":
		nv.consoleOutput(w, s, arg)
	case "createImage":
		nv.createServerImage(w, s, arg, t, mv)
	case "addSecurityGroup", "removeSecurityGroup":
		return nv.changeSecurityGroup(w, s, action == "addSecurityGroup", arg)
	default:
		fail(w, SvcCompute, http.StatusBadRequest, "", "There is no such action: "+action)
	}
	return nil
}

// actionConflict refuses an action in s's current state, as Nova words it.
func actionConflict(w http.ResponseWriter, s *server, what string) {
	if s.TaskState != "" {
		fail(w, SvcCompute, http.StatusConflict, "", fmt.Sprintf("Cannot '%s' instance %s while it is in task_state %s", what, s.ID, s.TaskState))
		return
	}
	fail(w, SvcCompute, http.StatusConflict, "", fmt.Sprintf("Cannot '%s' instance %s while it is in vm_state %s", what, s.ID, s.VMState))
}

// power runs op on s's machine in the background (task state task,
// status busyStatus meanwhile when set) when s is in status need, then
// final; a failure puts s in ERROR.
func (nv *nova) power(w http.ResponseWriter, s *server, what, task, busyStatus, need string, op func(Machine) error, final func()) {
	if s.Status != need || s.TaskState != "" || s.machine == nil {
		actionConflict(w, s, what)
		return
	}
	s.TaskState = task
	if busyStatus != "" {
		s.Status = busyStatus
	}
	s.Updated = time.Now()
	m := s.machine
	nv.c.goAfter(nv.c.took(nv.c.o.Timing.ServerAction, 0), func() {
		err := op(m)
		nv.mu.Lock()
		defer nv.mu.Unlock()
		if s.deleted {
			return
		}
		s.TaskState, s.Updated = "", time.Now()
		if err != nil {
			nv.c.logf("cloud: %s %s: %v", what, s.ID, err)
			s.Status, s.VMState = "ERROR", "error"
			s.Fault = obj{"code": 500, "message": err.Error(), "created": tsZ(time.Now())}
			return
		}
		final()
	})
	w.WriteHeader(http.StatusAccepted)
}

func (nv *nova) reboot(w http.ResponseWriter, s *server, arg json.RawMessage) {
	var a struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(arg, &a) // a bad body leaves Type empty: refused below
	hard := strings.EqualFold(a.Type, "HARD")
	if !hard && !strings.EqualFold(a.Type, "SOFT") {
		fail(w, SvcCompute, http.StatusBadRequest, "", "Invalid input for field/attribute type.")
		return
	}
	need, status, task := "ACTIVE", "REBOOT", "reboot_started"
	if hard {
		status, task = "HARD_REBOOT", "reboot_started_hard"
		if s.Status == "SHUTOFF" {
			need = "SHUTOFF"
		}
	}
	nv.power(w, s, "reboot", task, status, need, func(m Machine) error { return m.Reboot(context.Background(), hard) }, func() {
		s.Status, s.VMState, s.Power = "ACTIVE", "active", novaPowerRunning
	})
}

func (nv *nova) consoleOutput(w http.ResponseWriter, s *server, arg json.RawMessage) {
	var a struct {
		Length any `json:"length"`
	}
	_ = json.Unmarshal(arg, &a) // optional: Nova ignores a bad length too
	if s.machine == nil {
		actionConflict(w, s, "get console output")
		return
	}
	m := s.machine
	// ConsoleLog may take a moment; compute it unlocked.
	nv.mu.Unlock()
	out := m.ConsoleLog()
	nv.mu.Lock()
	if n, ok := anyInt(a.Length); ok && n >= 0 {
		lines := strings.SplitAfter(out, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		out = strings.Join(lines, "")
	}
	writeJSON(w, http.StatusOK, obj{"output": out})
}

func (nv *nova) createServerImage(w http.ResponseWriter, s *server, arg json.RawMessage, t *token, mv microversion) {
	var a struct {
		Name     string            `json:"name"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(arg, &a); err != nil || strings.TrimSpace(a.Name) == "" {
		fail(w, SvcCompute, http.StatusBadRequest, "", "Invalid input for field/attribute name.")
		return
	}
	if (s.Status != "ACTIVE" && s.Status != "SHUTOFF") || s.TaskState != "" {
		actionConflict(w, s, "createImage")
		return
	}
	img, e := nv.snapshotServer(s, a.Name, a.Metadata, t)
	if e != nil {
		fail(w, SvcCompute, e.status, "", e.msg)
		return
	}
	w.Header().Set("Location", nv.c.url+"/image/v2/images/"+img.ID)
	if mv.atLeast(45) {
		writeJSON(w, http.StatusAccepted, obj{"image_id": img.ID})
	} else {
		w.WriteHeader(http.StatusAccepted)
	}
}

// changeSecurityGroup is addSecurityGroup or removeSecurityGroup: the
// group (a name or an id) joins or leaves every port of the server, and
// the filters follow once nv.mu is released; nv.mu held.
func (nv *nova) changeSecurityGroup(w http.ResponseWriter, s *server, add bool, arg json.RawMessage) []func() {
	var b struct{ Name string }
	if json.Unmarshal(arg, &b) != nil || b.Name == "" {
		fail(w, SvcCompute, http.StatusBadRequest, "", "Security group name cannot be empty")
		return nil
	}
	if e := nv.c.network.setPortsGroup(s.ProjectID, s.Ports, b.Name, add); e != nil {
		fail(w, SvcCompute, e.status, "", strings.ReplaceAll(e.msg, "<instance>", s.ID))
		return nil
	}
	s.Updated = time.Now()
	w.WriteHeader(http.StatusAccepted)
	return []func(){nv.refreshFirewalls}
}
