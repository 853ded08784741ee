package fatimage

import (
	"strings"
	"testing"
)

// An appliances_local_users entry's group is the user's primary group
// only when its user names it, as Ansible's group then user module make
// them.
func TestLocalUserGroups(t *testing.T) {
	user := func(extra map[string]any) map[string]any {
		u := map[string]any{"name": "svc", "uid": float64(990)}
		for k, v := range extra {
			u[k] = v
		}
		return u
	}
	group := map[string]any{"name": "svc", "gid": float64(985)}
	for _, tc := range []struct {
		name           string
		entry          map[string]any
		group, primary string
		gid            int
		err            string
	}{
		// grafana's and prometheus' shape: useradd -N's group on the VM
		{name: "group apart", entry: map[string]any{"group": group, "user": user(nil)}, group: "svc", gid: 985},
		{name: "user names the entry's group", entry: map[string]any{"group": group, "user": user(map[string]any{"group": "svc"})},
			group: "svc", gid: 985, primary: "svc"},
		{name: "user's group only", entry: map[string]any{"user": user(map[string]any{"group": "wheel"})}, group: "wheel", primary: "wheel"},
		{name: "no group", entry: map[string]any{"user": user(nil)}},
		{name: "groups differ", entry: map[string]any{"group": group, "user": user(map[string]any{"group": "wheel"})},
			err: `user "svc": its group "wheel" is not the entry's group "svc" (the plugin makes one group per user)`},
		{name: "group without a name", entry: map[string]any{"group": map[string]any{"gid": float64(985)}, "user": user(nil)},
			err: `user "svc": the entry's group has no name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, skip, err := localUser(tc.entry)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || skip {
				t.Fatal(err, skip)
			}
			if u.Group != tc.group || u.GID != tc.gid || u.primaryGroup() != tc.primary {
				t.Errorf("group %q gid %d primary %q, want %q %d %q", u.Group, u.GID, u.primaryGroup(), tc.group, tc.gid, tc.primary)
			}
		})
	}
}

// The appliance's grafana entry is the built-in grafana (made the same
// way); an entry giving grafana its group as primary is made as it says.
func TestLocalUserBuiltinIfSame(t *testing.T) {
	entry := func(userGroup bool) map[string]any {
		u := map[string]any{"name": "grafana", "uid": float64(984), "home": "/usr/share/grafana", "shell": "/sbin/nologin", "system": true}
		if userGroup {
			u["group"] = "grafana"
		}
		return map[string]any{"group": map[string]any{"name": "grafana", "gid": float64(979)}, "user": u}
	}
	u, _, err := localUser(entry(false))
	if err != nil {
		t.Fatal(err)
	}
	if b := builtinIfSame(u); b.PrimaryGroup == nil || b.CreateHome || b.primaryGroup() != "" || b.Group != "grafana" {
		t.Errorf("the appliance's grafana entry: %+v, want the built-in (group apart, home not created)", b)
	}
	u, _, err = localUser(entry(true))
	if err != nil {
		t.Fatal(err)
	}
	if b := builtinIfSame(u); b.primaryGroup() != "grafana" || !b.CreateHome {
		t.Errorf("an entry whose user names its group: %+v, want the entry's user (primary group grafana, the module's home)", b)
	}
	if !strings.Contains(u.Home, "grafana") {
		t.Errorf("home %q", u.Home)
	}
}
