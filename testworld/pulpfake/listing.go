package pulpfake

import (
	"fmt"
	"html"
	"strings"
)

// Format selects which pulpcore generation's directory listing HTML the
// server produces. Clients that scrape listings must cope with all of them.
type Format int

const (
	Format3115   Format = iota // pulpcore >= 3.115 (default zero value): href="./name"
	Format322                  // pulpcore 3.22 – 3.114: href="name"
	FormatLegacy               // pulpcore < 3.22: bare <ul> list
)

// ParseFormat accepts "3.115" (or "new"), "3.22" and "legacy".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "3.115", "new":
		return Format3115, nil
	case "3.22":
		return Format322, nil
	case "legacy":
		return FormatLegacy, nil
	}
	return 0, fmt.Errorf("pulpfake: unknown listing format %q (want 3.115, 3.22 or legacy)", s)
}

// String returns the name ParseFormat accepts for f.
func (f Format) String() string {
	switch f {
	case Format3115:
		return "3.115"
	case Format322:
		return "3.22"
	case FormatLegacy:
		return "legacy"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// MarshalText lets Format appear as its name in JSON.
func (f Format) MarshalText() ([]byte, error) {
	switch f {
	case Format3115, Format322, FormatLegacy:
		return []byte(f.String()), nil
	}
	return nil, fmt.Errorf("pulpfake: invalid format %d", int(f))
}

// UnmarshalText is the inverse of MarshalText.
func (f *Format) UnmarshalText(b []byte) error {
	v, err := ParseFormat(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// listingPad mirrors pulpcore's template, which pads every link to column
// 100 and then appends "<date>  <size>" (both empty here).
const listingPad = 100

// renderListing produces the listing body for the given (already sorted)
// entries. Directory entries carry a trailing "/". root suppresses the "../"
// link, as pulpcore does for the content root.
func renderListing(f Format, title string, entries []string, root bool) string {
	var b strings.Builder
	if f == FormatLegacy {
		b.WriteString("<!DOCTYPE html><html><body><ul>")
		for _, e := range entries {
			n := html.EscapeString(e)
			fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, n, n)
		}
		b.WriteString("</ul></body></html>")
		return b.String()
	}

	hrefPrefix := ""
	if f == Format3115 {
		// Newer pulpcore prefixes "./" so names containing ':' are not
		// mistaken for URL schemes.
		hrefPrefix = "./"
	}
	t := html.EscapeString(title)
	b.WriteString("\n<html>\n<head><title>Index of " + t + "</title></head>\n")
	b.WriteString("<body bgcolor=\"white\">\n<h1>Index of " + t + "</h1>\n<hr><pre>")
	if !root {
		b.WriteString(`<a href="../">../</a>`)
	}
	b.WriteString("\n")
	for _, e := range entries {
		n := html.EscapeString(e)
		fmt.Fprintf(&b, `<a href="%s%s">%s</a>`, hrefPrefix, n, n)
		b.WriteString(strings.Repeat(" ", max(0, listingPad-len(n))+2))
		b.WriteString("\n")
	}
	b.WriteString("</pre><hr></body>\n</html>")
	return b.String()
}
