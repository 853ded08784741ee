package fatimage

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

const repoDir = "/etc/yum.repos.d"

// repoFile is the rendered content of one /etc/yum.repos.d file.
type repoFile struct {
	Name     string // file name with .repo
	Content  string
	Sections []string
}

// renderRepoFiles groups repos by repo_file and renders each file. With
// disabled set, every section is enabled = 0 and carries no credentials.
func renderRepoFiles(repos []Repo, username, password string, disabled bool) []repoFile {
	var order []string
	byFile := map[string][]Repo{}
	for _, r := range repos {
		if _, ok := byFile[r.RepoFile]; !ok {
			order = append(order, r.RepoFile)
		}
		byFile[r.RepoFile] = append(byFile[r.RepoFile], r)
	}
	var out []repoFile
	for _, f := range order {
		var b strings.Builder
		var sections []string
		b.WriteString("# Written by the packer fatimage provisioner.\n")
		for i, r := range byFile[f] {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(renderSection(r, username, password, disabled))
			sections = append(sections, r.RepoName)
		}
		out = append(out, repoFile{Name: f + ".repo", Content: b.String(), Sections: sections})
	}
	return out
}

func b01(v bool) int {
	if v {
		return 1
	}
	return 0
}

// renderSection renders one section with keys sorted as the appliance's
// ini_file output has them.
func renderSection(r Repo, username, password string, disabled bool) string {
	kv := map[string]string{
		"baseurl":  r.BaseURL,
		"gpgcheck": fmt.Sprint(b01(r.GPGCheck)),
		"name":     r.RepoName,
	}
	enabled := r.Enabled == nil || *r.Enabled
	kv["enabled"] = fmt.Sprint(b01(enabled && !disabled))
	if !disabled && username != "" && password != "" && r.Credentials != "none" {
		kv["username"] = username
		kv["password"] = password
	}
	if r.Priority > 0 {
		kv["priority"] = fmt.Sprint(r.Priority)
	}
	if r.ModuleHotfixes {
		kv["module_hotfixes"] = "1"
	}
	for k, v := range r.Options {
		if !isReservedKey(k) {
			kv[k] = v
		}
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n", r.RepoName)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, kv[k])
	}
	return b.String()
}

// shQuote quotes s for POSIX sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = shQuote(s)
	}
	return strings.Join(q, " ")
}

// disableAllAWK rewrites a .repo file so every section has enabled=0 (dnf
// treats a missing enabled as 1). It is applied through a temporary file
// outside /etc/yum.repos.d and `cat >` so no backup or temp file is left
// there and the file keeps its mode.
const disableAllAWK = `/^[[:space:]]*\[/ { print; print "enabled=0"; next } /^[[:space:]]*enabled[[:space:]]*=/ { next } { print }`

// scriptDisableOthers disables every section of every .repo file in
// /etc/yum.repos.d that is not in keep (file names with .repo).
func scriptDisableOthers(keep []string, tmp string) string {
	var b strings.Builder
	b.WriteString("# disable every other repository\n")
	fmt.Fprintf(&b, "tmpf=%s\n", shQuote(path.Join(tmp, "repo.tmp")))
	b.WriteString("for f in " + repoDir + "/*.repo; do\n  [ -e \"$f\" ] || continue\n  case \"${f##*/}\" in\n")
	if len(keep) > 0 {
		fmt.Fprintf(&b, "  %s) continue ;;\n", strings.Join(quoteEach(keep), "|"))
	}
	b.WriteString("  esac\n")
	fmt.Fprintf(&b, "  awk %s \"$f\" > \"$tmpf\"\n", shQuote(disableAllAWK))
	b.WriteString("  if ! cmp -s \"$tmpf\" \"$f\"; then cat \"$tmpf\" > \"$f\"; echo \"disabled repositories in $f\"; fi\n")
	b.WriteString("done\nrm -f \"$tmpf\"\n")
	return b.String()
}

func quoteEach(l []string) []string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = shQuote(s)
	}
	return q
}

// otherSectionsAWK prints the sections of a .repo file not named in
// keep (space-separated), without blank lines so that merging twice
// gives the same file; with off=1 each is forced to enabled=0.
const otherSectionsAWK = `BEGIN { n = split(keep, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1; in_s = 0 }
/^[[:space:]]*\[/ { s = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*$/, "", s); in_s = !(s in k); if (in_s) { print ""; print; if (off) print "enabled=0" }; next }
!in_s || /^[[:space:]]*$/ { next }
off && /^[[:space:]]*enabled[[:space:]]*=/ { next }
{ print }`

// scriptInstallRepoFiles installs uploaded repo files (in dir, named as
// the target) with mode 0600 root:root, only when they changed. Sections
// of an existing file that are not ours (e.g. baseos-source) are kept
// after ours, disabled when disableOthers is set.
func scriptInstallRepoFiles(files []repoFile, dir string, disableOthers bool) string {
	var b strings.Builder
	b.WriteString("umask 077\n")
	for _, f := range files {
		src := shQuote(path.Join(dir, f.Name))
		dst := shQuote(path.Join(repoDir, f.Name))
		fmt.Fprintf(&b, "if [ -f %s ]; then awk -v keep=%s -v off=%d %s %s >> %s; fi\n",
			dst, shQuote(strings.Join(f.Sections, " ")), b01(disableOthers), shQuote(otherSectionsAWK), dst, src)
		fmt.Fprintf(&b, "if cmp -s %s %s; then echo %s; else install -o root -g root -m 0600 %s %s; echo %s; fi\n",
			src, dst, shQuote("unchanged "+path.Join(repoDir, f.Name)), src, dst, shQuote("wrote "+path.Join(repoDir, f.Name)))
		fmt.Fprintf(&b, "chmod 0600 %s\nrm -f %s\n", dst, src)
	}
	return b.String()
}

// scriptGPGKeys writes the given keys (uploaded to dir as key-<i>) and
// imports every key.
func scriptGPGKeys(keys []GPGKey, dir string) string {
	var b strings.Builder
	for i, k := range keys {
		if k.Key != "" {
			src := shQuote(path.Join(dir, fmt.Sprintf("key-%d", i)))
			fmt.Fprintf(&b, "install -D -o root -g root -m 0644 %s %s\nrm -f %s\n", src, shQuote(k.Path), src)
		}
		fmt.Fprintf(&b, "fatimage_run rpm --import %s\n", shQuote(k.Path))
	}
	return b.String()
}

// scriptSELinux sets SELINUX= and prints REBOOT-NEEDED when it changed.
func scriptSELinux(mode string) string {
	return fmt.Sprintf(`f=/etc/selinux/config
want=%s
if [ ! -f "$f" ]; then echo "no $f; nothing to do"; exit 0; fi
cur=$(sed -n 's/^SELINUX=//p' "$f" | tail -n1)
if [ "$cur" = "$want" ]; then echo "SELinux already $want"; exit 0; fi
if grep -q '^SELINUX=' "$f"; then
  tmp=$(mktemp); sed "s/^SELINUX=.*/SELINUX=$want/" "$f" > "$tmp"; cat "$tmp" > "$f"; rm -f "$tmp"
else
  echo "SELINUX=$want" >> "$f"
fi
echo "SELinux $cur -> $want"
echo REBOOT-NEEDED
`, shQuote(mode))
}

func dnfOpts(enable []string) string {
	s := "-y --setopt=max_parallel_downloads=10"
	for _, r := range enable {
		s += " --enablerepo=" + shQuote(r)
	}
	return s
}

// scriptUpdate runs dnf update and asks dnf needs-restarting.
func scriptUpdate(exclude, enable []string) string {
	var b strings.Builder
	b.WriteString("fatimage_run dnf " + dnfOpts(enable) + " update")
	for _, e := range exclude {
		b.WriteString(" --exclude=" + shQuote(e))
	}
	b.WriteString("\n")
	b.WriteString(`rc=0; printf '+fatimage: %s\n' 'dnf needs-restarting -r' >&2; dnf needs-restarting -r >/dev/null 2>&1 || rc=$?
if [ "$rc" = 1 ]; then echo REBOOT-NEEDED; elif [ "$rc" != 0 ]; then echo "dnf needs-restarting -r failed ($rc)" >&2; exit "$rc"; fi
`)
	return b.String()
}

// scriptUsers creates groups and users with fixed ids; existing ones are
// checked and left alone.
func scriptUsers(users []User) string {
	var b strings.Builder
	for _, u := range users {
		if u.Group != "" {
			g := shQuote(u.Group)
			if u.GID > 0 {
				fmt.Fprintf(&b, "if getent group %s >/dev/null; then\n  [ \"$(getent group %s | cut -d: -f3)\" = %d ] || { echo \"group %s exists with another gid\" >&2; exit 1; }\nelse\n  fatimage_run groupadd %s-g %d %s; echo 'created group %s'\nfi\n",
					g, g, u.GID, u.Group, sysFlag(u.System), u.GID, g, u.Group)
			} else {
				fmt.Fprintf(&b, "getent group %s >/dev/null || { fatimage_run groupadd %s%s; echo 'created group %s'; }\n", g, sysFlag(u.System), g, u.Group)
			}
		}
		n := shQuote(u.Name)
		args := fmt.Sprintf("-u %d", u.UID)
		if u.Group != "" {
			args += " -g " + shQuote(u.Group)
		}
		if u.Home != "" {
			args += " -d " + shQuote(u.Home)
		}
		if u.Shell != "" {
			args += " -s " + shQuote(u.Shell)
		}
		if u.System {
			args += " -r"
		}
		if u.CreateHome {
			args += " -m"
		} else {
			args += " -M"
		}
		if u.Group == "" {
			args += " -U"
		}
		fmt.Fprintf(&b, "if getent passwd %s >/dev/null; then\n  [ \"$(id -u %s)\" = %d ] || { echo \"user %s exists with uid $(id -u %s), want %d\" >&2; exit 1; }\n  echo 'user %s exists'\nelse\n  fatimage_run useradd %s %s; echo 'created user %s'\nfi\n",
			n, n, u.UID, u.Name, n, u.UID, u.Name, args, n, u.Name)
	}
	return b.String()
}

func sysFlag(s bool) string {
	if s {
		return "-r "
	}
	return ""
}

// scriptPackages is one dnf install transaction (when install is not
// empty) and a dnf remove of the installed ones among remove. It returns
// how many dnf commands the script may run.
func scriptPackages(modules, install, remove, exclude, enable []string, weakDeps bool) (string, int) {
	var b strings.Builder
	n := 0
	if len(modules) > 0 {
		b.WriteString("fatimage_run dnf " + dnfOpts(enable) + " module enable " + shList(modules) + "\n")
		n++
	}
	if len(install) > 0 {
		fmt.Fprintf(&b, "fatimage_run dnf %s --setopt=install_weak_deps=%t install", dnfOpts(enable), weakDeps)
		for _, e := range exclude {
			b.WriteString(" --exclude=" + shQuote(e))
		}
		b.WriteString(" " + shList(install) + "\n")
		n++
	}
	if len(remove) > 0 {
		b.WriteString("set --\nfor p in " + shList(remove) + "; do rpm -q \"$p\" >/dev/null 2>&1 && set -- \"$@\" \"$p\"; done\n")
		b.WriteString("if [ $# -gt 0 ]; then fatimage_run dnf -y remove \"$@\"; else echo 'nothing to remove'; fi\n")
		n++
	}
	return b.String(), n
}

// cleanupStep is one named cleanup action.
type cleanupStep struct {
	Name   string
	Script string
	// Final steps run at the very end: after them SSH logins may fail.
	Final bool
}

var cleanupSteps = []cleanupStep{
	{Name: "dnf-clean", Script: "fatimage_run dnf clean all\n"},
	{Name: "resolv-conf", Script: "if [ -L /etc/resolv.conf ]; then echo 'resolv.conf is managed; kept'; else rm -f /etc/resolv.conf; fi\n"},
	{Name: "nm-cloud-init", Script: "rm -f /etc/NetworkManager/conf.d/99-cloud-init.conf\n"},
	{Name: "cloud-init", Script: "if command -v cloud-init >/dev/null 2>&1; then cloud-init clean --logs --seed; fi\n"},
	// journald is stopped first so it cannot write the files back
	{Name: "journal", Script: "systemctl stop systemd-journald.socket systemd-journald-dev-log.socket systemd-journald-audit.socket systemd-journald.service >/dev/null 2>&1 || true\nrm -rf /var/log/journal/*\n"},
	{Name: "machine-id", Script: ": > /etc/machine-id\nrm -f /var/lib/dbus/machine-id\n"},
	{Name: "munge-key", Script: "rm -f /etc/munge/munge.key\n"},
	{Name: "slurm-conf", Script: "rm -f /etc/slurm/slurm.conf\n"},
	{Name: "slurm-logs", Script: "rm -rf /var/log/slurm*\n"},
	{Name: "tmp", Script: "find /tmp -mindepth 1 -maxdepth 1 ! -path \"$FATIMAGE_WORKDIR\" -exec rm -rf {} +\n"},
	{Name: "ssh-host-keys", Final: true, Script: "rm -f /etc/ssh/ssh_host_*\n"},
	{Name: "login-ssh-keys", Final: true, Script: "h=$(getent passwd \"$FATIMAGE_LOGIN_USER\" | cut -d: -f6)\n[ -n \"$h\" ] && [ \"$h\" != / ] && rm -rf \"$h/.ssh\"\n"},
}

func cleanupStepByName(n string) (cleanupStep, bool) {
	for _, s := range cleanupSteps {
		if s.Name == n {
			return s, true
		}
	}
	return cleanupStep{}, false
}

func cleanupStepNames() []string {
	var n []string
	for _, s := range cleanupSteps {
		n = append(n, s.Name)
	}
	return n
}

// scriptCleanup renders the selected steps (final or not) minus skipped.
func scriptCleanup(skip []string, final bool) string {
	sk := map[string]bool{}
	for _, s := range skip {
		sk[s] = true
	}
	var b strings.Builder
	for _, s := range cleanupSteps {
		if s.Final != final || sk[s.Name] {
			continue
		}
		fmt.Fprintf(&b, "echo %s\n%s", shQuote("cleanup: "+s.Name), s.Script)
	}
	return b.String()
}

// scriptVerifyNoPassword fails when the password (in pwFile) appears in
// any file under /etc/yum.repos.d, and checks no backup files are left.
func scriptVerifyNoPassword(pwFile string) string {
	return fmt.Sprintf(`pw=%s
if [ -s "$pw" ] && grep -rlF -f "$pw" %s; then rm -f "$pw"; echo "the repository password is still in the files above" >&2; exit 1; fi
rm -f "$pw"
if grep -rlE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' %s; then echo "repositories still enabled in the files above" >&2; exit 1; fi
left=$(find %s -mindepth 1 ! -name '*.repo' -print)
if [ -n "$left" ]; then echo "unexpected files in %s: $left" >&2; exit 1; fi
echo "repositories disabled, no credentials left"
`, shQuote(pwFile), repoDir, repoDir, repoDir, repoDir)
}

// scriptFacts prints key=value facts for image.json and then the sorted
// package list after a marker line.
const scriptFacts = `. /etc/os-release
echo "os=$PRETTY_NAME"
echo "os_id=$ID"
echo "os_version=$VERSION_ID"
echo "kernel=$(uname -r)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
rpm -qa | LC_ALL=C sort > "$FATIMAGE_WORKDIR/rpms"
echo "package_count=$(wc -l < "$FATIMAGE_WORKDIR/rpms")"
echo "package_digest=sha256:$(sha256sum < "$FATIMAGE_WORKDIR/rpms" | cut -d' ' -f1)"
echo "--packages--"
cat "$FATIMAGE_WORKDIR/rpms"
rm -f "$FATIMAGE_WORKDIR/rpms"
`

// snapshotTimestamp returns a repo's snapshot timestamp: the configured
// one, else the last path element of its baseurl.
func snapshotTimestamp(r Repo) string {
	if r.Timestamp != "" {
		return r.Timestamp
	}
	return path.Base(strings.TrimRight(r.BaseURL, "/"))
}

// scriptLoginHome moves the login user's home to home. usermod refuses
// while the user is logged in (the build is), so the home is copied and
// the passwd field rewritten in place; the old home goes only when it is
// a plain /home/<dir>.
func scriptLoginHome(home string) string {
	return fmt.Sprintf(`u=$FATIMAGE_LOGIN_USER new=%s
if [ "$u" = root ]; then echo "the login user is root; home kept"; exit 0; fi
old=$(getent passwd "$u" | cut -d: -f6)
if [ "$old" = "$new" ]; then echo "home of $u already $new"; exit 0; fi
mkdir -p "$(dirname "$new")"
if [ -d "$old" ] && [ ! -e "$new" ]; then cp -a "$old" "$new"; fi
[ -d "$new" ] || install -d -o "$u" -g "$(id -gn "$u")" -m 0700 "$new"
awk -F: -v OFS=: -v u="$u" -v h="$new" '$1 == u { $6 = h } { print }' /etc/passwd > "$FATIMAGE_WORKDIR/passwd"
cat "$FATIMAGE_WORKDIR/passwd" > /etc/passwd
rm -f "$FATIMAGE_WORKDIR/passwd"
if command -v restorecon >/dev/null 2>&1; then restorecon -R "$new" || true; fi
# this SSH connection's sshd still starts sessions in the old home: a
# link keeps that working until the end of the run (scriptUnlinkOldHome)
case "$old" in /home/?*) [ "${old#/home/*/}" = "$old" ] && rm -rf "$old" && ln -s "$new" "$old" ;; esac
echo "home of $u moved from $old to $new"
`, shQuote(home))
}

// scriptUnlinkOldHome removes the link scriptLoginHome left in /home.
const scriptUnlinkOldHome = `h=$(getent passwd "$FATIMAGE_LOGIN_USER" | cut -d: -f6)
for l in /home/*; do if [ -L "$l" ] && [ "$(readlink "$l")" = "$h" ]; then rm -f "$l"; fi; done
`

// scriptGrafanaPlugins installs "<id> <version>" plugins with grafana-cli
// unless that version is already there.
func scriptGrafanaPlugins(plugins []string) string {
	var b strings.Builder
	b.WriteString("command -v grafana-cli >/dev/null 2>&1 || { echo 'grafana plugins need grafana-cli: install the grafana package (group grafana)' >&2; exit 1; }\n")
	for _, pl := range plugins {
		id, ver, _ := strings.Cut(pl, " ")
		fmt.Fprintf(&b, "if grep -Eqs '\"version\"[[:space:]]*:[[:space:]]*\"%s\"' /var/lib/grafana/plugins/%s/plugin.json; then echo %s; else fatimage_run grafana-cli plugins install %s %s; fi\n",
			regexpQuoteERE(ver), id, shQuote("unchanged grafana plugin "+pl), shQuote(id), shQuote(ver))
	}
	return b.String()
}

// regexpQuoteERE escapes the ERE metacharacters a version may hold.
func regexpQuoteERE(s string) string {
	r := strings.NewReplacer(".", `\.`, "+", `\+`)
	return r.Replace(s)
}

// scriptDisableServices stops and disables the installed units among
// names and reports only what it changed.
func scriptDisableServices(names []string) string {
	var b strings.Builder
	b.WriteString("for u in " + shList(names) + "; do\n" +
		"  case \"$u\" in *.*) ;; *) u=$u.service ;; esac\n" +
		"  if [ ! -e \"/etc/systemd/system/$u\" ] && [ ! -e \"/usr/lib/systemd/system/$u\" ]; then continue; fi\n" +
		"  if systemctl -q is-enabled \"$u\" 2>/dev/null; then systemctl -q disable \"$u\" && echo \"disabled $u\"; fi\n" +
		"  if systemctl -q is-active \"$u\" 2>/dev/null; then systemctl stop \"$u\" && echo \"stopped $u\"; fi\n" +
		"done\n")
	return b.String()
}

// scriptPlaceFile installs an uploaded file, or unpacks an uploaded
// directory tarball, at dst with the given owner; modes come from the
// tarball (see tarDir) or mode.
func scriptPlaceFile(tmp, dst, owner, group, mode string, dir bool) string {
	q := shQuote
	if !dir {
		return fmt.Sprintf("install -D -o %s -g %s -m %s %s %s\nrm -f %s\necho %s\n",
			q(owner), q(group), q(mode), q(tmp), q(dst), q(tmp), q("placed "+dst))
	}
	return fmt.Sprintf("install -d -m 0755 %s\ntar -xf %s -C %s --no-same-owner\nchown -R -h %s %s\nrm -f %s\necho %s\n",
		q(dst), q(tmp), q(dst), q(owner+":"+group), q(dst), q(tmp), q("placed "+dst+"/"))
}

// scriptMakeCache loads the metadata of the enabled sections of repos.
func scriptMakeCache(repos []Repo) string {
	var ids []string
	for _, r := range repos {
		if r.Enabled == nil || *r.Enabled {
			ids = append(ids, "--enablerepo="+shQuote(r.RepoName))
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return "fatimage_run dnf -y makecache --disablerepo='*' " + strings.Join(ids, " ") + "\n"
}
