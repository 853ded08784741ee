// Command realcloud is the Go half of make realcloud-up/-status (the
// shell half is testworld/realcloud/*.sh):
//
//	realcloud configs            render the services' configs (FATCLOUD_* env)
//	realcloud guests             run the guest host (Nova's VMs) until SIGTERM
//	realcloud seed identity      catalog, service user, member user, projects
//	realcloud seed resources     flavors, networks, router, base image, env file
//	realcloud status             the cloud's resources as JSON, by kind
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/realcloud"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	root, err := packertest.ModuleRoot()
	if err != nil {
		return err
	}
	t := realcloud.Open(root)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	switch {
	case len(args) == 1 && args[0] == "configs":
		sp, err := t.Secret("service")
		if err != nil {
			return err
		}
		ms, err := t.Secret("metadata")
		if err != nil {
			return err
		}
		return realcloud.WriteConfigs(filepath.Join(t.Dir, "etc"), realcloud.Values{
			Host: realcloud.Host, State: t.Dir, DB: os.Getenv("FATCLOUD_DB"), RPC: os.Getenv("FATCLOUD_RPC"),
			ServiceUser: realcloud.ServiceUser, ServicePassword: sp, MetadataSecret: ms, Ports: t.Ports,
		})
	case len(args) == 1 && args[0] == "guests":
		return guests(t)
	case len(args) == 2 && args[0] == "seed" && args[1] == "identity":
		return t.SeedIdentity(ctx)
	case len(args) == 2 && args[0] == "seed" && args[1] == "resources":
		return t.SeedResources(ctx)
	case len(args) == 1 && args[0] == "status":
		r, err := t.Snapshot(ctx)
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for k, v := range r {
			counts[k] = len(v)
		}
		out, err := json.MarshalIndent(map[string]any{"counts": counts, "resources": r}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Println(string(out))
		return nil
	}
	return fmt.Errorf("usage: realcloud configs | guests | seed identity | seed resources | status")
}

// guests runs the guest host in the foreground until SIGTERM or SIGINT.
func guests(t *realcloud.Tier) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return t.RunGuests(ctx, func(format string, args ...any) {
		fmt.Printf("%s %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	})
}
