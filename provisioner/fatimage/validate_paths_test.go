package fatimage

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDestructiveInputsRefused: the paths, modes, bounds and specs of
// issue #26's "destructive or wrong inputs", each refused at Prepare with
// the field and the cause.
func TestDestructiveInputsRefused(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"files": []any{m}}
	}
	dl := func(dst string, extract bool, members ...string) map[string]any {
		return map[string]any{"downloads": []map[string]any{{"url": "https://h/f.tgz", "sha256": goodSHA, "destination": dst, "extract": extract, "members": members}}}
	}
	runPrepareCases(t, []prepareCase{
		{"files dir source at /", file("source", dir, "destination", "/"), `files[0]: destination "/" is the root directory`},
		{"files dir source at /etc", file("source", dir, "destination", "/etc"), `files[0]: destination "/etc" is a system directory`},
		{"files content at /usr/bin", file("content", "x", "destination", "/usr/bin"), `files[0]: destination "/usr/bin" is a system directory`},
		{"files unclean ..", file("content", "x", "destination", "/a/../b"), `files[0]: destination "/a/../b" must be a clean path (/b:`},
		{"files unclean //", file("content", "x", "destination", "//etc/x"), `files[0]: destination "//etc/x" must be a clean path`},
		{"files trailing /", file("content", "x", "destination", "/etc/x/"), `files[0]: destination "/etc/x/" must be a clean path`},
		{"files on /proc", file("content", "1", "destination", "/proc/sys/kernel/x"), `files[0]: destination "/proc/sys/kernel/x" is under /proc`},
		{"files duplicate", map[string]any{"files": []any{map[string]any{"content": "a", "destination": "/etc/x"}, map[string]any{"content": "b", "destination": "/etc/x"}}}, "files[1]: destination /etc/x is also files[0]'s"},
		{"files mode 7777", file("content", "x", "destination", "/etc/x", "mode", "7777"), `files[0]: mode "7777" sets setuid, setgid or sticky bits`},
		{"files setuid", file("content", "x", "destination", "/usr/local/bin/x", "mode", "4755"), `files[0]: mode "4755" sets setuid`},
		{"files system directory taken over", file("directory", true, "destination", "/etc", "owner", "nobody"), `files[0]: destination "/etc" is a system directory`},
		{"files system directory world-writable", file("directory", true, "destination", "/etc", "mode", "0777"), `files[0]: mode "0777" lets group or others write the system directory /etc`},
		{"files system directory as root", file("directory", true, "destination", "/etc", "mode", "0755"), ""},
		{"gpg key at /etc/sudoers", map[string]any{"gpg_keys": []any{map[string]any{"path": "/etc/sudoers"}}}, `gpg_keys[0]: path "/etc/sudoers" must be a file in /etc/pki/rpm-gpg/`},
		{"gpg key below the keys dir", map[string]any{"gpg_keys": []any{map[string]any{"path": "/etc/pki/rpm-gpg/x/K"}}}, `gpg_keys[0]: path "/etc/pki/rpm-gpg/x/K" must be a file in /etc/pki/rpm-gpg/`},
		{"git checkout at /etc", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1", "destination": "/etc"}}}, `git_checkouts[0]: destination "/etc" is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it (a checkout replaces what is there)`},
		{"git checkout at /opt", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1", "destination": "/opt"}}}, `git_checkouts[0]: destination "/opt" is a system directory`},
		{"download extracted to /usr", dl("/usr", true), `downloads[0]: destination "/usr" is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it (an archive may add to it only with members, owned by root)`},
		{"download members into /usr/bin", dl("/usr/bin", true, "x/helm"), ""},
		{"download file at /usr/bin", dl("/usr/bin", false), `downloads[0]: destination "/usr/bin" is a system directory`},
		{"download strip huge", map[string]any{"downloads": []map[string]any{{"url": "https://h/f.tgz", "sha256": goodSHA, "destination": "/opt/f", "extract": true, "strip_components": 2147483647}}}, "downloads[0]: strip_components 2147483647 must be between 0 and 16"},
		{"download mode setgid", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/opt/f", "mode": "2755"}}}, `downloads[0]: mode "2755" sets setuid, setgid or sticky bits`},
		{"venv at /usr", map[string]any{"python_envs": []map[string]any{{"path": "/usr", "requirements": []string{"a==1"}}}}, `python_envs[0]: path "/usr" is a system directory`},
		{"user home /etc created", map[string]any{"users": []any{map[string]any{"name": "app", "uid": 5000, "home": "/etc", "create_home": true}}}, `users[0]: home "/etc" is a system directory`},
		{"login_home /etc", map[string]any{"login_home": "/etc"}, `login_home: "/etc" is a system directory`},
		{"remote_folder /", map[string]any{"remote_folder": "/"}, `remote_folder: "/" is the root directory`},
		{"remote_folder /run", map[string]any{"remote_folder": "/run"}, `remote_folder: "/run" is under /run, a runtime filesystem`},
		{"binaries at /", map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": goodSHA, "destination": "/"}}}, `binaries[0] (a): destination "/" is the root directory`},
		{"binaries mode setuid", map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": goodSHA, "mode": "4755"}}}, `binaries[0] (a): mode "4755" sets setuid`},
		{"reboot_timeout 1ns", map[string]any{"reboot_timeout": "1ns"}, "reboot_timeout: 1ns is shorter than 1m0s"},
		{"rpm url not .rpm", map[string]any{"rpm_urls": []map[string]any{{"url": "https://h/download?id=3", "sha256": goodSHA}}}, `rpm_urls[0]: url "https://h/download?id=3" does not name an .rpm file`},
		{"inventory /etc/passwd", map[string]any{"inventory": []string{passwd}}, "inventory[0]: " + passwd + ":1: not a host name, group or section header: not an Ansible INI inventory"},
		{"packages *", map[string]any{"packages": []string{"*"}}, `packages[0]: "*" matches every package`},
		{"packages glob", map[string]any{"packages": []string{"python3-*"}}, `packages[0]: "python3-*" is a glob: name the packages`},
		{"remove_packages *", map[string]any{"remove_packages": []string{"*"}}, `remove_packages[0]: "*" matches every package`},
		{"remove_packages glob", map[string]any{"remove_packages": []string{"kernel*"}}, `remove_packages[0]: "kernel*" is a glob`},
		{"update_exclude *", map[string]any{"update_exclude": []string{"*"}}, `update_exclude[0]: "*" matches every package`},
		{"update_exclude pattern", map[string]any{"update_exclude": []string{"kernel*"}}, ""},
		{"exclude **", map[string]any{"exclude": []string{"**"}}, `exclude[0]: "**" matches every package`},
		{"group with a space", map[string]any{"packages": []string{"@Development Tools"}}, ""},
	})
}
