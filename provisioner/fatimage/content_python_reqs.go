package fatimage

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// requirement is one requirement and where it was written, for errors.
type requirement struct {
	text  string
	where string // "" for an inline one, else "<file> line <n>"
}

// requirements are the inline requirements, then requirements_file's,
// each with the file and line it starts on.
func (e PythonEnv) requirements() ([]requirement, error) {
	var out []requirement
	for _, r := range e.Requirements {
		out = append(out, requirement{text: r})
	}
	if e.RequirementsFile == "" {
		return out, nil
	}
	data, err := os.ReadFile(e.RequirementsFile)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	cur, n, start := "", 0, 0
	for sc.Scan() {
		n++
		if cur == "" {
			start = n
		}
		l := strings.TrimSpace(sc.Text())
		if i := strings.Index(l, " #"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if strings.HasPrefix(l, "#") {
			l = ""
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSpace(strings.TrimSuffix(l, "\\")) + " "
			continue
		}
		cur += l
		if strings.TrimSpace(cur) != "" {
			out = append(out, requirement{strings.TrimSpace(cur), fmt.Sprintf("%s line %d", e.RequirementsFile, start)})
		}
		cur = ""
	}
	return out, sc.Err()
}
