package fatimage

// What the fetch of rpm_urls learns and image.json records (apart from
// content_rpm.go, whose types are documented for users).

// fetchedRPM is what the fetch learnt of rpm_urls[i].
type fetchedRPM struct {
	SHA256 string // of the file, checked or (insecure_skip_checksum) as found
	NVR    string // name-version-release from the file's header
	Name   string
}

// imageRPM is an RPM by URL in image.json, by package name.
type imageRPM struct {
	URL string `json:"url"`
	NVR string `json:"nvr"`
	// SHA256 of the installed file; ChecksumVerified says whether it was
	// checked against a pinned one.
	SHA256           string `json:"sha256"`
	ChecksumVerified bool   `json:"checksum_verified"`
	GPGCheck         bool   `json:"gpgcheck"`
}
