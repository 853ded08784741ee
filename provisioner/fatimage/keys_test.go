package fatimage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// siteKey stands for a site's own key block: any valid block will do.
var siteKey = func() string { k, _ := gpgkeys.ByName("ceph-release", "9"); return string(k.Armored()) }()

func arkRepo(name, file string) map[string]any {
	return map[string]any{"name": name, "repo_file": file, "repo_name": name, "gpgcheck": true,
		"baseurl": "https://ark.example/pulp/content/" + name + "/20251106T211545"}
}

// keysString is what the repos step's key calls write and import: a
// built-in key's path for each OS major ("-" replaced by an entry), an
// entry's path with its block (key) or the image's own file (image).
func keysString(calls [][]string) string {
	var out []string
	for i, c := range calls {
		switch c[0] {
		case "install_builtin_key":
			s := "builtin:" + c[1]
			for j := 2; j+2 < len(c); j += 3 {
				s += "," + c[j] + "=" + strings.TrimPrefix(c[j+1], gpgkeys.Dir)
			}
			out = append(out, s)
		case "import_key":
			if i > 0 && calls[i-1][0] == "install_key" {
				out = append(out, strings.TrimPrefix(c[1], gpgkeys.Dir)+"=key")
			} else {
				out = append(out, strings.TrimPrefix(c[1], gpgkeys.Dir)+"=image")
			}
		}
	}
	return strings.Join(out, " ")
}

// wantImageKeys prepares raw and checks its imageKeys against want.
func wantImageKeys(t *testing.T, raw map[string]any, want string) *plan {
	t.Helper()
	var c Config
	p, err := c.prepare(raw)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := keys.Script("/w", repoNames(p.repos), p.GPGKeys)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysString(cs.Calls); got != want {
		t.Errorf("keys\n got %s\nwant %s", got, want)
	}
	return p
}

// The standard repositories in repos bring their built-in keys, once per
// path, in repos order; the Rocky and unsigned repositories bring none.
func TestImageKeysFromRepos(t *testing.T) {
	clearArkEnv(t)
	raw := map[string]any{"repos": []any{
		arkRepo("baseos", "rocky"), arkRepo("epel", "epel"), arkRepo("epel-cisco-openh264", "epel-cisco-openh264"),
		arkRepo("OpenHPC", "OpenHPC"), arkRepo("OpenHPC-updates", "OpenHPC"), arkRepo("Ceph", "ceph"),
		arkRepo("grafana", "grafana"), arkRepo("ondemand-web", "ondemand-web"), arkRepo("TurboVNC", "TurboVNC"),
		arkRepo("cernvmfs_cfg", "cvmfs"), arkRepo("cernvmfs_pkgs", "cvmfs"), arkRepo("cernvmfs_eessi_cfg", "cvmfs-config-eessi"),
	}}
	wantImageKeys(t, raw, "builtin:epel,8=RPM-GPG-KEY-EPEL-8,9=RPM-GPG-KEY-EPEL-9 builtin:openhpc,8=RPM-GPG-KEY-OpenHPC-2,9=RPM-GPG-KEY-OpenHPC-3 "+
		"builtin:ceph,8=RPM-GPG-KEY-centos-storage-sig,9=RPM-GPG-KEY-centos-storage-sig "+
		"builtin:ondemand-web,8=RPM-GPG-KEY-ondemand,9=RPM-GPG-KEY-ondemand builtin:TurboVNC,8=RPM-GPG-KEY-TurboVNC,9=RPM-GPG-KEY-TurboVNC "+
		"builtin:cernvmfs,8=RPM-GPG-KEY-CernVM,9=RPM-GPG-KEY-CernVM")
}

// A gpg_keys entry with a built-in's path replaces it for that OS major
// (with the site's block, or the image's own file); builtin adds a key no
// repository brings; the entries follow the built-ins.
func TestImageKeysOverride(t *testing.T) {
	clearArkEnv(t)
	raw := map[string]any{
		"repos": []any{arkRepo("epel", "epel"), arkRepo("OpenHPC", "OpenHPC"), arkRepo("Ceph", "ceph")},
		"gpg_keys": []any{
			map[string]any{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-site"},
			map[string]any{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-OpenHPC-3", "key": siteKey},
			map[string]any{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9"},
			map[string]any{"builtin": "RStudio"},
		},
	}
	c := wantImageKeys(t, raw, "builtin:epel,8=RPM-GPG-KEY-EPEL-8,9=- builtin:openhpc,8=RPM-GPG-KEY-OpenHPC-2,9=- "+
		"builtin:ceph,8=RPM-GPG-KEY-centos-storage-sig,9=RPM-GPG-KEY-centos-storage-sig "+
		"RPM-GPG-KEY-site=image RPM-GPG-KEY-OpenHPC-3=key RPM-GPG-KEY-EPEL-9=image "+
		"builtin:RStudio,8=RPM-GPG-KEY-RStudio,9=RPM-GPG-KEY-RStudio")
	if c.GPGKeys[3].Path != "/etc/pki/rpm-gpg/RPM-GPG-KEY-RStudio" {
		t.Errorf("builtin's default path: %+v", c.GPGKeys[3])
	}
	// without repos, only the template's keys
	wantImageKeys(t, map[string]any{"gpg_keys": []any{map[string]any{"builtin": "ceph-release"}}},
		"builtin:ceph-release,8=RPM-GPG-KEY-ceph-release,9=RPM-GPG-KEY-ceph-release")
}

func TestGPGKeysValidation(t *testing.T) {
	clearArkEnv(t)
	for _, tc := range []struct {
		keys []any
		want string
	}{
		{[]any{map[string]any{"builtin": "rstudio"}}, `gpg_keys[0]: builtin "rstudio" is not a built-in key (built-in keys: RStudio, TurboVNC, ceph, ceph-release, cernvmfs, epel, ondemand-web, openhpc)`},
		{[]any{map[string]any{"builtin": "RStudio", "key": siteKey}}, "gpg_keys[0]: set key or builtin, not both"},
		{[]any{map[string]any{"key": siteKey}}, "gpg_keys[0]: path is required (or builtin, for a built-in key)"},
		{[]any{map[string]any{"path": "/etc/pki/rpm-gpg/K", "key": siteKey[:200] + "X" + siteKey[201:]}},
			"gpg_keys[0]: key must be an armored PGP public key block: the first key does not read whole (a corrupted block"},
		{[]any{map[string]any{"builtin": "RStudio"}, map[string]any{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-RStudio", "key": siteKey}},
			"gpg_keys[1]: path /etc/pki/rpm-gpg/RPM-GPG-KEY-RStudio is already gpg_keys[0]'s"},
		{[]any{map[string]any{"builtin": "epel"}, map[string]any{"builtin": "epel"}}, "gpg_keys[1]: path of builtin epel is already gpg_keys[0]'s"},
	} {
		var c Config
		_, err := c.prepare(map[string]any{"gpg_keys": tc.keys})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.keys, err, tc.want)
		}
	}
}

// A group's gpg_keys (e.g. a built-in vendor key) merge by path: the
// template's entry for the same path wins; a bad one names the group.
func TestGroupGPGKeys(t *testing.T) {
	clearArkEnv(t)
	group := func(keys ...map[string]any) packagesets.Group {
		var raw []any
		for _, k := range keys {
			raw = append(raw, k)
		}
		g := packagesets.Group{Name: "vendor"}
		g.Content = map[string]any{"gpg_keys": raw}
		return g
	}
	c := &plan{cfg: &Config{ContentOptions: ContentOptions{GPGKeys: []keys.GPGKey{{Path: "/etc/pki/rpm-gpg/RPM-GPG-KEY-site"}}}}, origins: map[string][]origin{}, sets: &resolved{groups: []packagesets.Group{
		group(map[string]any{"builtin": "RStudio"}, map[string]any{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-site", "key": siteKey}),
	}}}
	if errs := c.mergeGroupContent(); len(errs) > 0 {
		t.Fatal(errs)
	}
	got := fmt.Sprint(c.GPGKeys)
	if len(c.GPGKeys) != 2 || c.GPGKeys[0].Builtin != "RStudio" || c.GPGKeys[0].Path != "/etc/pki/rpm-gpg/RPM-GPG-KEY-RStudio" || c.GPGKeys[1].Key != "" {
		t.Errorf("merged gpg_keys %s", got)
	}
	c = &plan{cfg: &Config{}, origins: map[string][]origin{}, sets: &resolved{groups: []packagesets.Group{group(map[string]any{"builtin": "nosuch"})}}}
	if errs := c.mergeGroupContent(); len(errs) == 0 || !strings.Contains(errs[0].Error(), `group "vendor": gpg_keys[0]: builtin "nosuch" is not a built-in key`) {
		t.Errorf("got %v", errs)
	}
}

// A builtin whose path differs between OS majors (epel, openhpc) keeps
// each major's path; one with a path writes there on every major.
func TestBuiltinKeyPaths(t *testing.T) {
	clearArkEnv(t)
	wantImageKeys(t, map[string]any{"gpg_keys": []any{
		map[string]any{"builtin": "openhpc"},
		map[string]any{"builtin": "epel", "path": "/etc/pki/rpm-gpg/EPEL"},
	}}, "builtin:openhpc,8=RPM-GPG-KEY-OpenHPC-2,9=RPM-GPG-KEY-OpenHPC-3 builtin:epel,8=EPEL,9=EPEL")
}
