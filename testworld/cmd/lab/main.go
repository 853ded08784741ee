// Command lab runs the local lab in the background for people, the demo
// and CI scripts:
//
//	lab up      start it (idempotent) and wait until .lab/env is written
//	lab status  print every live cloud resource as JSON (exit 0)
//	lab down    stop it and everything it started
//	lab serve   run it in the foreground (what `up` starts)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".lab", "directory holding the lab's state")
	// The first start builds the VM userland with mmdebstrap: minutes.
	wait := fs.Duration("timeout", 30*time.Minute, "how long `up` waits for the lab to be ready")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "up":
		err = up(abs, *wait)
	case "serve":
		err = serve(abs)
	case "status":
		err = status(abs, os.Stdout)
	case "down":
		err = down(abs)
	default:
		usage()
	}
	if err != nil {
		fail(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: lab up|status|down|serve [-dir .lab]")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "lab:", err)
	os.Exit(1)
}

func pidFile(dir string) string { return filepath.Join(dir, "lab.pid") }
func envFile(dir string) string { return filepath.Join(dir, "env") }
func logFile(dir string) string { return filepath.Join(dir, "lab.log") }

// running returns the pid of a live lab process, or 0.
func running(dir string) int {
	data, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

func up(dir string, timeout time.Duration) error {
	if pid := running(dir); pid != 0 {
		if _, err := os.Stat(envFile(dir)); err == nil {
			fmt.Printf("lab: already running (pid %d); environment in %s\n", pid, envFile(dir))
			return nil
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	os.Remove(envFile(dir))
	log, err := os.OpenFile(logFile(dir), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "-dir", dir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlive this command and its terminal
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Printf("lab: starting (pid %d, log %s)\n", cmd.Process.Pid, logFile(dir))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		select {
		case err := <-exited:
			tail, _ := os.ReadFile(logFile(dir))
			return fmt.Errorf("the lab exited while starting (%v):\n%s", err, logtail.Lines(string(tail), 30))
		case <-deadline:
			cmd.Process.Signal(syscall.SIGTERM)
			return fmt.Errorf("the lab was not ready after %s; see %s", timeout, logFile(dir))
		case <-tick.C:
			if _, err := os.Stat(envFile(dir)); err == nil {
				fmt.Printf("lab: ready in %s; environment in %s\n", time.Since(started).Round(time.Millisecond), envFile(dir))
				return nil
			}
		}
	}
}

func serve(dir string) error {
	if pid := running(dir); pid != 0 && pid != os.Getpid() {
		return fmt.Errorf("already running as pid %d", pid)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pidFile(dir))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Printf("%s %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	l, err := lab.Start(ctx, lab.Options{Dir: dir, Network: lab.DefaultNetwork(), Logf: logf})
	if err != nil {
		return err
	}
	<-ctx.Done()
	logf("lab: stopping")
	return l.Close()
}

func status(dir string, w io.Writer) error {
	env, err := readEnv(envFile(dir))
	if err != nil || running(dir) == 0 {
		fmt.Fprintln(w, `{"running": false, "counts": {}}`)
		return nil
	}
	resp, err := http.Get(env["LAB_CONTROL_URL"] + "/status")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/status: %s", env["LAB_CONTROL_URL"], resp.Status)
	}
	var st map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return err
	}
	st["running"] = true
	// the content servers (release, git, ...) with their URLs and whether
	// VMs may reach them
	if resp, err := http.Get(env["LAB_CONTROL_URL"] + "/servers"); err == nil {
		var servers map[string]any
		if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&servers) == nil {
			st["servers"] = servers
		}
		resp.Body.Close()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}

func down(dir string) error {
	pid := running(dir)
	if pid == 0 {
		fmt.Println("lab: not running")
		return nil
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 300 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return errors.New("the lab did not stop within 30 s and was killed; check `ip netns list` for leftovers")
	}
	fmt.Println("lab: stopped")
	return nil
}

// readEnv parses the export lines lab.FormatEnv writes.
func readEnv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		env[k] = strings.ReplaceAll(strings.Trim(v, "'"), `'\''`, "'")
	}
	return env, nil
}
