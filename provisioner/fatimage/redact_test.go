package fatimage

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// Prepare registers repo_password and every registry password, with their
// Basic forms, so the plugin's Ui, log and errors hide them (Packer core's
// filter knows none of a plugin's secrets).
func TestPrepareRegistersSecretsWithRedact(t *testing.T) {
	clearArkEnv(t)
	const repoPW, regPW = "Repo-Redact/pw+1", "Reg-Redact:pw 2"
	var p Provisioner
	err := p.Prepare(map[string]any{"repos": []any{goodRepo()}, "repo_username": "ark-u", "repo_password": repoPW,
		"container_registries": []map[string]any{{"host": "r.example:5000", "username": "reg-u", "password": regPW}}})
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, leak := range []string{repoPW, url.QueryEscape(repoPW), b64("ark-u:" + repoPW), regPW, url.PathEscape(regPW), b64("reg-u:" + regPW)} {
		if got := redact.String("x " + leak + " y"); got != "x "+redact.Marker+" y" {
			t.Errorf("%q redacted to %q", leak, got)
		}
	}
	if strings.Contains(redact.String("repo_password"), redact.Marker) {
		t.Fatal("redaction hides ordinary words")
	}
}
