package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Every VM boot gets a cgroup2 directory of its own, <cgroup2>/fatlab/<manager
// tag>/vm<seq>-<boot>; the boot enters a cgroup namespace rooted there, so
// the VM's systemd manages a hierarchy of its own (as under a container
// runtime that delegates a subtree) and never sees the host's.

// cgroup2Root is where the host's cgroup2 hierarchy is mounted: /sys/fs/cgroup
// on a unified host, /sys/fs/cgroup/unified on a hybrid one.
func cgroup2Root() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype src superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 1 && qf[0] == "cgroup2" && pf[3] == "/" {
			return pf[4], nil
		}
	}
	return "", errors.New("vm: no cgroup2 hierarchy is mounted on this host (systemd in the VMs needs one)")
}

func (m *Manager) cgroupBase() string { return filepath.Join(m.cgRoot, "fatlab", m.tag) }

// newCgroup creates the cgroup of one boot.
func (m *Manager) newCgroup(name string) (string, error) {
	base := m.cgroupBase()
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("vm: creating cgroup %s: %w", base, err)
	}
	m.regUpdate(func(r *registryRecord) { r.Cgroup = base })
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("vm: creating cgroup %s: %w", dir, err)
	}
	return dir, nil
}

// removeCgroup removes a cgroup tree once its processes are gone (they
// die with the VM's PID namespace; the kernel frees the cgroups a moment
// later).
func (m *Manager) removeCgroup(dir string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := rmdirTree(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			m.logf("vm: removing cgroup %s: %v", dir, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rmdirTree removes a cgroup directory and its children, deepest first
// (cgroupfs only allows rmdir of empty cgroups; their files need no
// removal).
func rmdirTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			return &fs.PathError{Op: "rmdir", Path: d, Err: err}
		}
	}
	return nil
}

// consolePTY makes the terminal the VM gets as /dev/console (systemd and
// journald write status and forwarded unit output only to a terminal) and
// copies what the VM writes there into the console log. It returns the
// terminal's path on the host; closing the returned Closer ends the copy.
func consolePTY(log *os.File) (string, io.Closer, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", nil, fmt.Errorf("vm: console: %w", err)
	}
	var unlock int32
	var n uint32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		master.Close()
		return "", nil, fmt.Errorf("vm: console: unlockpt: %w", err)
	}
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		master.Close()
		return "", nil, fmt.Errorf("vm: console: ptsname: %w", err)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	// Holding the terminal open here keeps reads from failing with EIO
	// each time the VM's last writer closes it.
	slave, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return "", nil, err
	}
	out, err := os.OpenFile(log.Name(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		master.Close()
		slave.Close()
		return "", nil, err
	}
	go func() {
		defer out.Close()
		buf := make([]byte, 32<<10)
		for {
			k, err := master.Read(buf)
			if k > 0 {
				_, _ = out.Write(bytes.ReplaceAll(buf[:k], []byte("\r"), nil))
			}
			if err != nil {
				return
			}
		}
	}()
	return path, closers{slave, master}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func ioctl(f *os.File, req uint, arg unsafe.Pointer) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(req), uintptr(arg))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// writeConfigDrive writes the config drive's tree for this boot into dir
// (empty when the server has none): openstack/<version>/meta_data.json,
// user_data, vendor_data.json, vendor_data2.json and network_data.json,
// the files Nova puts on the drive labelled config-2.
func (vm *Machine) writeConfigDrive(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if vm.spec.ConfigDrive != "" {
		return extractISO(vm.spec.ConfigDrive, dir)
	}
	if vm.m.opts.Metadata == nil {
		return nil
	}
	md := vm.m.opts.Metadata(vm.spec.FixedIP)
	if md == nil || !md.ConfigDrive {
		return nil
	}
	for _, v := range []string{"2018-08-27", "latest"} {
		d := filepath.Join(dir, "openstack", v)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		files := map[string][]byte{
			"meta_data.json":    MetaDataJSON(md),
			"vendor_data.json":  []byte("{}"),
			"vendor_data2.json": []byte(vendorData2),
			"network_data.json": []byte(`{"links": [], "networks": [], "services": []}`),
		}
		if md.UserData != nil {
			files["user_data"] = md.UserData
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// extractISO writes the files of the ISO 9660 image iso into dir by their
// Rock Ridge names (genisoimage -R, as Nova writes a config drive), with
// isoinfo: a VM has no block device to mount it from.
func extractISO(iso, dir string) error {
	out, err := exec.Command("isoinfo", "-R", "-f", "-i", iso).Output()
	if err != nil {
		return fmt.Errorf("vm: listing config drive %s: %w", iso, err)
	}
	paths := strings.Fields(string(out))
	isDir := map[string]bool{}
	for _, p := range paths {
		for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
			isDir[d] = true
		}
	}
	for _, p := range paths {
		dst := filepath.Join(dir, filepath.Clean("/"+p))
		if isDir[p] {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		data, err := exec.Command("isoinfo", "-R", "-i", iso, "-x", p).Output()
		if err != nil {
			return fmt.Errorf("vm: reading %s from config drive %s: %w", p, iso, err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeRuntimeConfig writes what the VM finds below /run at this boot:
// fault injection drop-ins for its units (SSHDelay holds sshd back).
func (vm *Machine) writeRuntimeConfig(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if vm.spec.SSHDelay <= 0 {
		return nil
	}
	dropin := filepath.Join(dir, "systemd/system/ssh.service.d")
	if err := os.MkdirAll(dropin, 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf("# fatlab fault injection: sshd starts late\n[Service]\nExecStartPre=/bin/sleep %.3f\n", vm.spec.SSHDelay.Seconds())
	return os.WriteFile(filepath.Join(dropin, "50-fatlab-delay.conf"), []byte(conf), 0o644)
}

// Runs reports whether process pid runs in one of this manager's VMs: it
// is listed in a cgroup.procs below the manager's cgroup. Tests that act
// on a VM's process from the host find it this way, not among every VM
// on the machine (other labs' tests run beside them).
func (m *Manager) Runs(pid int) bool {
	return slices.Contains(m.PIDs(), pid)
}

// PIDs are the processes running in this manager's VMs now (host pids),
// for a test sampling what they run.
func (m *Manager) PIDs() []int {
	var out []int
	_ = filepath.WalkDir(m.cgroupBase(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil //nolint:nilerr // a cgroup removed while walking holds no process
		}
		for _, f := range bytes.Fields(raw) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out
}
