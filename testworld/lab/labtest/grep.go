package labtest

import "strings"

// GrepAsRoot is a shell command for a negative check in a VM: it runs
// `grep args` as root and prints what grep matched. It succeeds when grep
// found matches or none, and fails when grep could not search (a missing
// path, exit status 2) or sudo refused. `sudo -n grep ... || true` would
// print nothing in all those cases and let the check pass without having
// looked. args is shell text: quote patterns with ShQuote.
func GrepAsRoot(args string) string {
	return "sudo -n sh -c " + ShQuote("grep "+args+"; test $? -le 1")
}

// ShQuote quotes s for a POSIX shell.
func ShQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
