package repos

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Source-built stand-ins: packages whose pkgDef names an SRPM are built
// as x86_64 from one spec per source package and EVR, with -ba, so the
// repository holds their .src.rpm too (as OpenHPC's repositories do).
// The appliance's slurm_recompile role downloads that SRPM, rebuilds it
// on the build VM (with the VM's rpmbuild) and reinstalls the x86_64
// packages it made. The spec honours `_with_nvml` (the role's
// `rpmbuild -D "_with_nvml --with-nvml=..."`) as Slurm's does for
// configure, and records what it got in configureRecord, a file the main
// package installs: "configure" alone, or followed by the option.

// slurmBuildRequires is what Slurm's spec needs to build that the lab's
// catalog has (CRB's munge-devel, as Slurm's): what the role's `dnf
// builddep slurm.spec` installs on the build VM.
var slurmBuildRequires = []string{"munge-devel"}

// configureRecord is the file a source-built package records its
// configure options in (%s: its source package name).
const configureRecord = "/usr/share/%s/lab-configure"

// srcArch is the architecture source-built stand-ins are built for.
const srcArch = "x86_64"

// sourceGroups returns the source-built artifacts, one group per source
// package and EVR, each group's .src.rpm artifact last.
func sourceGroups(arts []*artifact) [][]*artifact {
	var keys []string
	byKey := map[string][]*artifact{}
	for _, a := range arts {
		if a.def.SRPM == "" {
			continue
		}
		k := a.def.SRPM + "-" + a.vr()
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], a)
	}
	groups := make([][]*artifact, 0, len(keys))
	for _, k := range keys {
		g := byKey[k]
		slices.SortStableFunc(g, func(x, y *artifact) int { return boolCmp(x.src, y.src) })
		groups = append(groups, g)
	}
	return groups
}

func boolCmp(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}

// buildSource writes the source package's spec (its own name, the main
// package; the others subpackages), tars the staged files as its Source0
// and runs rpmbuild -ba.
func buildSource(dir string, group []*artifact, key *signingKey, rpmsDir string) error {
	main := group[len(group)-1] // the .src.rpm artifact: the main package's def
	name := main.def.SRPM
	tree, sources := filepath.Join(dir, "tree"), filepath.Join(dir, "top", "SOURCES")
	for _, d := range []string{tree, sources} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var spec bytes.Buffer
	fmt.Fprintf(&spec, "Name: %s\n", name)
	if e := main.epoch(); e != "" {
		fmt.Fprintf(&spec, "Epoch: %s\n", e)
	}
	fmt.Fprintf(&spec, `Version: %s
Release: %s
Summary: Lab stand-in for %s
License: MIT
AutoReqProv: no
Source0: %s-files.tar
%%define debug_package %%{nil}
%%define _build_id_links none
`, main.version(), main.release(), name, name)
	for _, r := range main.def.BuildRequires {
		fmt.Fprintf(&spec, "BuildRequires: %s\n", r)
	}
	record := fmt.Sprintf(configureRecord, name)
	for _, a := range group {
		if a.src {
			continue
		}
		if a.def.Name != name {
			fmt.Fprintf(&spec, "%%package -n %s\nSummary: Lab stand-in for %s\nAutoReqProv: no\n", a.def.Name, a.def.Name)
		}
		if err := a.writeSpec(&spec, tree, key); err != nil {
			return err
		}
		if a.def.Name == name {
			fmt.Fprintf(&spec, "%s\n\n", record)
		}
	}
	fmt.Fprintf(&spec, `%%prep

%%build

%%install
mkdir -p %%{buildroot}%s
tar -xf %%{SOURCE0} --no-same-owner -C %%{buildroot}
echo 'configure%%{?_with_nvml: %%{_with_nvml}}' > %%{buildroot}%s
`, filepath.Dir(record), record)
	tar := exec.Command("tar", "--sort=name", "--mtime=@"+sourceDateEpoch, "--owner=0", "--group=0", "--numeric-owner",
		"-cf", filepath.Join(sources, name+"-files.tar"), "-C", tree, ".")
	if out, err := tar.CombinedOutput(); err != nil {
		return fmt.Errorf("tar of %s's files: %v: %s", name, err, out)
	}
	// named as OpenHPC's SRPMs name theirs (slurm_recompile builds slurm.spec)
	specFile := filepath.Join(dir, strings.TrimSuffix(name, "-ohpc")+".spec")
	if err := os.WriteFile(specFile, spec.Bytes(), 0o644); err != nil {
		return err
	}
	if err := rpmbuild(dir, "-ba", specFile); err != nil {
		return fmt.Errorf("rpmbuild -ba %s-%s: %w", name, main.vr(), err)
	}
	for _, a := range group {
		if err := os.Rename(filepath.Join(dir, "out", a.file), filepath.Join(rpmsDir, a.file)); err != nil {
			return fmt.Errorf("rpmbuild -ba %s-%s: %w", name, main.vr(), err)
		}
	}
	return nil
}
