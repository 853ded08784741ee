package fatimage

import (
	"embed"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Every shell script the provisioner runs on the VM is assembled from the
// embedded files in scripts/ (checked by `make shellcheck`) by vmScript
// alone: the lines setting the run's and the step's inputs as shell
// variables, prelude.sh, the bodies it uses (function definitions, each
// once) and calls of those functions with quoted arguments. Values reach
// the scripts only as quoted words, never spliced into shell code; the
// few commands run outside a script are quoted words too (shellCommand).

//go:embed scripts/*.sh
var scriptFiles embed.FS

// scriptBody is the embedded scripts/<name>.sh, or a content kind's
// shell (kindShells).
func scriptBody(name string) string {
	if sh, ok := kindShells[name]; ok {
		return sh
	}
	b, err := scriptFiles.ReadFile("scripts/" + name + ".sh")
	if err != nil {
		panic("fatimage: no embedded script " + name) // a typo caught by every test
	}
	return string(b)
}

// vmScript is one script to run on the VM.
type vmScript struct {
	bodies []string // scripts/<name>.sh, in order, each once
	vars   []string // NAME='value' lines
	calls  strings.Builder
	// secrets are credential-bearing files the script gets in
	// $FATIMAGE_SECRETDIR, a private directory on the tmpfs /run, sent on
	// its stdin: they never touch the VM's disk (see secretDir).
	secrets []staged
}

func newScript(bodies ...string) *vmScript { return (&vmScript{}).use(bodies...) }

// use adds the bodies the script does not have yet.
func (s *vmScript) use(bodies ...string) *vmScript {
	for _, b := range bodies {
		if !slices.Contains(s.bodies, b) {
			s.bodies = append(s.bodies, b)
		}
	}
	return s
}

// add appends o to s: its bodies (those s lacks), variables, secrets
// and calls, so that parts of a step's script are built apart.
func (s *vmScript) add(o *vmScript) *vmScript {
	s.use(o.bodies...)
	s.vars = append(s.vars, o.vars...)
	for _, f := range o.secrets {
		s.addSecret(f)
	}
	s.calls.WriteString(o.calls.String())
	return s
}

// set defines the shell variable name (upper case: shellcheck takes such
// names as the environment's) as value.
func (s *vmScript) set(name, value string) *vmScript {
	s.vars = append(s.vars, name+"="+shQuote(value))
	return s
}

// setList defines name as the values, one a line.
func (s *vmScript) setList(name string, values []string) *vmScript {
	return s.set(name, strings.Join(values, "\n"))
}

// call appends a call of a body's function with quoted arguments.
func (s *vmScript) call(fn string, args ...string) *vmScript {
	s.calls.WriteString(shellCommand(fn, args...) + "\n")
	return s
}

// shellCommand is a command line: cmd, a name the provisioner's code
// spells, and its arguments quoted. It writes the calls of a script and
// the few commands run outside one (making the work dir).
func shellCommand(cmd string, args ...string) string {
	var b strings.Builder
	b.WriteString(cmd)
	for _, a := range args {
		b.WriteString(" " + shQuote(a))
	}
	return b.String()
}

// secret adds a credential-bearing file to the script's secrets (once
// by name) and returns its path on the VM.
func (s *vmScript) secret(workDir, name string, data []byte) string {
	s.addSecret(staged{name, data})
	return path.Join(secretDir(workDir), name)
}

// addSecret adds f unless a secret of its name is there.
func (s *vmScript) addSecret(f staged) {
	if !slices.ContainsFunc(s.secrets, func(g staged) bool { return g.Name == f.Name }) {
		s.secrets = append(s.secrets, f)
	}
}

// secretDir is the run's directory for credentials on the VM: on /run, a
// tmpfs, so that no credential is ever written to a block of the disk a
// snapshot copies (a file's old blocks stay on the disk after the file is
// rewritten or removed). Each script with secrets makes it and removes it
// when it ends, failed or not; a reboot empties /run anyway.
func secretDir(workDir string) string { return path.Join("/run", path.Base(workDir)) }

// render is the whole script for a run with this work dir and login user.
func (s *vmScript) render(workDir, loginUser string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FATIMAGE_WORKDIR=%s\nFATIMAGE_LOGIN_USER=%s\nFATIMAGE_SECRETDIR=%s\n", shQuote(workDir), shQuote(loginUser), shQuote(secretDir(workDir)))
	for _, v := range s.vars {
		b.WriteString(v + "\n")
	}
	b.WriteString(scriptBody("prelude"))
	for _, n := range s.bodies {
		b.WriteString(scriptBody(n))
	}
	if len(s.secrets) > 0 {
		b.WriteString("fatimage_secrets_in\n")
	}
	b.WriteString(s.calls.String())
	return b.String()
}

// shQuote quotes s for POSIX sh; a word of decimal digits (a count, an
// index, a 0/1 flag) needs no quotes and gets none.
func shQuote(s string) string {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// b01 is 1 for true, 0 for false, as repo files and the scripts take it.
func b01(v bool) int {
	if v {
		return 1
	}
	return 0
}

// flag01 is b01 as a script argument.
func flag01(v bool) string { return fmt.Sprint(b01(v)) }

// empty reports whether the script calls nothing.
func (s *vmScript) empty() bool { return s.calls.Len() == 0 }

// writeScriptCommand is the command writing script to remote, under
// umask 077 only while it is written: the script itself runs under the
// login's umask (022), or every file it makes (grafana plugins, unpacked
// binaries) would be unreadable to the services that run as their own
// users. The script travels as base64, a word without a character the
// shell reads (the bench's floor and the tests parse it so).
func writeScriptCommand(script, remote string) string {
	return "(umask 077 && printf %s " + base64.StdEncoding.EncodeToString([]byte(script)) + " | base64 -d > " + shQuote(remote) + ")"
}
