package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// EndState is what an image carries that a user of it sees: its installed
// packages, its users and groups, and every file the build wrote (the
// image disk's overlay upper directory, i.e. the base image's changes
// plus the build's), each as type, mode, owner and content hash.
type EndState struct {
	Packages []string          // rpm -qa, sorted
	Users    []string          // passwd lines without the GECOS field, sorted
	Groups   []string          // group lines without members, sorted
	Files    map[string]string // path relative to / -> description
}

// ReadEndState reads an image's end state from its disk's upper directory
// with the host's rpm (the lab VMs' rpm is Debian's, like the host's).
func ReadEndState(upper string) (*EndState, error) {
	st := &EndState{Files: map[string]string{}}
	out, err := exec.Command("rpm", "--dbpath", filepath.Join(upper, "var/lib/rpm"), "-qa",
		"--qf", "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\n").Output()
	if err != nil {
		return nil, fmt.Errorf("rpm -qa on the image: %w", err)
	}
	st.Packages = strings.Fields(string(out))
	sort.Strings(st.Packages)
	if len(st.Packages) == 0 {
		return nil, fmt.Errorf("rpm -qa on the image lists no package: wrong database path %s", filepath.Join(upper, "var/lib/rpm"))
	}
	for _, f := range []struct {
		file string
		to   *[]string
		keep []int
	}{{"etc/passwd", &st.Users, []int{0, 2, 3, 5, 6}}, {"etc/group", &st.Groups, []int{0, 2}}} {
		data, err := os.ReadFile(filepath.Join(upper, f.file))
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			fields := strings.Split(l, ":")
			var kept []string
			for _, i := range f.keep {
				if i < len(fields) {
					kept = append(kept, fields[i])
				}
			}
			*f.to = append(*f.to, strings.Join(kept, ":"))
		}
		sort.Strings(*f.to)
	}
	err = filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(upper, p)
		if rel == "." {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys, _ := fi.Sys().(*syscall.Stat_t)
		owner := ""
		if sys != nil {
			owner = fmt.Sprintf("%d:%d", sys.Uid, sys.Gid)
		}
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			st.Files[rel] = "symlink -> " + t
		case m&fs.ModeCharDevice != 0 && sys != nil && sys.Rdev == 0:
			st.Files[rel] = "deleted" // an overlay whiteout
		case m.IsDir():
			st.Files[rel] = fmt.Sprintf("dir %04o %s", m.Perm(), owner)
		case m.IsRegular():
			h, err := hashFile(p)
			if err != nil {
				return err
			}
			st.Files[rel] = fmt.Sprintf("file %04o %s %s", m.Perm(), owner, h)
		default:
			st.Files[rel] = fmt.Sprintf("special %s %s", m.Type(), owner)
		}
		return nil
	})
	return st, err
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Allowed is a path pattern (path.Match against each prefix of the path,
// so a directory's pattern covers what is below it) where two builds of
// the same image may differ, and why. docs/benchmarks.md lists them.
type Allowed struct{ Pattern, Why string }

// EndStateAllowList are the differences between the stacks' images that
// are not differences of the image's content as a user sees it.
var EndStateAllowList = []Allowed{
	{"var/lib/rpm", "the rpm database's files: same packages (compared by rpm -qa), pages laid out by different transaction histories"},
	{"var/lib/dnf", "dnf's history database: how many transactions installed the same packages"},
	{"var/cache", "package caches both sides empty, their directories' leftovers differ"},
	{"var/log", "logs of the build itself (dnf, cloud-init, journal)"},
	{"var/lib/image/image.json", "each stack records its own builder, timings and counts"},
	{"var/lib/cloud", "cloud-init's per-instance state: instance ids differ by build"},
	{"run", "runtime state of the build VM (a tmpfs on a real image)"},
	{"etc/ssh/ssh_host_*", "host keys cloud-init made at the build VM's first boot"},
	{"home/rocky/.ssh", "each build's temporary SSH key"},
	{"home/rocky/.ansible", "Ansible's remote temporary directory (today's stack only)"},
	{"root/.ansible", "Ansible's remote temporary directory under become (today's stack only)"},
	{"tmp", "build-time temporary files"},
	{"var/tmp", "build-time temporary files"},
	{"etc/hostname", "the build VM's instance name"},
	{"etc/hosts", "the build VM's instance name"},
	{"var/lib/systemd", "systemd's random seed, timer stamps and credentials of the build VM"},
	{"var/lib/bench", "the benchmark's own counters"},
	{"usr/lib/python3*/__pycache__", "byte-code caches of Ansible's modules (today's stack only)"},
	{"etc/yum.repos.d", "each stack renders the disabled repository files its own way (key order, comments, mode, .rpmnew of a release package updated over a rewritten file); none carries a credential (the secret scan reads them)"},
	{"etc/sudoers.d/90-cloud-init-users", "cloud-init writes it at the build VM's first boot with the date"},
	{"root/.ssh", "cloud-init's copy of the build's temporary key for root"},
	{"root/.gnupg", "the keyring rpm_key leaves behind (appliance-style playbook only)"},
	{"etc/passwd*", "compared as users (name, uid, gid, home, shell) instead: line order differs"},
	{"etc/shadow*", "compared as users instead: line order differs"},
	{"etc/group*", "compared as groups (name, gid) instead: line order differs"},
	{"etc/gshadow*", "compared as groups instead: line order differs"},
	{"var/lib/containers/storage/*.lock", "podman's lock files of the build VM's boot"},
	{"var/lib/containers/storage/*/*.lock", "podman's lock files of the build VM's boot"},
	{"var/lib/containers/storage/libpod/bolt_state.db", "podman's runtime database of the build VM's boot"},
}

func allowed(p string, list []Allowed) bool {
	parts := strings.Split(p, "/")
	for i := 1; i <= len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		for _, a := range list {
			if ok, _ := path.Match(a.Pattern, prefix); ok {
				return true
			}
		}
	}
	return false
}

// Diff lists the differences between a and b that the allow-list does not
// cover: packages, users, groups and files only in one or different.
func (a *EndState) Diff(b *EndState, list []Allowed) []string {
	var out []string
	lists := func(what string, x, y []string) {
		inX, inY := map[string]bool{}, map[string]bool{}
		for _, v := range x {
			inX[v] = true
		}
		for _, v := range y {
			inY[v] = true
		}
		for _, v := range x {
			if !inY[v] {
				out = append(out, fmt.Sprintf("%s only in the first: %s", what, v))
			}
		}
		for _, v := range y {
			if !inX[v] {
				out = append(out, fmt.Sprintf("%s only in the second: %s", what, v))
			}
		}
	}
	lists("package", a.Packages, b.Packages)
	lists("user", a.Users, b.Users)
	lists("group", a.Groups, b.Groups)
	var paths []string
	for p := range a.Files {
		paths = append(paths, p)
	}
	for p := range b.Files {
		if _, ok := a.Files[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		if allowed(p, list) {
			continue
		}
		x, okA := a.Files[p]
		y, okB := b.Files[p]
		switch {
		case !okA:
			out = append(out, fmt.Sprintf("file only in the second: /%s (%s)", p, y))
		case !okB:
			out = append(out, fmt.Sprintf("file only in the first: /%s (%s)", p, x))
		case x != y:
			out = append(out, fmt.Sprintf("file differs: /%s (%s vs %s)", p, x, y))
		}
	}
	return out
}
