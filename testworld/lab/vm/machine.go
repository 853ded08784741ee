package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// PowerState is a machine's power state.
type PowerState int

const (
	PowerRunning PowerState = iota
	PowerShutdown
	PowerCrashed
)

func (s PowerState) String() string {
	switch s {
	case PowerRunning:
		return "running"
	case PowerShutdown:
		return "shutdown"
	case PowerCrashed:
		return "crashed"
	}
	return "PowerState(" + strconv.Itoa(int(s)) + ")"
}

// MachineSpec describes a machine to boot.
type MachineSpec struct {
	ID, Name, Hostname string
	Disk               string // boot disk (used in place, not copied)
	FixedIP            string // on the lab network
	MAC                string // eth0's; "" derives one from FixedIP
	// Tap names the host end of eth0's veth, as a hypervisor names the tap
	// it plugs ("": the manager's own name). With DHCP the host gives eth0
	// no address: the guest's DHCP client takes it from the network's server.
	Tap  string
	DHCP bool
	// Bridge is the bridge the tap goes into ("": the manager's). It is
	// made when missing, as a hypervisor's VIF plugging makes the bridge
	// its port names, and left in place when the machine goes.
	Bridge string
	// ConfigDrive is a config drive image (ISO 9660, as Nova builds one)
	// whose files the VM finds at each boot as it finds the manager's
	// (Metadata.ConfigDrive); "": none, or the manager's.
	ConfigDrive string
	// Firewall filters the port on the host (its security groups), from
	// before the port comes up; nil: unfiltered (SetFirewall changes it).
	Firewall *Firewall
	SSHDelay time.Duration // fault injection: sshd starts this long after boot
}

// ErrDestroyed is returned by operations on a destroyed machine.
var ErrDestroyed = errors.New("vm: machine destroyed")

// How the VM's systemd is asked to power off or reboot (systemd(1):
// SIGRTMIN+4 starts poweroff.target, SIGRTMIN+5 reboot.target; glibc's
// SIGRTMIN is 34), and how its end tells which it was: reboot(2) in a PID
// namespace kills the namespace's init with SIGHUP (restart) or SIGINT
// (power off, halt), and unshare dies of the same signal.
const (
	sigPoweroff = syscall.Signal(34 + 4)
	sigReboot   = syscall.Signal(34 + 5)
	exitReboot  = syscall.SIGHUP
	exitHalt    = syscall.SIGINT
)

// guestRebootDelay is how long a guest-initiated reboot stays down.
const guestRebootDelay = 300 * time.Millisecond

// Machine is one VM.
type Machine struct {
	m       *Manager
	spec    MachineSpec
	onPower func(PowerState)
	seq     int
	ns      string
	veth    string // host end
	mac     string
	dir     string
	console string
	host    string

	opMu sync.Mutex // serialises power operations (API and guest-initiated)

	mu        sync.Mutex
	state     PowerState
	proc      *bootProc
	bootCount int
	destroyed bool
	fips      []string
	fw        *Firewall // applied on the host (firewall.go)

	evMu     sync.Mutex
	evCond   *sync.Cond
	events   []PowerState
	evClosed bool
}

type bootProc struct {
	cmd      *exec.Cmd
	cgroup   string // the boot's cgroup2 directory
	initPid  int
	done     chan struct{}
	exitCode int // -1: killed by a signal
	signal   syscall.Signal
}

// Boot creates the machine's network namespace and boots it from spec.Disk.
// It returns once the VM's PID 1 runs. onPower (may be nil) is called, in
// order and from a separate goroutine, on every power state change: PowerRunning
// after every boot (so also after each reboot cycle), PowerShutdown on power
// off (guest-initiated or Stop), PowerCrashed when the VM dies unexpectedly.
func (m *Manager) Boot(spec MachineSpec, onPower func(PowerState)) (*Machine, error) {
	if err := m.checkDisk(spec.Disk); err != nil {
		return nil, err
	}
	ip := net.ParseIP(spec.FixedIP).To4()
	if ip == nil || !m.subnet.Contains(ip) || ip.Equal(m.gw) {
		return nil, fmt.Errorf("vm: fixed IP %q is not a usable address in %s", spec.FixedIP, m.subnet)
	}
	host := sanitizeHostname(spec.Hostname)
	if host == "" {
		host = sanitizeHostname(spec.Name)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("vm: manager closed")
	}
	for other := range m.machines {
		if other.spec.Disk == spec.Disk {
			m.mu.Unlock()
			return nil, fmt.Errorf("vm: disk %s already in use by machine %s", spec.Disk, other.spec.ID)
		}
		if other.spec.FixedIP == spec.FixedIP {
			m.mu.Unlock()
			return nil, fmt.Errorf("vm: fixed IP %s already in use by machine %s", spec.FixedIP, other.spec.ID)
		}
	}
	m.seq++
	seq := m.seq
	vm := &Machine{
		m:       m,
		spec:    spec,
		onPower: onPower,
		seq:     seq,
		ns:      fmt.Sprintf("fatlab-%s-%d", m.tag, seq),
		veth:    fmt.Sprintf("fl%s%04x", m.tag, seq&0xffff),
		mac:     spec.MAC,
		dir:     filepath.Join(m.stateDir, "machines", strconv.Itoa(seq)),
		state:   PowerShutdown,
		fw:      spec.Firewall,
	}
	if host == "" {
		host = fmt.Sprintf("vm-%d", seq)
	}
	if spec.Tap != "" {
		vm.veth = spec.Tap
	}
	if vm.mac == "" {
		vm.mac = fmt.Sprintf("02:fa:%02x:%02x:%02x:%02x", ip[0], ip[1], ip[2], ip[3])
	}
	vm.host = host
	vm.console = filepath.Join(vm.dir, "console.log")
	vm.evCond = sync.NewCond(&vm.evMu)
	m.machines[vm] = struct{}{}
	m.mu.Unlock()

	fail := func(err error) (*Machine, error) {
		vm.teardownNet()
		vm.closeEvents()
		m.mu.Lock()
		delete(m.machines, vm)
		m.mu.Unlock()
		return nil, err
	}
	if err := os.MkdirAll(vm.dir, 0o755); err != nil {
		return fail(err)
	}
	go vm.deliverEvents()
	if err := vm.setupNet(); err != nil {
		return fail(err)
	}
	vm.opMu.Lock()
	err := vm.boot()
	vm.opMu.Unlock()
	if err != nil {
		return fail(err)
	}
	return vm, nil
}

func sanitizeHostname(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		case r == '_' || r == ' ':
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 63 {
		out = strings.Trim(out[:63], "-.")
	}
	return out
}

// ---- network ----

func (vm *Machine) setupNet() error {
	m := vm.m
	br := m.opts.Network.Bridge
	if vm.spec.Bridge != "" {
		br = vm.spec.Bridge
		if err := ensureBridge(br); err != nil {
			return err
		}
	}
	m.regUpdate(func(r *registryRecord) { r.Netns[vm.ns] = true; r.Veths[vm.veth] = true })
	ns := func(args ...string) []string { return append([]string{"ip", "-n", vm.ns}, args...) }
	steps := [][]string{
		{"ip", "netns", "add", vm.ns},
		{"ip", "link", "add", vm.veth, "type", "veth", "peer", "name", "eth0", "netns", vm.ns},
		{"ip", "link", "set", vm.veth, "master", br},
		ns("link", "set", "lo", "up"),
		ns("link", "set", "eth0", "address", vm.mac),
		ns("link", "set", "eth0", "up"),
	}
	if !vm.spec.DHCP {
		steps = append(steps, ns("addr", "add", fmt.Sprintf("%s/%d", vm.spec.FixedIP, m.prefixLen), "dev", "eth0"),
			ns("route", "add", "default", "via", m.gw.String(), "src", vm.spec.FixedIP))
	}
	if !m.opts.NetworkMetadata {
		steps = append(steps, []string{"ip", "netns", "exec", vm.ns, "iptables", "-w", "5", "-t", "nat", "-A", "OUTPUT",
			"-d", metadataIP + "/32", "-p", "tcp", "--dport", "80", "-j", "DNAT", "--to-destination", m.mdAddr})
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	if err := vm.applyFirewall(); err != nil {
		return err
	}
	if err := run("ip", "link", "set", vm.veth, "up"); err != nil {
		return err
	}
	vm.mu.Lock()
	fips := append([]string(nil), vm.fips...)
	vm.mu.Unlock()
	for _, f := range fips {
		if err := vm.addFloating(f); err != nil {
			return err
		}
	}
	return nil
}

// ensureBridge makes the bridge br, up, unless it exists.
func ensureBridge(br string) error {
	if _, err := net.InterfaceByName(br); err == nil {
		return nil
	}
	if out, err := exec.Command("ip", "link", "add", "name", br, "type", "bridge").CombinedOutput(); err != nil &&
		!strings.Contains(string(out), "File exists") { // made meanwhile, by the network's agent
		return fmt.Errorf("ip link add %s: %v: %s", br, err, out)
	}
	return run("ip", "link", "set", br, "up")
}

// teardownNet removes the veth and the namespace (the namespace's iptables
// rules go with it). Floating IP host routes are left alone.
func (vm *Machine) teardownNet() {
	vm.mu.Lock()
	fw := vm.fw
	vm.mu.Unlock()
	if fw != nil {
		vm.removeFirewall()
	}
	if _, err := net.InterfaceByName(vm.veth); err == nil {
		_ = run("ip", "link", "del", vm.veth)
	}
	if _, err := os.Stat(filepath.Join("/run/netns", vm.ns)); err == nil {
		if err := run("ip", "netns", "del", vm.ns); err != nil {
			vm.m.logf("vm %s: %v", vm.spec.ID, err)
			return
		}
	}
	vm.m.regUpdate(func(r *registryRecord) { delete(r.Netns, vm.ns); delete(r.Veths, vm.veth) })
}

func (vm *Machine) addFloating(ip string) error {
	if err := run("ip", "-n", vm.ns, "addr", "replace", ip+"/32", "dev", "eth0"); err != nil {
		return err
	}
	args := []string{ip + "/32", "via", vm.spec.FixedIP, "dev", vm.m.opts.Network.Bridge}
	vm.m.regUpdate(func(r *registryRecord) { r.Routes[ip] = args })
	return run("ip", append([]string{"route", "replace"}, args...)...)
}

// refreshFirewall rewrites the filter for the machine's addresses after
// a floating IP came or went (opMu held).
func (vm *Machine) refreshFirewall() error {
	vm.mu.Lock()
	fw := vm.fw
	vm.mu.Unlock()
	if fw == nil {
		return nil
	}
	return vm.applyFirewall()
}

// AddFloatingIP makes the machine reachable from the host at ip: a host route
// via the fixed IP and the address inside the VM.
func (vm *Machine) AddFloatingIP(ip string) error {
	p := net.ParseIP(ip).To4()
	if p == nil {
		return fmt.Errorf("vm: bad floating IP %q", ip)
	}
	if vm.m.floating != nil && !vm.m.floating.Contains(p) {
		return fmt.Errorf("vm: floating IP %s not in %s", ip, vm.m.floating)
	}
	ip = p.String()
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	vm.mu.Lock()
	if vm.destroyed {
		vm.mu.Unlock()
		return ErrDestroyed
	}
	for _, f := range vm.fips {
		if f == ip {
			vm.mu.Unlock()
			return nil
		}
	}
	vm.mu.Unlock()
	if err := vm.addFloating(ip); err != nil {
		return err
	}
	vm.mu.Lock()
	vm.fips = append(vm.fips, ip)
	vm.mu.Unlock()
	return vm.refreshFirewall()
}

// RemoveFloatingIP undoes AddFloatingIP.
func (vm *Machine) RemoveFloatingIP(ip string) error {
	if p := net.ParseIP(ip).To4(); p != nil {
		ip = p.String()
	}
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	vm.mu.Lock()
	if vm.destroyed {
		vm.mu.Unlock()
		return ErrDestroyed
	}
	found := false
	for i, f := range vm.fips {
		if f == ip {
			vm.fips = append(vm.fips[:i], vm.fips[i+1:]...)
			found = true
			break
		}
	}
	vm.mu.Unlock()
	if !found {
		return fmt.Errorf("vm: floating IP %s not on machine %s", ip, vm.spec.ID)
	}
	vm.delFloatingRoute(ip)
	_ = run("ip", "-n", vm.ns, "addr", "del", ip+"/32", "dev", "eth0")
	return vm.refreshFirewall()
}

func (vm *Machine) delFloatingRoute(ip string) {
	_ = run("ip", "route", "del", ip+"/32", "via", vm.spec.FixedIP, "dev", vm.m.opts.Network.Bridge)
	vm.m.regUpdate(func(r *registryRecord) { delete(r.Routes, ip) })
}

// ---- power ----

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// boot starts the VM (opMu held).
func (vm *Machine) boot() error {
	vm.mu.Lock()
	if vm.destroyed {
		vm.mu.Unlock()
		return ErrDestroyed
	}
	vm.bootCount++
	n := vm.bootCount
	vm.mu.Unlock()

	bootDir := filepath.Join(vm.dir, "boot")
	if err := os.MkdirAll(bootDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(bootDir, "boot_id"), []byte(newUUID()+"\n"), 0o444); err != nil {
		// 0444 file from a previous boot: replace it.
		os.Remove(filepath.Join(bootDir, "boot_id"))
		if err := os.WriteFile(filepath.Join(bootDir, "boot_id"), []byte(newUUID()+"\n"), 0o444); err != nil {
			return err
		}
	}
	env := fmt.Sprintf("FATLAB_BOOT=%d\nFATLAB_UUID=%s\n", n, shellQuote(vm.spec.ID))
	if err := os.WriteFile(filepath.Join(bootDir, "env"), []byte(env), 0o644); err != nil {
		return err
	}
	if err := vm.writeRuntimeConfig(filepath.Join(bootDir, "run")); err != nil {
		return err
	}
	if err := vm.writeConfigDrive(filepath.Join(bootDir, "config-drive")); err != nil {
		return err
	}
	if err := resetWork(vm.spec.Disk); err != nil {
		return err
	}
	if err := run("ip", "link", "set", vm.veth, "up"); err != nil {
		return err
	}
	con, err := os.OpenFile(vm.console, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(con, "=== fatlab: boot %d of %s at %s ===\n", n, vm.spec.ID, time.Now().UTC().Format(time.RFC3339Nano))
	tty, fifo, err := consolePTY(con)
	if err != nil {
		con.Close()
		return err
	}
	cg, err := vm.m.newCgroup(fmt.Sprintf("vm%d-%d", vm.seq, n))
	if err != nil {
		fifo.Close()
		con.Close()
		return err
	}
	cmd := exec.Command(vm.m.bootSh, "outer", vm.ns, cg, vm.m.rootfs, vm.spec.Disk, bootDir, tty)
	cmd.Stdout = con
	cmd.Stderr = con
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG=C.UTF-8", "HOME=/root", "TERM=dumb"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = startCmd(cmd)
	con.Close()
	if err != nil {
		fifo.Close()
		vm.m.removeCgroup(cg)
		return err
	}
	p := &bootProc{cmd: cmd, cgroup: cg, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.exitCode = 0
		if err != nil {
			p.exitCode = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					p.signal = ws.Signal()
				} else if ee.Exited() {
					p.exitCode = ee.ExitCode()
				}
			}
		}
		fifo.Close()
		vm.m.removeCgroup(cg)
		close(p.done)
		vm.handleExit(p)
	}()
	// Wait until the VM's PID 1 (the init, a child of unshare) runs.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if pid := initPid(cmd.Process.Pid); pid > 0 {
			p.initPid = pid
			break
		}
		select {
		case <-p.done:
			return fmt.Errorf("vm: %s: boot failed (exit %d, signal %v): %s", vm.spec.ID, p.exitCode, p.signal, logtail.Chars(vm.ConsoleLog(), 800))
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-p.done
			return fmt.Errorf("vm: %s: init did not start: %s", vm.spec.ID, logtail.Chars(vm.ConsoleLog(), 800))
		}
	}
	vm.mu.Lock()
	vm.proc = p
	vm.state = PowerRunning
	vm.mu.Unlock()
	vm.m.logf("vm %s: boot %d: init pid %d", vm.spec.ID, n, p.initPid)
	vm.emit(PowerRunning)
	return nil
}

// Processes are started from one goroutine locked to its OS thread for the
// life of the process: Pdeathsig fires when the *thread* that forked the
// child exits, and Go may retire threads (e.g. ones other code locked).
var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawnCh {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := spawnReq{cmd: cmd, err: make(chan error, 1)}
	spawnCh <- r
	return <-r.err
}

// initPid returns the host PID of the VM init if unshare's child runs it yet.
func initPid(unsharePid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", unsharePid, unsharePid))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.HasPrefix(string(cl), "/usr/lib/systemd/systemd\x00") && catchesPowerSignals(pid) {
			return pid
		}
	}
	return 0
}

// catchesPowerSignals reports whether the process takes the power signals
// yet: a PID namespace's init drops signals it neither handles nor blocks,
// and systemd blocks them to read them from a signalfd.
func catchesPowerSignals(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	want := uint64(1)<<(int(sigPoweroff)-1) | uint64(1)<<(int(sigReboot)-1)
	var got uint64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "SigCgt" && k != "SigBlk") {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			return false
		}
		got |= mask
	}
	return got&want == want
}

// handleExit deals with a boot process that ended without a power operation
// of ours claiming it: guest reboot, guest poweroff or crash.
func (vm *Machine) handleExit(p *bootProc) {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	vm.mu.Lock()
	if vm.proc != p || vm.destroyed {
		vm.mu.Unlock()
		return
	}
	vm.proc = nil
	vm.mu.Unlock()
	switch p.signal {
	case exitReboot:
		vm.m.logf("vm %s: guest reboot", vm.spec.ID)
		time.Sleep(guestRebootDelay)
		if err := vm.boot(); err != nil {
			vm.m.logf("vm %s: reboot failed: %v", vm.spec.ID, err)
			vm.setState(PowerCrashed)
		}
	case exitHalt:
		vm.m.logf("vm %s: guest power off", vm.spec.ID)
		vm.setState(PowerShutdown)
	default:
		vm.m.logf("vm %s: crashed (exit %d, signal %v)", vm.spec.ID, p.exitCode, p.signal)
		vm.setState(PowerCrashed)
	}
}

func (vm *Machine) setState(s PowerState) {
	vm.mu.Lock()
	vm.state = s
	vm.mu.Unlock()
	vm.emit(s)
}

// take claims the running boot process, if any (opMu held).
func (vm *Machine) take() (*bootProc, error) {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.destroyed {
		return nil, ErrDestroyed
	}
	p := vm.proc
	vm.proc = nil
	return p, nil
}

// kill stops every process of the VM at once (its cgroup frozen and
// killed but for the boot command, which reaps PID 1; cgkill.go), SIGKILLs
// PID 1 in case that failed, and waits for the boot process to end.
func (vm *Machine) kill(p *bootProc) {
	select {
	case <-p.done:
		return
	default:
	}
	if err := killCgroup(p.cgroup, p.cmd.Process.Pid, 5*time.Second); err != nil {
		vm.m.logf("vm %s: %v", vm.spec.ID, err)
	}
	if p.initPid > 0 {
		_ = syscall.Kill(p.initPid, syscall.SIGKILL)
	} else {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// shutdownGuest asks PID 1 to reboot/power off and waits until it is gone,
// killing it when ctx ends (or after a minute).
func (vm *Machine) shutdownGuest(ctx context.Context, p *bootProc, sig syscall.Signal) {
	if p.initPid > 0 {
		_ = syscall.Kill(p.initPid, sig)
	}
	t := time.NewTimer(time.Minute)
	defer t.Stop()
	resend := time.NewTicker(time.Second) // in case the init missed it
	defer resend.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-ctx.Done():
			vm.kill(p)
			return
		case <-t.C:
			vm.kill(p)
			return
		case <-resend.C:
			if p.initPid > 0 {
				_ = syscall.Kill(p.initPid, sig)
			}
		}
	}
}

// Stop powers the machine off gracefully (like ACPI power button): the guest
// init stops everything; when ctx ends first the machine is killed. The
// result is PowerShutdown either way.
func (vm *Machine) Stop(ctx context.Context) error {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	p, err := vm.take()
	if err != nil {
		return err
	}
	if p == nil {
		if vm.PowerState() != PowerShutdown {
			vm.setState(PowerShutdown)
		}
		return nil
	}
	vm.shutdownGuest(ctx, p, sigPoweroff)
	vm.setState(PowerShutdown)
	return nil
}

// Start boots a stopped (or crashed) machine; a no-op if it runs.
func (vm *Machine) Start(ctx context.Context) error {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	vm.mu.Lock()
	running, destroyed := vm.proc != nil, vm.destroyed
	vm.mu.Unlock()
	if destroyed {
		return ErrDestroyed
	}
	if running {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return vm.boot()
}

// Reboot reboots the machine: soft asks the guest init, hard kills it. The
// machine runs again when Reboot returns.
func (vm *Machine) Reboot(ctx context.Context, hard bool) error {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	p, err := vm.take()
	if err != nil {
		return err
	}
	if p != nil {
		if hard {
			vm.kill(p)
		} else {
			vm.shutdownGuest(ctx, p, sigReboot)
		}
	}
	return vm.boot()
}

// HardReset is fault injection: the host end of the veth goes down, the VM is
// SIGKILLed and its network namespace recreated (so no FIN or RST ever leaves
// it), then it boots again. Clients see a silent death; their next packet
// gets a RST from the new boot.
func (vm *Machine) HardReset() error {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	p, err := vm.take()
	if err != nil {
		return err
	}
	_ = run("ip", "link", "set", vm.veth, "down")
	if p != nil {
		vm.kill(p)
	}
	vm.teardownNet()
	if err := vm.setupNet(); err != nil {
		vm.setState(PowerCrashed)
		return err
	}
	return vm.boot()
}

// Destroy kills the machine and removes its network namespace, veth and
// routes. The disk stays.
func (vm *Machine) Destroy() error {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	vm.mu.Lock()
	if vm.destroyed {
		vm.mu.Unlock()
		return nil
	}
	p := vm.proc
	vm.proc = nil
	vm.destroyed = true
	fips := vm.fips
	vm.fips = nil
	wasRunning := vm.state == PowerRunning && p != nil
	vm.state = PowerShutdown
	vm.mu.Unlock()
	if p != nil {
		vm.kill(p)
	}
	for _, f := range fips {
		vm.delFloatingRoute(f)
	}
	vm.teardownNet()
	if wasRunning {
		vm.emit(PowerShutdown)
	}
	vm.closeEvents()
	vm.m.mu.Lock()
	delete(vm.m.machines, vm)
	vm.m.mu.Unlock()
	var errs []error
	if _, err := os.Stat(filepath.Join("/run/netns", vm.ns)); err == nil {
		errs = append(errs, fmt.Errorf("vm: netns %s still exists", vm.ns))
	}
	return errors.Join(errs...)
}

// PowerState reports the current power state.
func (vm *Machine) PowerState() PowerState {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.state
}

// BootCount is the number of boots so far.
func (vm *Machine) BootCount() int {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.bootCount
}

// ConsoleLog returns the init's output over all boots.
func (vm *Machine) ConsoleLog() string {
	b, _ := os.ReadFile(vm.console)
	return string(b)
}

// ID returns the spec's ID.
func (vm *Machine) ID() string { return vm.spec.ID }

// FixedIP returns the machine's fixed IP.
func (vm *Machine) FixedIP() string { return vm.spec.FixedIP }

// InitPID returns the host PID of the VM's PID 1 (0 when not running).
func (vm *Machine) InitPID() int {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.proc == nil {
		return 0
	}
	return vm.proc.initPid
}

// ---- ordered power callbacks ----

func (vm *Machine) emit(s PowerState) {
	vm.evMu.Lock()
	if !vm.evClosed {
		vm.events = append(vm.events, s)
		vm.evCond.Signal()
	}
	vm.evMu.Unlock()
}

func (vm *Machine) closeEvents() {
	vm.evMu.Lock()
	vm.evClosed = true
	vm.evCond.Broadcast()
	vm.evMu.Unlock()
}

func (vm *Machine) deliverEvents() {
	for {
		vm.evMu.Lock()
		for len(vm.events) == 0 && !vm.evClosed {
			vm.evCond.Wait()
		}
		if len(vm.events) == 0 {
			vm.evMu.Unlock()
			return
		}
		s := vm.events[0]
		vm.events = vm.events[1:]
		vm.evMu.Unlock()
		if vm.onPower != nil {
			vm.onPower(s)
		}
	}
}

func statOwner(fi os.FileInfo) ([2]int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]int{}, false
	}
	return [2]int{int(st.Uid), int(st.Gid)}, true
}
