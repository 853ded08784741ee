package fatimage

// What image.json records of grafana_dashboards (apart from
// content_dashboards.go, whose types are documented for users).

// imageDashboard is a dashboard in image.json, by file name.
type imageDashboard struct {
	Origin string `json:"origin"` // URL or local file
	// SHA256 of the file as fetched, before the replacements;
	// ChecksumVerified says whether it was checked against a pin.
	SHA256           string            `json:"sha256"`
	ChecksumVerified bool              `json:"checksum_verified"`
	Replacements     map[string]string `json:"replacements,omitempty"`
}
