package sbom

import (
	"encoding/json"
	"fmt"
	"strings"
)

// section is one kind of change as the text and Markdown reports list it.
type section struct {
	title   string
	changes []Change
}

func (r *Report) sections() []section {
	p := r.Packages
	return []section{
		{"Packages upgraded", p.Upgraded}, {"Packages downgraded", p.Downgraded},
		{"Packages added", p.Added}, {"Packages removed", p.Removed},
		{"Kernels", r.Kernels}, {"Snapshots", r.Snapshots}, {"Containers", r.Containers},
		{"Python packages", r.Python}, {"Git checkouts", r.Git}, {"Downloads", r.Downloads},
		{"Binaries", r.Binaries}, {"Users", r.Users}, {"Source image", r.SourceImage},
	}
}

// Changed reports whether anything differs.
func (r *Report) Changed() bool {
	for _, s := range r.sections() {
		if len(s.changes) > 0 {
			return true
		}
	}
	return false
}

func (r *Report) headline() string {
	if r.Previous == "" {
		return fmt.Sprintf("no previous image to compare with: the whole content (%d packages)", r.Count)
	}
	if !r.Changed() {
		return fmt.Sprintf("no change since %s (%d packages)", r.Previous, r.Count)
	}
	p := r.Packages
	return fmt.Sprintf("since %s: %d packages upgraded, %d downgraded, %d added, %d removed (%d packages)",
		r.Previous, len(p.Upgraded), len(p.Downgraded), len(p.Added), len(p.Removed), r.Count)
}

// Summary is a few lines for the build output: the headline, then one
// line per other kind of change that has any, naming up to 5 items.
func (r *Report) Summary() string {
	lines := []string{r.headline()}
	for _, s := range r.sections()[4:] {
		if len(s.changes) == 0 {
			continue
		}
		var names []string
		for i, c := range s.changes {
			if i == 5 {
				names = append(names, fmt.Sprintf("and %d more", len(s.changes)-5))
				break
			}
			names = append(names, c.Name)
		}
		lines = append(lines, fmt.Sprintf("%s: %d changed (%s)", s.title, len(s.changes), strings.Join(names, ", ")))
	}
	if len(r.Unknown) > 0 && r.Previous != "" {
		lines = append(lines, "not compared (the previous record lacks them): "+strings.Join(r.Unknown, ", "))
	}
	return strings.Join(lines, "\n") + "\n"
}

// Markdown is the report as a CI job summary: the headline, then a
// table per kind of change.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("## Image changes\n\n" + r.headline() + "\n")
	if len(r.Unknown) > 0 && r.Previous != "" {
		b.WriteString("\nNot compared (the previous record lacks them): " + strings.Join(r.Unknown, ", ") + ".\n")
	}
	for _, s := range r.sections() {
		if len(s.changes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s (%d)\n\n| | before | after |\n|---|---|---|\n", s.title, len(s.changes))
		for _, c := range s.changes {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(c.Name), mdCell(c.From), mdCell(c.To))
		}
	}
	return b.String()
}

func mdCell(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s) + "`"
}

// JSON is the report for tools.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	return append(b, '\n'), err
}
