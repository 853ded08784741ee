package realcloud

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

// Tier is a real-cloud state directory (make realcloud-up writes it).
type Tier struct {
	Dir   string
	Ports Ports
}

// Open is the tier of REALCLOUD_DIR, else of <module root>/.realcloud.
func Open(moduleRoot string) *Tier {
	dir := os.Getenv("REALCLOUD_DIR")
	if dir == "" {
		dir = filepath.Join(moduleRoot, ".realcloud")
	}
	return &Tier{Dir: dir, Ports: DefaultPorts}
}

// Secret is a password of the tier, made on first use (up.sh makes the
// same files).
func (t *Tier) Secret(name string) (string, error) {
	path := filepath.Join(t.Dir, "secrets", name)
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) && err != nil {
		return "", err
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	s := strings.NewReplacer("/", "", "+", "", "=", "").Replace(base64.StdEncoding.EncodeToString(raw))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return s, os.WriteFile(path, []byte(s), 0o600)
}

// Provider authenticates as the tier's admin (admin) or as the member
// user in the member project.
func (t *Tier) Provider(ctx context.Context, admin bool) (*gophercloud.ProviderClient, error) {
	opts, err := t.authOptions(admin)
	if err != nil {
		return nil, err
	}
	p, err := openstack.AuthenticatedClient(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("realcloud: authenticating at %s (is `make realcloud-up` done?): %w", opts.IdentityEndpoint, err)
	}
	return p, nil
}

func (t *Tier) authOptions(admin bool) (gophercloud.AuthOptions, error) {
	user, project, secret := MemberUser, MemberProject, "member"
	if admin {
		user, project, secret = "admin", "admin", "admin"
	}
	pw, err := t.Secret(secret)
	if err != nil {
		return gophercloud.AuthOptions{}, err
	}
	return gophercloud.AuthOptions{
		IdentityEndpoint: AuthURL(t.Ports), Username: user, Password: pw, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: project, DomainName: "Default"}, AllowReauth: true,
	}, nil
}

// EndpointOpts selects the tier's region and public endpoints.
var EndpointOpts = gophercloud.EndpointOpts{Region: Region, Availability: gophercloud.AvailabilityPublic}

// WriteEnv writes clouds.yaml and the env file (both 0600: they hold
// passwords), with the lab's variable names where they mean the same, so
// a test can run against either.
func (t *Tier) WriteEnv(shareProjectID string) (map[string]string, error) {
	entry := func(admin bool) (map[string]any, error) {
		o, err := t.authOptions(admin)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"auth": map[string]any{
				"auth_url": o.IdentityEndpoint, "username": o.Username, "password": o.Password,
				"project_name": o.Scope.ProjectName, "user_domain_name": "Default", "project_domain_name": "Default",
			},
			"region_name": Region, "interface": "public", "identity_api_version": 3,
		}, nil
	}
	member, err := entry(false)
	if err != nil {
		return nil, err
	}
	admin, err := entry(true)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(map[string]any{"clouds": map[string]any{CloudName: member, AdminCloudName: admin}}, "", "  ")
	if err != nil {
		return nil, err
	}
	cloudsFile := filepath.Join(t.Dir, "clouds.yaml")
	if err := os.WriteFile(cloudsFile, data, 0o600); err != nil {
		return nil, err
	}
	env := map[string]string{
		"OS_CLOUD":              CloudName,
		"OS_CLIENT_CONFIG_FILE": cloudsFile,
		"REALCLOUD_DIR":         t.Dir,
		"LAB_BASE_IMAGE":        BaseImageName,
		"LAB_NETWORK":           TenantNetwork,
		"LAB_FLOATING_NETWORK":  FloatingNetwork,
		"LAB_ADMIN_CLOUD":       AdminCloudName,
		"LAB_SHARE_PROJECT_ID":  shareProjectID,
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(env[k], "'", `'\''`))
	}
	return env, os.WriteFile(filepath.Join(t.Dir, "env"), []byte(b.String()), 0o600)
}

// Env reads the env file up.sh wrote, as "K=V" entries.
func (t *Tier) Env() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(t.Dir, "env"))
	if err != nil {
		return nil, fmt.Errorf("realcloud: no env file (run `make realcloud-up`): %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out = append(out, k+"="+strings.ReplaceAll(strings.Trim(v, "'"), `'\''`, "'"))
	}
	return out, nil
}
