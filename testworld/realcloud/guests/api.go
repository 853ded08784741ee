package guests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
)

// Spec is what Nova's driver sends to spawn a guest.
type Spec struct {
	UUID      string `json:"uuid"`
	Name      string `json:"name"`
	Hostname  string `json:"hostname"`
	ProjectID string `json:"project_id"`
	FixedIP   string `json:"fixed_ip"`
	MAC       string `json:"mac"`
	// Tap names the host end of the guest's interface ("tap" and the
	// port id's start, as Nova names it), plugged into Bridge, the bridge
	// Nova's VIF names (Neutron's Linux bridge agent's brq<network id>,
	// where it applies the port's security groups), as libvirt plugs a
	// tap. With DHCP the guest takes its address from the network's DHCP
	// server.
	Tap    string `json:"tap"`
	Bridge string `json:"bridge"`
	DHCP   bool   `json:"dhcp"`
	// Image is the image file Nova downloaded from Glance, DiskFormat its
	// format and Checksum its checksum (the unpack cache's key).
	Image      string `json:"image"`
	DiskFormat string `json:"disk_format"`
	Checksum   string `json:"checksum"`
	// Volume is the file of the Cinder volume the server boots from, its
	// Image too ("" for a server from an image): the guest's disk is
	// written back into it when the guest stops and when it is destroyed
	// (volume.go).
	Volume string `json:"volume"`
	// ConfigDrive is the config drive Nova built for the server (an ISO
	// 9660 image), "" without one.
	ConfigDrive string `json:"config_drive"`
}

// action is a power operation; Timeout bounds a clean shutdown (seconds,
// 0: power off at once), as Nova's power_off passes it.
type action struct {
	Action  string `json:"action"` // stop, start, reboot, reboot_hard
	Timeout int    `json:"timeout"`
}

type export struct {
	Path       string `json:"path"`
	DiskFormat string `json:"disk_format"`
}

func (h *Host) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /servers", h.spawn)
	mux.HandleFunc("GET /servers", h.list)
	mux.HandleFunc("GET /servers/{uuid}", h.show)
	mux.HandleFunc("DELETE /servers/{uuid}", h.destroy)
	mux.HandleFunc("POST /servers/{uuid}/action", h.act)
	mux.HandleFunc("GET /servers/{uuid}/console", h.console)
	mux.HandleFunc("POST /servers/{uuid}/export", h.export)
	return mux
}

func answer(w http.ResponseWriter, v any, err error) {
	switch {
	case errors.Is(err, errNoGuest):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, errBooting):
		http.Error(w, err.Error(), http.StatusConflict)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

func (h *Host) spawn(w http.ResponseWriter, r *http.Request) {
	var s Spec
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil || s.UUID == "" || s.FixedIP == "" || s.Image == "" || s.Bridge == "" {
		http.Error(w, fmt.Sprintf("a spawn needs uuid, fixed_ip, image and bridge (%v)", err), http.StatusBadRequest)
		return
	}
	answer(w, map[string]string{"power": "running"}, h.boot(s))
}

func (h *Host) boot(s Spec) error {
	h.mu.Lock()
	if _, ok := h.servers[s.UUID]; ok {
		h.mu.Unlock()
		return fmt.Errorf("guest %s exists", s.UUID)
	}
	g := &guest{spec: s}
	h.servers[s.UUID] = g
	h.mu.Unlock()
	disk, err := h.vms.UnpackDisk(s.Image, s.DiskFormat, s.Checksum)
	if err == nil {
		g.disk = disk
		var m *vm.Machine
		m, err = h.vms.Boot(vm.MachineSpec{
			ID: s.UUID, Name: s.Name, Hostname: s.Hostname, Disk: disk, FixedIP: s.FixedIP, MAC: s.MAC,
			Tap: s.Tap, Bridge: s.Bridge, DHCP: s.DHCP, ConfigDrive: s.ConfigDrive,
		}, nil)
		h.mu.Lock() // list reads it while the boot runs
		g.machine = m
		h.mu.Unlock()
	}
	if err != nil {
		h.forget(g)
		return err
	}
	h.opts.Logf("guests: %s (%s) booted on %s", s.UUID, s.Name, s.FixedIP)
	return nil
}

// forget removes a guest and its disk.
func (h *Host) forget(g *guest) {
	h.mu.Lock()
	delete(h.servers, g.spec.UUID)
	h.mu.Unlock()
	if g.disk != "" {
		if err := h.vms.DeleteDisk(g.disk); err != nil {
			h.opts.Logf("guests: deleting the disk of %s: %v", g.spec.UUID, err)
		}
	}
}

// list is every guest the host holds and the processes running in its
// VMs (all of them, a guest's or not): a test counting what a build left
// sees a VM whose guest record is gone but whose processes still run.
func (h *Host) list(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	l := Listing{Servers: []Listed{}}
	for _, g := range h.servers {
		l.Servers = append(l.Servers, Listed{UUID: g.spec.UUID, Name: g.spec.Name, Power: g.power()})
	}
	h.mu.Unlock()
	l.Processes = len(h.vms.PIDs())
	answer(w, l, nil)
}

// power is the guest's power state, "none" while its machine boots (no
// power state Nova's driver knows); the caller holds h.mu.
func (g *guest) power() string {
	if g.machine == nil {
		return "none"
	}
	return g.machine.PowerState().String()
}

func (h *Host) show(w http.ResponseWriter, r *http.Request) {
	g, err := h.get(r.PathValue("uuid"))
	if err != nil {
		answer(w, nil, err)
		return
	}
	h.mu.Lock()
	power := g.power()
	h.mu.Unlock()
	answer(w, map[string]string{"power": power}, nil)
}

func (h *Host) destroy(w http.ResponseWriter, r *http.Request) {
	g, m, err := h.machineOf(r.PathValue("uuid"))
	if err == nil {
		err = m.Destroy()
		if err == nil || errors.Is(err, vm.ErrDestroyed) {
			// a destroy goes through, as a hypervisor's does; a volume
			// without the guest's writes shows in what its upload holds
			if werr := h.writeBack(g); werr != nil {
				h.opts.Logf("%v", werr)
			}
			h.forget(g)
			err = nil
		}
	}
	answer(w, map[string]string{}, err)
}

func (h *Host) act(w http.ResponseWriter, r *http.Request) {
	g, m, err := h.machineOf(r.PathValue("uuid"))
	var a action
	if err == nil {
		err = json.NewDecoder(r.Body).Decode(&a)
	}
	if err != nil {
		answer(w, nil, err)
		return
	}
	limit := 2 * time.Minute // a boot
	if a.Action == "stop" {
		limit = time.Duration(a.Timeout) * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	switch a.Action {
	case "stop":
		err = m.Stop(ctx) // past the timeout the machine is killed
		if err == nil {
			err = h.writeBack(g)
		}
	case "start":
		err = m.Start(ctx)
	case "reboot":
		err = m.Reboot(ctx, false)
	case "reboot_hard":
		err = m.Reboot(ctx, true)
	default:
		http.Error(w, "unknown action "+a.Action, http.StatusBadRequest)
		return
	}
	answer(w, map[string]string{"power": m.PowerState().String()}, err)
}

func (h *Host) console(w http.ResponseWriter, r *http.Request) {
	_, m, err := h.machineOf(r.PathValue("uuid"))
	if err != nil {
		answer(w, nil, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(m.ConsoleLog()))
}

// export writes the guest's disk as an image file (raw ext4, or qcow2)
// for a snapshot; Nova's driver uploads it to Glance.
func (h *Host) export(w http.ResponseWriter, r *http.Request) {
	g, err := h.get(r.PathValue("uuid"))
	var e export
	if err == nil {
		err = json.NewDecoder(r.Body).Decode(&e)
	}
	if err != nil {
		answer(w, nil, err)
		return
	}
	size, err := h.vms.ExportDisk(g.disk, e.DiskFormat, e.Path)
	answer(w, map[string]int64{"virtual_size": size}, err)
}
