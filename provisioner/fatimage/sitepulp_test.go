package fatimage

import (
	"strings"
	"testing"
)

// Repositories the data source mirrored into an unguarded site Pulp carry
// credentials = "none": their sections get no username/password, and when
// all are so marked the Ark password from the environment never reaches
// the VM.
func TestSitePulpReposTakeNoCredentials(t *testing.T) {
	t.Setenv("ARK_USERNAME", "ark-user")
	t.Setenv("ARK_PASSWORD", "Ark-Env-Pw-3")
	site := func(name, outcome string) map[string]any {
		r := goodRepo()
		r["name"], r["repo_name"] = name, name
		r["baseurl"] = "http://pulp.site:8080/pulp/content/x/20251106T211545"
		r["site_pulp"], r["credentials"] = outcome, "none"
		return r
	}
	var p Provisioner
	if err := p.Prepare(map[string]any{"repos": []any{site("baseos", "created"), site("appstream", "reused")}}); err != nil {
		t.Fatal(err)
	}
	if p.plan.repoPassword != "" || p.plan.repoUsername != "" {
		t.Fatalf("credentials kept for a site that needs none: %q", p.plan.repoUsername)
	}
	for _, f := range renderRepoFiles(p.plan.repos, "u", "Pw-9", false) {
		if strings.Contains(f.Content, "password") || strings.Contains(f.Content, "site_pulp") || strings.Contains(f.Content, "credentials") {
			t.Fatalf("%s:\n%s", f.Name, f.Content)
		}
	}
	if got, want := sitePulpSummary(p.plan.repos), "fatimage: site Pulp: 1 snapshots synced now, 1 already served (synced: baseos)"; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}

	// A guarded site (no credentials key): the sections carry them.
	mixed := site("baseos", "created")
	delete(mixed, "credentials")
	var q Provisioner
	if err := q.Prepare(map[string]any{"repos": []any{mixed}}); err != nil {
		t.Fatal(err)
	}
	if q.plan.repoPassword != "Ark-Env-Pw-3" || !strings.Contains(renderRepoFiles(q.plan.repos, "u", "Pw-9", false)[0].Content, "password = Pw-9") {
		t.Fatal("credentials dropped for a repository that needs them")
	}
	bad := site("baseos", "created")
	bad["credentials"] = "site"
	var b Provisioner
	if err := b.Prepare(map[string]any{"repos": []any{bad}}); err == nil || !strings.Contains(err.Error(), `repos[0]: credentials "site" must be "none" or empty`) {
		t.Fatalf("bad credentials value: %v", err)
	}
	if sitePulpSummary(testRepos()) != "" {
		t.Fatal("summary without site_pulp")
	}
}
