package vm

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// ---- test fixtures ----

var (
	rpmOnce sync.Once
	rpmDir  string
	rpmList []string
	rpmErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if rpmDir != "" {
		os.RemoveAll(rpmDir)
	}
	os.Exit(code)
}

const rockyReleaseSpec = `%global debug_package %{nil}
Name: rocky-release
Version: 9.6
Release: 1.2.el9
Summary: Rocky Linux release files (fatlab test stand-in)
License: BSD-3-Clause
BuildArch: noarch
Provides: system-release = %{version}-%{release}
Provides: system-release(releasever) = 9
Provides: redhat-release = %{version}-%{release}
%description
Test stand-in for rocky-release.
%files
`

const kernelSpec = `%global debug_package %{nil}
Name: kernel
Version: 5.14.0
Release: 570.17.1.el9_6
Summary: The Linux kernel (fatlab test stand-in)
License: GPL-2.0-only
BuildArch: noarch
%description
Test stand-in for the kernel package.
%files
`

// testRPMs builds the stand-in RPMs once per test binary.
func testRPMs(t testing.TB) []string {
	t.Helper()
	rpmOnce.Do(func() {
		rpmDir, rpmErr = os.MkdirTemp("", "fatlab-vm-rpms-")
		if rpmErr != nil {
			return
		}
		for name, spec := range map[string]string{"rocky-release": rockyReleaseSpec, "kernel": kernelSpec} {
			sp := filepath.Join(rpmDir, name+".spec")
			if rpmErr = os.WriteFile(sp, []byte(spec), 0o644); rpmErr != nil {
				return
			}
			out, err := exec.Command("rpmbuild", "--define", "_topdir "+filepath.Join(rpmDir, "top"),
				"--define", "_build_id_links none", "-bb", sp).CombinedOutput()
			if err != nil {
				rpmErr = fmt.Errorf("rpmbuild %s: %v: %s", name, err, out)
				return
			}
		}
		rpmList, rpmErr = filepath.Glob(filepath.Join(rpmDir, "top/RPMS/noarch/*.rpm"))
		if rpmErr == nil && len(rpmList) != 2 {
			rpmErr = fmt.Errorf("expected 2 RPMs, got %v", rpmList)
		}
	})
	if rpmErr != nil {
		t.Fatal(rpmErr)
	}
	return rpmList
}

// testRootFS is the VM userland, built once into the cache the lab's tests
// share (labtest.CacheDir()/rootfs).
func testRootFS(t testing.TB) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	rootfs, err := BuildRootFS(filepath.Join(dir, "fatimage-lab", "rootfs"), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return rootfs
}

func requireRoot(t testing.TB) {
	t.Helper()
	needs.Root(t, "VMs (network namespaces, overlay mounts, bridges)")
	needs.Tools(t, "ip", "unshare", "iptables", "rpmbuild", "rpm", "/usr/sbin/sshd")
}

type lab struct {
	t      testing.TB
	m      *Manager
	base   string
	x      int // third octet: 10.213.x.0/24, 172.24.x.0/24
	bridge string
	mu     sync.Mutex
	md     map[string]*Metadata
	signer ssh.Signer
	pub    string
}

func randInt(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic(err)
	}
	return int(v.Int64())
}

func newSigner(t testing.TB) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
}

// freeOctet picks x so that neither 10.213.x.0/24 nor 172.24.x.0/24 is in
// use on the host.
func freeOctet(t testing.TB) int {
	out, _ := exec.Command("ip", "-4", "route", "show", "table", "all").CombinedOutput()
	addrs, _ := exec.Command("ip", "-4", "addr").CombinedOutput()
	all := string(out) + string(addrs)
	for i := 0; i < 100; i++ {
		x := 1 + randInt(250)
		if !strings.Contains(all, fmt.Sprintf("10.213.%d.", x)) && !strings.Contains(all, fmt.Sprintf("172.24.%d.", x)) {
			return x
		}
	}
	t.Fatal("no free test subnet")
	return 0
}

func newLab(t testing.TB) *lab {
	t.Helper()
	requireRoot(t)
	rpms := testRPMs(t)
	l := &lab{t: t, md: map[string]*Metadata{}, x: freeOctet(t)}
	l.signer, l.pub = newSigner(t)
	rootfs := testRootFS(t)
	var m *Manager
	var err error
	// a parallel test may hold the subnet drawn (netreserve.go): draw again
	for try := 0; try == 0 || (errors.Is(err, ErrNetworkInUse) && try < 10); try++ {
		if try > 0 {
			l.x = freeOctet(t)
		}
		// named by the subnet: a bounded set of names (and of their
		// lock files under /run/fatlab-net)
		l.bridge = fmt.Sprintf("fvt%03d", l.x)
		m, err = l.newManager(rootfs)
	}
	if err != nil {
		t.Fatal(err)
	}
	l.m = m
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	start := time.Now()
	l.base, err = BuildBaseImage(m, BaseImageOptions{
		RockyVersion: "9.6",
		RPMs:         rpms,
		GPGKeys:      map[string][]byte{"RPM-GPG-KEY-Rocky-9": []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----\nfake\n-----END PGP PUBLIC KEY BLOCK-----\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BuildBaseImage took %v", time.Since(start))
	return l
}

func (l *lab) newManager(rootfs string) (*Manager, error) {
	t := l.t
	return NewManager(ManagerOptions{
		StateDir: t.TempDir(),
		RootFS:   rootfs,
		Network: NetworkOptions{
			Bridge:       l.bridge,
			CIDR:         fmt.Sprintf("10.213.%d.0/24", l.x),
			Gateway:      fmt.Sprintf("10.213.%d.1", l.x),
			FloatingCIDR: fmt.Sprintf("172.24.%d.0/24", l.x),
		},
		Metadata: func(ip string) *Metadata {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.md[ip]
		},
		Logf: t.Logf,
	})
}

func (l *lab) ip(host int) string { return fmt.Sprintf("10.213.%d.%d", l.x, host) }

type powerLog struct {
	mu sync.Mutex
	ev []PowerState
	ch chan PowerState
}

func (p *powerLog) on(s PowerState) {
	p.mu.Lock()
	p.ev = append(p.ev, s)
	p.mu.Unlock()
	select {
	case p.ch <- s:
	default:
	}
}

func (p *powerLog) waitFor(t testing.TB, want PowerState, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case s := <-p.ch:
			if s == want {
				return
			}
		case <-timer.C:
			t.Fatalf("no onPower(%v) within %v", want, d)
		}
	}
}

// bootVM boots a clone of the base image (or disk, if given).
func (l *lab) bootVM(name string, host int, md *Metadata, disk string, delay time.Duration) (*Machine, *powerLog) {
	l.t.Helper()
	var err error
	if disk == "" {
		disk, err = l.m.CloneDisk(l.base)
		if err != nil {
			l.t.Fatal(err)
		}
	}
	ip := l.ip(host)
	if md == nil {
		md = &Metadata{UUID: newUUID(), Name: name, Hostname: name, PublicKeys: map[string]string{"testkey": l.pub}}
	}
	l.mu.Lock()
	l.md[ip] = md
	l.mu.Unlock()
	pl := &powerLog{ch: make(chan PowerState, 16)}
	vm, err := l.m.Boot(MachineSpec{ID: md.UUID, Name: name, Hostname: md.Hostname, Disk: disk, FixedIP: ip, SSHDelay: delay}, pl.on)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() {
		if l.t.Failed() {
			l.t.Logf("console of %s:\n%s", name, vm.ConsoleLog())
		}
	})
	return vm, pl
}

func sshConfig(s ssh.Signer) *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            "rocky",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
		Timeout:         2 * time.Second,
	}
}

// dial retries until an SSH connection with a working "sudo -n true" is up.
func dial(t testing.TB, ip string, s ssh.Signer, within time.Duration) *ssh.Client {
	t.Helper()
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		c, err := ssh.Dial("tcp", net.JoinHostPort(ip, "22"), sshConfig(s))
		if err == nil {
			if _, err = run1(c, "sudo -n true"); err == nil {
				t.Cleanup(func() { c.Close() })
				return c
			}
			c.Close()
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no SSH to %s within %v: %v", ip, within, last)
	return nil
}

// run1 runs a command; after 30 s it gives up and closes the connection.
func run1(c *ssh.Client, cmd string) (string, error) {
	type result struct {
		out string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := c.NewSession()
		if err != nil {
			ch <- result{"", err}
			return
		}
		defer s.Close()
		out, err := s.CombinedOutput(cmd)
		ch <- result{string(out), err}
	}()
	select {
	case r := <-ch:
		return r.out, r.err
	case <-time.After(30 * time.Second):
		c.Close()
		return "", fmt.Errorf("%q: timed out", cmd)
	}
}

func mustRun(t testing.TB, c *ssh.Client, cmd string) string {
	t.Helper()
	out, err := run1(c, cmd)
	if err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, out)
	}
	return strings.TrimSpace(out)
}

// pid1Start is the start time of the VM's PID 1 in clock ticks since host boot.
func pid1Start(t testing.TB, c *ssh.Client) int64 {
	t.Helper()
	stat := mustRun(t, c, "cat /proc/1/stat")
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	v, err := strconv.ParseInt(f[19], 10, 64) // field 22 overall
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sshWithin bounds boot -> SSH: systemd and cloud-init take a few seconds,
// more on a loaded machine.
const sshWithin = 90 * time.Second

// ---- tests ----

func TestBootSSHAndImage(t *testing.T) {
	l := newLab(t)
	start := time.Now()
	vm, _ := l.bootVM("vm-a", 10, nil, "", 0)
	booted := time.Since(start)
	c := dial(t, l.ip(10), l.signer, sshWithin)
	lat := time.Since(start)
	t.Logf("boot->first successful 'sudo -n true' over SSH: %v (Boot returned after %v)", lat, booted)
	if lat > 30*time.Second {
		t.Errorf("boot->SSH took %v, want < 30s", lat)
	}
	if vm.PowerState() != PowerRunning || vm.BootCount() != 1 {
		t.Errorf("state %v bootcount %d", vm.PowerState(), vm.BootCount())
	}
	// Runs tells this manager's VM processes from the host's own
	vm.mu.Lock()
	initPid := vm.proc.initPid
	vm.mu.Unlock()
	if !l.m.Runs(initPid) || l.m.Runs(os.Getpid()) {
		t.Errorf("Runs: the VM's init (pid %d) %v, the test process %v", initPid, l.m.Runs(initPid), l.m.Runs(os.Getpid()))
	}
	if got := mustRun(t, c, "id -un; sudo -n id -u"); got != "rocky\n0" {
		t.Errorf("id: %q", got)
	}
	if got := mustRun(t, c, "hostname"); got != "vm-a" {
		t.Errorf("hostname %q", got)
	}
	osr := mustRun(t, c, "cat /etc/os-release")
	for _, want := range []string{`ID="rocky"`, `VERSION_ID="9.6"`, `ID_LIKE="rhel centos fedora"`, `PLATFORM_ID="platform:el9"`, "Blue Onyx"} {
		if !strings.Contains(osr, want) {
			t.Errorf("os-release lacks %s:\n%s", want, osr)
		}
	}
	if got := mustRun(t, c, "cat /etc/redhat-release /etc/system-release /etc/rocky-release"); strings.Count(got, "Rocky Linux release 9.6 (Blue Onyx)") != 3 {
		t.Errorf("release files: %q", got)
	}
	if got := mustRun(t, c, "rpm -q rocky-release kernel"); !strings.Contains(got, "rocky-release-9.6-1.2.el9.noarch") || !strings.Contains(got, "kernel-5.14.0") {
		t.Errorf("rpm -q: %q", got)
	}
	if got := mustRun(t, c, "dnf --version"); !regexpDigits(got) {
		t.Errorf("dnf --version: %q", got)
	}
	rv := mustRun(t, c, `/usr/bin/python3 -c 'import dnf; b = dnf.Base(); print(b.conf.substitutions["releasever"])'`)
	if lines := strings.Split(rv, "\n"); lines[len(lines)-1] != "9" {
		t.Errorf("releasever: %q", rv)
	}
	if got := mustRun(t, c, "grep -c '^\\[' /etc/yum.repos.d/rocky.repo /etc/yum.repos.d/rocky-extras.repo; grep -A4 '^\\[crb\\]' /etc/yum.repos.d/rocky.repo"); !strings.Contains(got, "mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=CRB-$releasever$rltype") {
		t.Errorf("repos: %s", got)
	}
	if got := mustRun(t, c, "grep ^SELINUX= /etc/selinux/config; cat /etc/dnf/plugins/local.conf; rpm --eval %_dbpath"); !strings.Contains(got, "SELINUX=enforcing") || !strings.Contains(got, "enabled = false") || !strings.HasSuffix(got, "/var/lib/rpm") {
		t.Errorf("config: %s", got)
	}
	if got := mustRun(t, c, "sudo -n test -f /var/lib/ansible-init.done && echo yes"); got != "yes" {
		t.Errorf("ansible-init sentinel missing: %q", got)
	}
	hostBootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if got := mustRun(t, c, "cat /proc/sys/kernel/random/boot_id"); got == strings.TrimSpace(string(hostBootID)) || len(got) != 36 {
		t.Errorf("VM boot_id %q vs host %q", got, hostBootID)
	}
	if got := mustRun(t, c, "cat /proc/1/cmdline | tr '\\0' ' '"); !strings.HasPrefix(got, "/usr/lib/systemd/systemd ") {
		t.Errorf("pid 1: %q", got)
	}
	// systemd booted the VM fully, with no failed unit, in a container it
	// recognises; cloud-init ran to the end with the OpenStack data source.
	if got, rc := runRC(t, c, "systemctl is-system-running --wait"); got != "running" || rc != 0 {
		t.Errorf("is-system-running: %q (%d); failed units:\n%s", got, rc, mustRun(t, c, "systemctl --failed --no-legend; true"))
	}
	t.Logf("systemd-analyze:\n%s", mustRun(t, c, "systemd-analyze; systemd-analyze blame --no-pager | head -8; true"))
	if got := mustRun(t, c, "systemd-detect-virt --container; cat /etc/machine-id"); got != "container-other\n"+strings.ReplaceAll(vm.spec.ID, "-", "") {
		t.Errorf("virt / machine-id: %q (want the instance UUID, as systemd takes it from a VM's SMBIOS)", got)
	}
	if got := mustRun(t, c, "cloud-init status --long; sudo -n cat /run/cloud-init/result.json"); !strings.Contains(got, "status: done") || !strings.Contains(got, "DataSourceOpenStack") {
		t.Errorf("cloud-init status:\n%s", got)
	}
	if got := mustRun(t, c, "cat /var/lib/cloud/data/instance-id; sudo -n grep -c 'Cloud-init v' /var/log/cloud-init.log"); !strings.HasPrefix(got, vm.spec.ID+"\n") {
		t.Errorf("cloud-init instance/log: %q", got)
	}
	// journald keeps the journal on the disk.
	if got := mustRun(t, c, "sudo -n ls /var/log/journal/$(cat /etc/machine-id)/"); !strings.Contains(got, "system.journal") {
		t.Errorf("no persistent journal: %q", got)
	}
	if got := mustRun(t, c, "sudo -n journalctl -b -u ssh.service --no-pager -q"); !strings.Contains(got, "Server listening") {
		t.Errorf("journal of ssh.service: %q", got)
	}
	// ssh keys: VM-specific host key made by cloud-init, not the host's.
	hostKey, _ := os.ReadFile("/etc/ssh/ssh_host_ed25519_key.pub")
	if got := mustRun(t, c, "cat /etc/ssh/ssh_host_ed25519_key.pub"); len(hostKey) > 0 && strings.Fields(got)[1] == strings.Fields(string(hostKey))[1] {
		t.Errorf("VM shares the host's host key")
	}
	// The VM is a cgroup tree of its own: systemd's slices, not the host's.
	if got := mustRun(t, c, "cat /proc/self/cgroup; ls /sys/fs/cgroup"); !strings.Contains(got, "0::/user.slice/") && !strings.Contains(got, "0::/system.slice/") || !strings.Contains(got, "init.scope") {
		t.Errorf("cgroups in the VM:\n%s", got)
	}
	if mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", vm.InitPID())); err != nil || strings.Contains(string(mi), "/run/netns/") {
		t.Errorf("VM mount namespace holds /run/netns mounts (err %v)", err)
	}
	if n, err := l.m.DiskSize(vm.spec.Disk); err != nil || n <= 0 {
		t.Errorf("DiskSize = %d, %v", n, err)
	}
	// A pty (ansible -tt, packer ssh_pty) and the sftp subsystem work.
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Fatalf("pty: %v", err)
	}
	if out, err := sess.CombinedOutput("tty"); err != nil || !strings.HasPrefix(string(out), "/dev/pts/") {
		t.Errorf("tty: %q %v", out, err)
	}
	sess.Close()
	sess, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestSubsystem("sftp"); err != nil {
		t.Errorf("sftp subsystem: %v", err)
	}
	sess.Close()
	if log := vm.ConsoleLog(); !strings.Contains(log, "ansible-init: done") || !strings.Contains(log, "OpenBSD Secure Shell server") {
		t.Errorf("console log:\n%s", log)
	}
}

// TestHostDoesNotLeak shows the VM's root is the VM userland and the image,
// not the host: a file the host gains is absent in a VM, and programs only
// the host has installed are missing there.
func TestHostDoesNotLeak(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	marker := "/usr/local/bin/fatlab-host-only-" + randHex(4)
	if err := os.WriteFile(marker, []byte("#!/bin/sh\necho host\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(marker) })
	l.bootVM("leak", 90, nil, "", 0)
	c := dial(t, l.ip(90), l.signer, sshWithin)
	if got := mustRun(t, c, "test -e "+marker+" && echo present || echo absent"); got != "absent" {
		t.Errorf("a file created on the host is %s in the VM", got)
	}
	for _, prog := range []string{"createrepo_c", "mmdebstrap", "ansible-playbook", "openstack"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Errorf("host lacks %s (scripts/deps.sh installs it): the check would prove nothing", prog)
		}
		if got := mustRun(t, c, "command -v "+prog+" || echo missing"); got != "missing" {
			t.Errorf("host-only %s is in the VM at %s", prog, got)
		}
	}
	// What the image contract's content needs is there, from the userland.
	mustRun(t, c, "podman --version && git --version && python3 -m venv --help >/dev/null && pip3 --version && curl --version >/dev/null && tar --version >/dev/null")
}

func regexpDigits(s string) bool {
	for _, r := range s {
		if r >= '0' && r <= '9' {
			return true
		}
	}
	return false
}

func TestMetadataUserDataAnsibleInit(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	udSigner, udPub := newSigner(t)
	mdA := &Metadata{UUID: newUUID(), Name: "meta-a", Hostname: "meta-a.novalocal",
		Meta:       map[string]string{"ansible_init_disable": "True", "role": "a"},
		PublicKeys: map[string]string{"testkey": l.pub}}
	mdB := &Metadata{UUID: newUUID(), Name: "meta-b", Hostname: "meta-b", ConfigDrive: true,
		Meta:       map[string]string{"role": "b"},
		PublicKeys: map[string]string{},
		UserData:   []byte("#cloud-config\nssh_authorized_keys:\n  - " + udPub + "\n  - \"" + l.pub + "\"\nruncmd:\n  - [sh, -c, 'echo ran-by-cloud-init > /var/tmp/fatlab-runcmd']\n")}
	var wg sync.WaitGroup
	var a, b *Machine
	wg.Add(2)
	go func() { defer wg.Done(); a, _ = l.bootVM("meta-a", 20, mdA, "", 0) }()
	go func() { defer wg.Done(); b, _ = l.bootVM("meta-b", 21, mdB, "", 0) }()
	wg.Wait()
	if a == nil || b == nil {
		t.FailNow()
	}
	ca := dial(t, l.ip(20), l.signer, sshWithin)
	cb := dial(t, l.ip(21), udSigner, sshWithin) // key only in user_data

	for _, tc := range []struct {
		c  *ssh.Client
		md *Metadata
		ip string
	}{{ca, mdA, l.ip(20)}, {cb, mdB, l.ip(21)}} {
		raw := mustRun(t, tc.c, "curl -sf --noproxy '*' http://169.254.169.254/openstack/latest/meta_data.json")
		var doc struct {
			UUID, Name, Hostname string
			Meta                 map[string]string `json:"meta"`
			PublicKeys           map[string]string `json:"public_keys"`
			LaunchIndex          *int              `json:"launch_index"`
			AZ                   string            `json:"availability_zone"`
			ProjectID            string            `json:"project_id"`
		}
		if err := json.Unmarshal([]byte(raw), &doc); err != nil {
			t.Fatalf("meta_data.json %q: %v", raw, err)
		}
		if doc.UUID != tc.md.UUID || doc.Name != tc.md.Name || doc.Hostname != tc.md.Hostname ||
			doc.Meta["role"] != tc.md.Meta["role"] || doc.AZ != "nova" || doc.LaunchIndex == nil || *doc.LaunchIndex != 0 ||
			doc.ProjectID == "" || len(doc.PublicKeys) != len(tc.md.PublicKeys) {
			t.Errorf("VM %s got metadata %+v", tc.ip, doc)
		}
		if got := mustRun(t, tc.c, "curl -s --noproxy '*' http://169.254.169.254/latest/meta-data/local-ipv4"); got != tc.ip {
			t.Errorf("local-ipv4 %q want %s", got, tc.ip)
		}
	}
	if got := mustRun(t, ca, "curl -s -o /dev/null -w '%{http_code}' --noproxy '*' http://169.254.169.254/openstack/latest/user_data"); got != "404" {
		t.Errorf("user_data of A: %s", got)
	}
	if got := mustRun(t, cb, "curl -sf --noproxy '*' http://169.254.169.254/openstack/latest/user_data"); got != strings.TrimSpace(string(mdB.UserData)) {
		t.Errorf("user_data of B: %q", got)
	}
	if got := mustRun(t, ca, "test -e /var/lib/ansible-init.done && echo present || echo absent"); got != "absent" {
		t.Errorf("A (ansible_init_disable=True): sentinel %s", got)
	}
	if got := mustRun(t, cb, "test -e /var/lib/ansible-init.done && echo present || echo absent"); got != "present" {
		t.Errorf("B: sentinel %s", got)
	}
	if !strings.Contains(a.ConsoleLog(), "disabled by metadata") {
		t.Errorf("A console lacks ansible-init message:\n%s", a.ConsoleLog())
	}
	// Both keys from user_data (one quoted) ended up in authorized_keys.
	if got := mustRun(t, cb, "wc -l < ~/.ssh/authorized_keys"); got != "2" {
		t.Errorf("B authorized_keys lines: %s", got)
	}
	if got := mustRun(t, cb, "hostname"); got != "meta-b" {
		t.Errorf("B hostname %q", got)
	}
	// A found its data on the metadata service, B (config_drive) on the
	// config drive, in cloud-init's local stage.
	if got := mustRun(t, ca, "cloud-init status --wait >/dev/null; sudo -n cat /run/cloud-init/result.json"); !strings.Contains(got, "DataSourceOpenStack") {
		t.Errorf("A data source: %s", got)
	}
	if got := mustRun(t, cb, "cloud-init status --wait >/dev/null; sudo -n cat /run/cloud-init/result.json; sudo -n cat /var/lib/cloud/seed/config_drive/openstack/latest/meta_data.json"); !strings.Contains(got, "DataSourceConfigDrive") || !strings.Contains(got, mdB.UUID) {
		t.Errorf("B data source: %s", got)
	}
	// cloud-init ran user_data's runcmd (in its final stage: wait for it).
	if got := mustRun(t, cb, "cloud-init status --wait >/dev/null; cat /var/tmp/fatlab-runcmd"); got != "ran-by-cloud-init" {
		t.Errorf("B runcmd: %q", got)
	}
	if got := mustRun(t, ca, "hostname; cat /etc/hostname"); got != "meta-a\nmeta-a" {
		t.Errorf("A hostname from metadata: %q", got)
	}
}

func TestRebootAndPoweroff(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	vm, pl := l.bootVM("rb", 30, nil, "", 0)
	pl.waitFor(t, PowerRunning, sshWithin)
	c := dial(t, l.ip(30), l.signer, sshWithin)
	bootID1 := mustRun(t, c, "cat /proc/sys/kernel/random/boot_id")
	hostKey1 := mustRun(t, c, "cat /etc/ssh/ssh_host_ed25519_key.pub")
	start1 := pid1Start(t, c)
	mustRun(t, c, "echo persisted | sudo -n tee /etc/fatlab-persist >/dev/null")

	// sudo reboot returns (or the connection drops), then the connection dies.
	t0 := time.Now()
	out, err := run1(c, "sudo -n reboot")
	t.Logf("sudo reboot: err=%v out=%q after %v", err, out, time.Since(t0))
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("sudo reboot failed inside the VM: %v %s", err, out)
	}
	dropped := make(chan error, 1)
	go func() { dropped <- c.Wait() }()
	select {
	case err := <-dropped:
		t.Logf("connection dropped: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("SSH connection did not drop after reboot")
	}
	pl.waitFor(t, PowerRunning, sshWithin)
	c2 := dial(t, l.ip(30), l.signer, sshWithin)
	t.Logf("reboot: SSH back after %v", time.Since(t0))
	if got := vm.BootCount(); got != 2 {
		t.Errorf("BootCount after reboot = %d", got)
	}
	if id := mustRun(t, c2, "cat /proc/sys/kernel/random/boot_id"); id == bootID1 {
		t.Errorf("boot_id unchanged after reboot: %s", id)
	}
	if s2 := pid1Start(t, c2); s2 <= start1 {
		t.Errorf("PID 1 start time not newer: %d <= %d", s2, start1)
	}
	if got := mustRun(t, c2, "cat /etc/fatlab-persist"); got != "persisted" {
		t.Errorf("disk content lost over reboot: %q", got)
	}
	// cloud-init keeps the instance's host keys over a reboot ...
	if got := mustRun(t, c2, "cat /etc/ssh/ssh_host_ed25519_key.pub"); got != hostKey1 {
		t.Errorf("host key changed over a plain reboot")
	}
	// ... and after "cloud-init clean --logs --seed" (the provisioner's
	// cleanup) it forgets the instance: logs and state are gone, and the
	// next boot is a first boot again, with new host keys.
	// (sshd is up before cloud-init's config and final stages end: wait,
	// or they write their state and logs again after the clean.)
	mustRun(t, c2, "cloud-init status --wait >/dev/null; sudo -n cloud-init clean --logs --seed")
	if got := mustRun(t, c2, "sudo -n ls -A /var/lib/cloud /var/log/cloud-init.log /var/log/cloud-init-output.log 2>&1; true"); strings.Contains(got, "instances") || !strings.Contains(got, "cannot access '/var/log/cloud-init.log'") {
		t.Errorf("after cloud-init clean: %s", got)
	}
	nr, err := run1(c2, "sudo -n dnf -q -C needs-restarting -r")
	t.Logf("dnf needs-restarting -r: err=%v\n%s", err, nr)

	// Guest power off.
	if _, err := run1(c2, "sudo -n poweroff"); err != nil {
		var ee *ssh.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("sudo poweroff: %v", err)
		}
	}
	pl.waitFor(t, PowerShutdown, sshWithin)
	if vm.PowerState() != PowerShutdown {
		t.Fatalf("state %v after poweroff", vm.PowerState())
	}
	if _, err := net.DialTimeout("tcp", net.JoinHostPort(l.ip(30), "22"), 300*time.Millisecond); err == nil {
		t.Error("sshd still reachable after poweroff")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := vm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c3 := dial(t, l.ip(30), l.signer, sshWithin)
	if vm.BootCount() != 3 || vm.PowerState() != PowerRunning {
		t.Errorf("after Start: bootcount %d state %v", vm.BootCount(), vm.PowerState())
	}
	if got := mustRun(t, c3, "cat /etc/ssh/ssh_host_ed25519_key.pub"); got == hostKey1 {
		t.Errorf("host key kept after cloud-init clean and a boot")
	}
	if got := mustRun(t, c3, "sudo -n test -s /var/log/cloud-init.log && echo log"); got != "log" {
		t.Errorf("cloud-init did not run again after clean: %q", got)
	}
	// shutdown -r and systemctl reboot go through systemd as well.
	for i, cmd := range []string{"sudo -n shutdown -r now", "sudo -n systemctl reboot"} {
		_, _ = run1(c3, cmd)
		waitBoots(t, vm, 4+i)
		c3 = dial(t, l.ip(30), l.signer, sshWithin)
	}
	// API stop / soft reboot / hard reboot.
	if err := vm.Reboot(ctx, false); err != nil {
		t.Fatal(err)
	}
	c3.Close()
	dial(t, l.ip(30), l.signer, sshWithin)
	if err := vm.Reboot(ctx, true); err != nil {
		t.Fatal(err)
	}
	dial(t, l.ip(30), l.signer, sshWithin)
	if err := vm.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if vm.PowerState() != PowerShutdown || vm.BootCount() != 7 {
		t.Errorf("after Stop: %v bootcount %d", vm.PowerState(), vm.BootCount())
	}
	pl.mu.Lock()
	t.Logf("power events: %v", pl.ev)
	pl.mu.Unlock()
}

func TestHardResetAndFloatingIP(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	vm, _ := l.bootVM("hr", 40, nil, "", 0)
	fip := fmt.Sprintf("172.24.%d.40", l.x)
	if err := vm.AddFloatingIP(fip); err != nil {
		t.Fatal(err)
	}
	c := dial(t, fip, l.signer, sshWithin)
	if got := mustRun(t, c, "ip -4 -o addr show dev eth0"); !strings.Contains(got, fip+"/32") {
		t.Errorf("floating IP not in VM: %s", got)
	}
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("echo running; exec sleep 60"); err != nil {
		t.Fatal(err)
	}
	// the command runs in the VM once its first line arrives
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "running\n" {
		t.Fatalf("the session's command did not start: %q %v", line, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- sess.Wait() }()
	t0 := time.Now()
	if err := vm.HardReset(); err != nil {
		t.Fatal(err)
	}
	t.Logf("HardReset took %v", time.Since(t0))
	// Silent death: nothing reaches the client by itself.
	select {
	case err := <-closed:
		t.Fatalf("session ended by itself after hard reset (not silent): %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	// The next packet gets a RST from the new boot: the session dies uncleanly.
	_, _, kerr := c.SendRequest("keepalive@openssh.com", true, nil)
	select {
	case err := <-closed:
		var ee *ssh.ExitError
		if err == nil || errors.As(err, &ee) {
			t.Errorf("session ended cleanly after hard reset: %v", err)
		}
		t.Logf("after hard reset: keepalive err=%v, session err=%v", kerr, err)
	case <-time.After(10 * time.Second):
		t.Fatal("session did not die after hard reset")
	}
	c2 := dial(t, fip, l.signer, sshWithin)
	if vm.BootCount() != 2 {
		t.Errorf("BootCount %d", vm.BootCount())
	}
	if got := mustRun(t, c2, "ip -4 -o addr show dev eth0"); !strings.Contains(got, fip+"/32") {
		t.Errorf("floating IP lost over hard reset: %s", got)
	}
	if err := vm.RemoveFloatingIP(fip); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("ip", "route", "show", fip).CombinedOutput(); strings.TrimSpace(string(out)) != "" {
		t.Errorf("route to %s left: %s", fip, out)
	}
	// (A TCP connect to the address is no test here: without the route it
	// goes to the default gateway, which may answer anything.)
	cf := dial(t, l.ip(40), l.signer, sshWithin)
	if got := mustRun(t, cf, "ip -4 -o addr show dev eth0"); strings.Contains(got, fip+"/") {
		t.Errorf("floating IP still in VM after removal: %s", got)
	}
}

func TestSnapshotClone(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	a, _ := l.bootVM("snap-a", 50, nil, "", 0)
	ca := dial(t, l.ip(50), l.signer, sshWithin)
	marker := "/etc/fatlab-snapshot-" + randHex(4)
	mustRun(t, ca, "echo hello | sudo -n tee "+marker+" >/dev/null; echo mine > ~/home-file; sudo -n rm -f /etc/motd")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	clone, err := l.m.CloneDisk(a.spec.Disk)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := l.m.DiskSize(clone); err != nil || n <= 0 {
		t.Errorf("DiskSize(clone) = %d, %v", n, err)
	}
	if err := a.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := l.m.DeleteDisk(a.spec.Disk); err != nil {
		t.Fatal(err)
	}
	b, _ := l.bootVM("snap-b", 51, nil, clone, 0)
	cb := dial(t, l.ip(51), l.signer, sshWithin)
	if got := mustRun(t, cb, "cat "+marker+" ~/home-file; test -e /etc/motd && echo motd || echo nomotd"); got != "hello\nmine\nnomotd" {
		t.Errorf("clone content: %q", got)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("host filesystem touched: %s: %v", marker, err)
	}
	if _, err := os.Stat("/home/rocky"); err == nil {
		t.Errorf("host has /home/rocky")
	}
	if err := l.m.DeleteDisk(clone); err == nil {
		t.Error("DeleteDisk of a disk in use succeeded")
	}
	if err := b.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := l.m.DeleteDisk(clone); err != nil {
		t.Fatal(err)
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	v1, _ := l.bootVM("c1", 60, nil, "", 0)
	v2, _ := l.bootVM("c2", 61, nil, "", 2*time.Second) // sshd not up yet when closing
	fip := fmt.Sprintf("172.24.%d.60", l.x)
	if err := v1.AddFloatingIP(fip); err != nil {
		t.Fatal(err)
	}
	dial(t, l.ip(60), l.signer, sshWithin)
	pids := []int{v1.InitPID(), v2.InitPID()}
	names := []string{v1.ns, v2.ns, v1.veth, v2.veth, l.bridge}
	if err := l.m.Close(); err != nil {
		t.Fatal(err)
	}
	nsList, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	links, _ := exec.Command("ip", "link").CombinedOutput()
	for _, n := range names {
		if strings.Contains(string(nsList), n) || strings.Contains(string(links), n+"@") || strings.Contains(string(links), n+":") {
			t.Errorf("%s left behind:\n%s\n%s", n, nsList, links)
		}
	}
	if out, _ := exec.Command("ip", "route", "show", "table", "all").CombinedOutput(); strings.Contains(string(out), fip) || strings.Contains(string(out), fmt.Sprintf("10.213.%d.", l.x)) {
		t.Errorf("routes left:\n%s", out)
	}
	for _, p := range pids {
		if p == 0 {
			t.Error("no init pid")
		} else if _, err := os.Stat(fmt.Sprintf("/proc/%d", p)); err == nil {
			t.Errorf("process %d still alive", p)
		}
	}
	if out, err := exec.Command("iptables-save").CombinedOutput(); err == nil && (strings.Contains(string(out), l.m.MetadataAddr()) || strings.Contains(string(out), l.bridge)) {
		t.Errorf("host iptables rules left:\n%s", out)
	}
	if out, err := exec.Command("ss", "-Hltn", "src", l.m.MetadataAddr()).CombinedOutput(); err == nil && strings.TrimSpace(string(out)) != "" {
		t.Errorf("metadata listener still open: %s", out)
	}
	if _, err := os.Stat(l.m.cgroupBase()); err == nil {
		t.Errorf("cgroup %s left behind", l.m.cgroupBase())
	}
	if _, err := v1.Start(context.Background()), v1.Destroy(); err != ErrDestroyed && err != nil {
		t.Errorf("Destroy after Close: %v", err)
	}
}

func waitBoots(t testing.TB, vm *Machine, n int) {
	t.Helper()
	deadline := time.Now().Add(sshWithin)
	for vm.BootCount() < n {
		if time.Now().After(deadline) {
			t.Fatalf("BootCount %d, want %d", vm.BootCount(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkBootToSSH measures Boot -> first successful "sudo -n true" over SSH.
func BenchmarkBootToSSH(b *testing.B) {
	l := newLab(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		vm, _ := l.bootVM(fmt.Sprintf("bench-%d", i), 100+i%100, nil, "", 0)
		c := dial(b, l.ip(100+i%100), l.signer, sshWithin)
		total += time.Since(start)
		c.Close()
		if err := vm.Destroy(); err != nil {
			b.Fatal(err)
		}
		if err := l.m.DeleteDisk(vm.spec.Disk); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/boot-to-ssh")
}

func TestSweepStale(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	dir := t.TempDir()
	tag := randHex(3)
	br, ns, veth := "fvs"+randHex(4), "fatlab-sweep-"+tag, "fs"+randHex(4)
	t.Cleanup(func() {
		for _, c := range [][]string{{"link", "del", br}, {"link", "del", veth}, {"netns", "del", ns}} {
			_ = exec.Command("ip", c...).Run() // some are gone already: the sweep's work
		}
	})
	for _, c := range [][]string{
		{"link", "add", "name", br, "type", "bridge"},
		{"netns", "add", ns},
		{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
	} {
		if err := run("ip", c...); err != nil {
			t.Fatal(err)
		}
	}
	// A process that is gone.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	rec := registryRecord{PID: cmd.Process.Pid, Start: "1", Bridge: br,
		Netns: map[string]bool{ns: true}, Veths: map[string]bool{veth: true}}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, tag+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A live owner (this process) is left alone.
	live := registryRecord{PID: os.Getpid(), Start: procStart(os.Getpid()), Bridge: br}
	b, _ = json.Marshal(live)
	if err := os.WriteFile(filepath.Join(dir, "live.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sweepStaleIn(dir, t.Logf)
	if _, err := os.Stat(filepath.Join(dir, "live.json")); err != nil {
		t.Error("record of a live manager removed")
	}
	for _, p := range []string{"/sys/class/net/" + br, "/sys/class/net/" + veth, "/run/netns/" + ns, filepath.Join(dir, tag+".json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s not swept", p)
		}
	}
}

func TestStopDuringBoot(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	vm, pl := l.bootVM("early", 70, nil, "", 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	if err := vm.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("Stop right after Boot took %v", d)
	}
	if vm.PowerState() != PowerShutdown {
		t.Errorf("state %v", vm.PowerState())
	}
	pl.waitFor(t, PowerShutdown, sshWithin)
	if !strings.Contains(vm.ConsoleLog(), "Reached target poweroff.target") {
		t.Errorf("not a graceful power off:\n%s", vm.ConsoleLog())
	}
	// SSHDelay: sshd comes up only after the delay.
	if err := vm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := dial(t, l.ip(70), l.signer, sshWithin)
	// sshd became active at least the delay after cloud-init finished.
	got := mustRun(t, c, "systemctl show -P ActiveEnterTimestampMonotonic cloud-init.service ssh.service")
	f := strings.Fields(got)
	if len(f) != 2 {
		t.Fatalf("timestamps: %q", got)
	}
	ci, _ := strconv.ParseInt(f[0], 10, 64)
	sshd, _ := strconv.ParseInt(f[1], 10, 64)
	if d := time.Duration(sshd-ci) * time.Microsecond; ci == 0 || d < 5*time.Second {
		t.Errorf("sshd active %v after cloud-init despite SSHDelay 5s", d)
	}
}

// runRC runs a command and returns its combined output and exit status.
func runRC(t testing.TB, c *ssh.Client, cmd string) (string, int) {
	t.Helper()
	out, err := run1(c, cmd)
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return strings.TrimSpace(out), 0
	case errors.As(err, &ee):
		return strings.TrimSpace(out), ee.ExitStatus()
	}
	t.Fatalf("%s: %v: %s", cmd, err, out)
	return "", -1
}

// TestSystemdUnits checks systemd really runs in the VM: systemctl verbs,
// drop-ins, daemon-reload, systemd-tmpfiles, sysctl --system and the
// journal behave as on Rocky, and a reboot starts the enabled units again.
func TestSystemdUnits(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	vm, _ := l.bootVM("units", 80, nil, "", 0)
	c := dial(t, l.ip(80), l.signer, sshWithin)
	expect := func(cmd, want string, wantRC int) {
		t.Helper()
		if out, rc := runRC(t, c, cmd); out != want || rc != wantRC {
			t.Errorf("%s: got %q exit %d, want %q exit %d", cmd, out, rc, want, wantRC)
		}
	}
	// Debian names the unit ssh.service, with sshd.service as its alias.
	// sshd answers before the boot's last units (ansible-init) are up on a
	// loaded host: wait for the boot's end, as systemd reports it, first.
	mustRun(t, c, "timeout 60 systemctl is-system-running --wait >/dev/null 2>&1 || true")
	expect("systemctl is-enabled ssh; systemctl is-active sshd.service ansible-init", "enabled\nactive\nactive", 0)
	for _, u := range []string{"foo", "bar"} {
		mustRun(t, c, fmt.Sprintf("printf '[Unit]\\n[Service]\\nExecStart=/bin/sh -c \"echo %s says $$GREETING; exec sleep infinity\"\\n[Install]\\nWantedBy=multi-user.target\\n' | sudo -n tee /etc/systemd/system/%s.service >/dev/null", u, u))
	}
	expect("systemctl is-enabled foo", "disabled", 1)
	expect("systemctl is-active foo.service", "inactive", 3)
	expect("sudo -n systemctl enable foo 2>&1", "Created symlink /etc/systemd/system/multi-user.target.wants/foo.service → /etc/systemd/system/foo.service.", 0)
	expect("sudo -n systemctl start foo && systemctl is-active foo", "active", 0)
	// A drop-in takes effect after daemon-reload and a restart.
	mustRun(t, c, "sudo -n mkdir -p /etc/systemd/system/foo.service.d && printf '[Service]\\nEnvironment=GREETING=hello\\n' | sudo -n tee /etc/systemd/system/foo.service.d/greet.conf >/dev/null")
	expect("sudo -n systemctl daemon-reload && sudo -n systemctl restart foo && systemctl show -P Environment foo", "GREETING=hello", 0)
	// journald may log the service's line after "Started foo.service.":
	// wait for it rather than read the last line once.
	expect("for i in $(seq 50); do sudo -n journalctl -u foo -o cat --no-pager | grep -qx 'foo says hello' && break; sleep 0.1; done; "+
		"sudo -n journalctl -u foo -o cat --no-pager | grep -x 'foo says hello' | tail -1", "foo says hello", 0)
	expect("sudo -n systemctl enable --now bar 2>/dev/null; systemctl is-active bar", "active", 0)
	expect("sudo -n systemctl disable bar 2>&1; systemctl is-enabled bar", "Removed \"/etc/systemd/system/multi-user.target.wants/bar.service\".\ndisabled", 1)
	expect("sudo -n systemctl start nope 2>&1", "Failed to start nope.service: Unit nope.service not found.", 5)
	// systemd-tmpfiles and sysctl --system: the VM's own settings, in its
	// own network namespace; the host's are untouched.
	mustRun(t, c, "printf 'd /run/fatlab-tmpfiles 0750 root adm -\\n' | sudo -n tee /etc/tmpfiles.d/fatlab.conf >/dev/null && sudo -n systemd-tmpfiles --create /etc/tmpfiles.d/fatlab.conf")
	expect("stat -c '%a %U %G' /run/fatlab-tmpfiles", "750 root adm", 0)
	hostFwd, _ := os.ReadFile("/proc/sys/net/ipv4/conf/all/forwarding")
	want := "1"
	if strings.TrimSpace(string(hostFwd)) == "1" {
		want = "0"
	}
	// (sysctl --system also meets systemd's kernel.pid_max, a global key the
	// VM may not set: it reports that and goes on, see docs/lab.md.)
	mustRun(t, c, "printf 'net.ipv4.conf.all.forwarding = "+want+"\\n' | sudo -n tee /etc/sysctl.d/90-fatlab.conf >/dev/null")
	if out, _ := runRC(t, c, "sudo -n sysctl --system 2>&1"); !strings.Contains(out, "net.ipv4.conf.all.forwarding = "+want) {
		t.Errorf("sysctl --system did not apply /etc/sysctl.d/90-fatlab.conf:\n%s", out)
	}
	expect("sysctl -n net.ipv4.conf.all.forwarding", want, 0)
	if now, _ := os.ReadFile("/proc/sys/net/ipv4/conf/all/forwarding"); string(now) != string(hostFwd) {
		t.Errorf("the VM's sysctl changed the host's forwarding: %q -> %q", hostFwd, now)
	}
	// The kernel's global knobs are read-only in the VM.
	if out, rc := runRC(t, c, "sudo -n sysctl -w kernel.domainname=fatlab 2>&1"); rc == 0 {
		t.Errorf("the VM could set a global kernel parameter: %s", out)
	}
	// ... but for those the appliance's roles set at build, which are the
	// VM's own.
	hostKeys, _ := os.ReadFile("/proc/sys/kernel/keys/maxkeys")
	keys := "50000"
	if strings.TrimSpace(string(hostKeys)) == keys {
		keys = "50001"
	}
	expect("sudo -n sysctl -w kernel.keys.maxkeys="+keys+" >/dev/null && sysctl -n kernel.keys.maxkeys", keys, 0)
	if now, _ := os.ReadFile("/proc/sys/kernel/keys/maxkeys"); string(now) != string(hostKeys) {
		t.Errorf("the VM's sysctl changed the host's kernel.keys.maxkeys: %q -> %q", hostKeys, now)
	}

	// Reboot: the enabled unit comes back, the disabled one does not;
	// tmpfiles and sysctl.d are applied at boot by systemd.
	_, _ = run1(c, "sudo -n systemctl reboot") // the reboot drops the connection: no status to check
	waitBoots(t, vm, 2)
	c = dial(t, l.ip(80), l.signer, sshWithin)
	expect("systemctl is-system-running --wait", "running", 0)
	expect("systemctl is-enabled foo bar", "enabled\ndisabled", 0) // 0: one of them is
	expect("systemctl is-active foo bar", "active\ninactive", 0)
	expect("stat -c '%a %U %G' /run/fatlab-tmpfiles", "750 root adm", 0)
	// The journal of the boot before is on the disk.
	expect("sudo -n journalctl -b -1 -u foo -o cat --no-pager | grep -c 'foo says hello'", "1", 0)
}
