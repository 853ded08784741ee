package inventory

import (
	"slices"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/packer-plugin-sdk/didyoumean"
)

// Suggest is the candidate name to offer for name, a typo of it, or "":
// the SDK's "did you mean" (within two edits, as Packer's own messages),
// held to one edit for names of up to five characters, since two edits
// turn most short names into another (a site's ntp group into nfs).
func Suggest(name string, candidates []string) string {
	if slices.Contains(candidates, name) {
		return ""
	}
	s := didyoumean.NameSuggestion(name, candidates)
	if s == "" || len(name) <= 5 && levenshtein.Distance(name, s, nil) > 1 {
		return ""
	}
	return s
}
