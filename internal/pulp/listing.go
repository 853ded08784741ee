package pulp

import (
	"io"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

var entryRE = regexp.MustCompile(`^\d{8}T\d{6}Z?/$`)

// ParseListing returns the snapshot names in a content-app directory
// listing, oldest first. It reads every link, whatever the pulpcore
// generation's markup (<pre> with "./name/" or "name/", or a <ul>), and
// keeps only timestamp directories, so "../", "development/" and files are
// ignored.
func ParseListing(r io.Reader) ([]string, error) {
	z := html.NewTokenizer(r)
	var names []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return nil, err
			}
			return sortByTime(names), nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "a" || !hasAttr {
				continue
			}
			for {
				key, val, more := z.TagAttr()
				if string(key) == "href" {
					href := strings.TrimPrefix(string(val), "./")
					if entryRE.MatchString(href) {
						names = append(names, strings.TrimSuffix(href, "/"))
					}
				}
				if !more {
					break
				}
			}
		}
	}
}

// sortByTime orders names oldest first and drops duplicates. A checkpoint
// ("...Z") and a snapshot of the same second sort together; the string
// order breaks the tie so the result is stable.
func sortByTime(names []string) []string {
	slices.SortFunc(names, func(a, b string) int {
		if c := strings.Compare(strings.TrimSuffix(a, "Z"), strings.TrimSuffix(b, "Z")); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(names)
}
