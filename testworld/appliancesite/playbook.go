package appliancesite

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// Roles is this package's roles directory (roles/): site_marker, a role
// the plugin does not know, which writes /etc/fatimage-site-role.
func Roles() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "roles")
}

// AddToFatimage appends plays (YAML, a list) to the site's
// ansible/fatimage.yml: the private tree's ansible directory becomes a
// directory of links to the checkout's entries but fatimage.yml, which
// becomes a copy with the plays added. The site's roles path gains Roles.
func AddToFatimage(tb testing.TB, s *appliance.Site, plays string) {
	tb.Helper()
	EditFile(tb, s, "ansible/fatimage.yml", func(orig string) string { return orig + "\n" + plays })
	s.RolesPath = append(s.RolesPath, Roles())
}

// EditFile makes rel, a file of the checkout ("ansible/roles/x/tasks/y.yml"),
// the site's own copy edited by edit, as a site bumps a pin in its
// checkout: each directory on the way becomes a directory of links to the
// checkout's entries. edit must change the file.
func EditFile(tb testing.TB, s *appliance.Site, rel string, edit func(string) string) {
	tb.Helper()
	parts := strings.Split(rel, "/")
	dir := s.Repo
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink != 0 {
			linkDir(tb, dir)
		}
	}
	file := filepath.Join(dir, parts[len(parts)-1])
	orig, err := os.ReadFile(file)
	must(tb, err)
	edited := edit(string(orig))
	if edited == string(orig) {
		tb.Fatalf("editing %s changed nothing", rel)
	}
	must(tb, os.Remove(file))
	must(tb, os.WriteFile(file, []byte(edited), 0o644))
}

// linkDir turns dst, a link to a directory of the checkout, into a
// directory of links to that directory's entries.
func linkDir(tb testing.TB, dst string) {
	tb.Helper()
	src, err := os.Readlink(dst)
	must(tb, err)
	must(tb, os.Remove(dst))
	must(tb, os.Mkdir(dst, 0o755))
	link(tb, src, dst)
}

// SiteRolePlay is a play running site_marker on the build host, as a
// site adds a role of its own to fatimage.yml.
const SiteRolePlay = `- name: A site's own role
  hosts: builder
  become: true
  gather_facts: true
  tasks:
    - name: Site marker
      ansible.builtin.include_role:
        name: site_marker
`
