package pulp

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// MaxListingBytes bounds a listing: Ark's longest hold a few thousand
// snapshots in well under 1 MiB, and a larger answer is not a listing.
const MaxListingBytes = 8 << 20

// ParseListing returns the snapshot names in a content-app directory
// listing, oldest first. It reads every link, whatever the pulpcore
// generation's markup (<pre> with "./name/" or "name/", or a <ul>), and
// keeps only directories named by a real UTC time (ParseTimestamp) no
// later than a day from now, so "../", "development/", files and impossible
// names such as "99999999T999999/" are ignored. A listing larger than
// MaxListingBytes is refused.
func ParseListing(r io.Reader) ([]string, error) {
	lr := &io.LimitedReader{R: r, N: MaxListingBytes + 1}
	names, err := parseListing(lr)
	if lr.N == 0 { // one byte over the cap was read
		return nil, fmt.Errorf("the listing is larger than %d MiB (the cap): not a Pulp directory listing", MaxListingBytes>>20)
	}
	return names, err
}

func parseListing(r io.Reader) ([]string, error) {
	latest := time.Now().UTC().Add(24 * time.Hour)
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
					if name, ok := snapshotDir(string(val), latest); ok {
						names = append(names, name)
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

// snapshotDir is the snapshot name a listing's href links to, if it is a
// directory named by a real time no later than latest.
func snapshotDir(href string, latest time.Time) (string, bool) {
	name, isDir := strings.CutSuffix(strings.TrimPrefix(href, "./"), "/")
	if !isDir {
		return "", false
	}
	t, err := ParseTimestamp(name)
	if err != nil || t.After(latest) {
		return "", false
	}
	return name, true
}
