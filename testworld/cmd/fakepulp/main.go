// Command fakepulp runs the pulpfake Pulp content app double as a process,
// for demos and manual testing. It serves until SIGINT or SIGTERM.
//
//	fakepulp -demo -env-file /tmp/ark.env
//	. /tmp/ark.env && curl -u "$ARK_USERNAME:$ARK_PASSWORD" "$ARK_CONTENT_URL/"
//
// A running instance can be steered through its /_control/ JSON endpoint.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// Demo credentials, also written to -env-file in -demo mode.
const (
	demoUser     = "demo"
	demoPassword = "demo-password"
)

var (
	demoPulpPaths = []string{
		"rocky/9.6/BaseOS/x86_64/os",
		"rocky/9.6/AppStream/x86_64/os",
		"rocky/9.6/CRB/x86_64/os",
		"rocky/9.6/extras/x86_64/os",
		"epel/9/Everything/x86_64",
		"OpenHPC/3/EL_9",
		"OpenHPC/3/updates/EL_9",
	}
	demoTimestamps = []string{"20250102T030405", "20250601T120000", "20251106T211545"}
)

// demoHidden is a not-yet-released snapshot: served but not listed.
const demoHidden = "rocky/9.6/BaseOS/x86_64/os/20260101T000000"

// config is the -config file format.
type config struct {
	Distributions []pulpfake.Distribution `json:"distributions"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "fakepulp:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage error")

// run is main without the process plumbing, so it can be tested in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakepulp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	formatName := fs.String("format", "3.115", "listing format: 3.115, 3.22 or legacy")
	latency := fs.Duration("latency", 0, "latency added to every content request")
	configFile := fs.String("config", "", `JSON file {"distributions":[...]}`)
	demo := fs.Bool("demo", false, "seed a guarded demo set of Rocky/EPEL/OpenHPC snapshots")
	envFile := fs.String("env-file", "", "write ARK_* shell export lines to this file once listening")
	pidFile := fs.String("pid-file", "", "write the process id to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakepulp: unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	format, err := pulpfake.ParseFormat(*formatName)
	if err != nil {
		fmt.Fprintln(stderr, "fakepulp:", err)
		return errUsage
	}

	srv := pulpfake.New(pulpfake.Options{Addr: *listen, Format: format, Latency: *latency})
	if *configFile != "" {
		if err := loadConfig(srv, *configFile); err != nil {
			return err
		}
	}
	if *demo {
		seedDemo(srv)
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()

	if *pidFile != "" {
		if err := writeFileAtomic(*pidFile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
			return err
		}
		defer os.Remove(*pidFile)
	}
	if *envFile != "" {
		if err := writeFileAtomic(*envFile, envLines(srv.ContentURL(), *demo)); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "fakepulp listening on %s\n", srv.ContentURL())

	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

func loadConfig(srv *pulpfake.Server, name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var cfg config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, d := range cfg.Distributions {
		if err := pulpfake.ValidateBasePath(d.BasePath); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if d.Dir != "" && !filepath.IsAbs(d.Dir) {
			// Relative dirs are relative to the config file, not the cwd.
			d.Dir = filepath.Join(filepath.Dir(name), d.Dir)
		}
		srv.AddDistribution(d)
	}
	return nil
}

func seedDemo(srv *pulpfake.Server) {
	guard := &pulpfake.Guard{Users: map[string]string{demoUser: demoPassword}}
	for _, p := range demoPulpPaths {
		for _, ts := range demoTimestamps {
			srv.AddDistribution(pulpfake.Distribution{BasePath: p + "/" + ts, Guard: guard})
		}
	}
	srv.AddDistribution(pulpfake.Distribution{BasePath: demoHidden, Hidden: true, Guard: guard})
}

func envLines(contentURL string, demo bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "export ARK_CONTENT_URL=%s\n", shellQuote(contentURL))
	if demo {
		fmt.Fprintf(&b, "export ARK_USERNAME=%s\n", shellQuote(demoUser))
		fmt.Fprintf(&b, "export ARK_PASSWORD=%s\n", shellQuote(demoPassword))
	}
	return b.Bytes()
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote leaves plain values bare so the file reads naturally.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeFileAtomic writes via a temporary file and rename so a reader polling
// for the file never sees it half written. The file is private (0600) since
// it may hold credentials.
func writeFileAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
