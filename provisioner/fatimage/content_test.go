package fatimage

import (
	"strings"
	"testing"
)

const (
	goodSHA    = "9f5ea48e5bc7b656f8a91a32e7d7deb89f70f73dabd0d974418aca15f37d6810"
	goodCommit = "0123456789abcdef0123456789abcdef01234567"
)

// TestContentValidation: every validation message of the content kinds,
// at Prepare, each naming the field and the cause.
func TestContentValidation(t *testing.T) {
	runPrepareCases(t, []prepareCase{
		{"git ok", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://github.com/a/b.git", "tag": "v3.0", "destination": "/opt/b"}}}, ""},
		{"git tag+commit ok", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a/b.git", "tag": "v3.0", "commit": goodCommit, "destination": "/opt/b"}}}, ""},
		{"git no repo", map[string]any{"git_checkouts": []map[string]any{{"tag": "v1", "destination": "/opt/b"}}}, "git_checkouts[0]: repo is required"},
		{"git bad repo", map[string]any{"git_checkouts": []map[string]any{{"repo": "git@github.com:a/b.git", "tag": "v1", "destination": "/opt/b"}}}, `git_checkouts[0]: repo "git@github.com:a/b.git" must be an http(s) URL`},
		{"git creds in url", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://u:p@h/a/b.git", "tag": "v1", "destination": "/opt/b"}}}, `git_checkouts[0]: repo "https://h/a/b.git" must not carry credentials (user info before @)`},
		{"git no ref", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "destination": "/opt/b"}}}, "git_checkouts[0]: one of tag, commit or branch is required"},
		{"git tag and branch", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1", "branch": "main", "destination": "/opt/b"}}}, "git_checkouts[0]: tag and branch exclude each other"},
		{"git branch+commit", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "branch": "main", "commit": goodCommit, "destination": "/opt/b"}}}, "git_checkouts[0]: commit pins a tag, not a branch"},
		{"git bad commit", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "commit": "abc123", "destination": "/opt/b"}}}, `git_checkouts[0]: commit "abc123" must be a full commit id`},
		{"git bad tag", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1..2", "destination": "/opt/b"}}}, `git_checkouts[0]: tag "v1..2" is not a valid git ref name`},
		{"git relative dest", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1", "destination": "opt/b"}}}, `git_checkouts[0]: destination "opt/b" must be absolute`},
		{"git bad owner", map[string]any{"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1", "destination": "/opt/b", "owner": "Root!"}}}, `git_checkouts[0]: owner "Root!" must be user or user:group`},
		{"download ok", map[string]any{"downloads": []map[string]any{{"url": "https://h/f.tgz", "sha256": goodSHA, "destination": "/opt/f", "extract": true, "strip_components": 1, "owner": "podman:podman"}}}, ""},
		{"download no sha", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "destination": "/opt/f"}}}, "downloads[0]: sha256 is required: the download is checked before anything is installed"},
		{"download bad sha", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": "xyz", "destination": "/opt/f"}}}, "downloads[0]: sha256 must be 64 hex digits"},
		{"download bad url", map[string]any{"downloads": []map[string]any{{"url": "ftp://h/f", "sha256": goodSHA, "destination": "/opt/f"}}}, `downloads[0]: url "ftp://h/f" must be an http(s) URL`},
		{"download no url", map[string]any{"downloads": []map[string]any{{"sha256": goodSHA, "destination": "/opt/f"}}}, "downloads[0]: url is required"},
		{"download relative", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "f"}}}, `downloads[0]: destination "f" must be absolute`},
		{"download strip no extract", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/f", "strip_components": 1}}}, "downloads[0]: strip_components needs extract = true"},
		{"download negative strip", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/f", "extract": true, "strip_components": -1}}}, "downloads[0]: strip_components -1 must be between 0 and 16"},
		{"download mode with extract", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/f", "extract": true, "mode": "0755"}}}, "downloads[0]: mode applies to a file; with extract = true the archive's modes are kept"},
		{"download bad mode", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/f", "mode": "rwx"}}}, `downloads[0]: mode "rwx" must be octal like 0644`},
		{"download bad owner", map[string]any{"downloads": []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/f", "owner": "a:b:c"}}}, `downloads[0]: owner "a:b:c" must be user or user:group`},
		{"same destination", map[string]any{
			"git_checkouts": []map[string]any{{"repo": "https://h/a.git", "tag": "v1", "destination": "/opt/x"}},
			"downloads":     []map[string]any{{"url": "https://h/f", "sha256": goodSHA, "destination": "/opt/x"}}}, "downloads[0]: destination /opt/x is also git_checkouts[0]'s"},
		{"content_source", map[string]any{"content_source": "cloud"}, `content_source: "cloud" is not one of vm, host`},
	})
}

// prepareCase is a configuration and the error it must give ("" = valid).
type prepareCase struct {
	name string
	raw  map[string]any
	want string
}

func runPrepareCases(t *testing.T, cases []prepareCase) {
	t.Helper()
	clearArkEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p Provisioner
			err := p.Prepare(tc.raw)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestGitBranchWarnsAndSourceDefault(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"binary_source": "host", "git_checkouts": []map[string]any{
		{"repo": "https://h/a.git", "branch": "main", "destination": "/opt/a"},
		{"repo": "https://h/b.git", "tag": "v1", "destination": "/opt/b"},
	}}); err != nil {
		t.Fatal(err)
	}
	w := p.plan.contentWarnings()
	if len(w) != 1 || !strings.HasPrefix(w[0], "git_checkouts[0]: branch main of https://h/a.git is not reproducible") {
		t.Fatalf("warnings %q", w)
	}
	if p.config.contentSource() != "host" {
		t.Fatalf("content_source defaults to binary_source, got %q", p.config.contentSource())
	}
}
