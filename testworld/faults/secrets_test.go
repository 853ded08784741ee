package faults

import (
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestSecretAuditAppCredential runs a builder-only build authenticated
// with the lab's application credential (OS_APPLICATION_CREDENTIAL_ID and
// _SECRET, no clouds.yaml), under 20% 503/429 so the retry logging is
// exercised too, and scans its output, PACKER_LOG and the image's files
// for the lab's secrets. The fat build's audit is part of TestFlakyAPI.
func TestSecretAuditAppCredential(t *testing.T) {
	labtest.Require(t)
	defer theLab.Cloud.SetFaults()
	name := uniqueName("appcred")
	env := []string{
		"OS_CLOUD=", "OS_CLIENT_CONFIG_FILE=",
		"OS_AUTH_URL=" + theLab.Cloud.AuthURL(),
		"OS_APPLICATION_CREDENTIAL_ID=lab-app-cred",
		"OS_APPLICATION_CREDENTIAL_SECRET=" + theLab.AppCredentialSecret,
	}
	theLab.Cloud.SetFaults(flakyFaults...)
	b, r := runBuild(t, "builder", env, "-var", "image_name="+name)
	hits := theLab.Cloud.FaultHits()
	theLab.Cloud.SetFaults()
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	// The lab's environment has no other OpenStack credential once
	// OS_CLOUD is empty, so the build authenticated with the application
	// credential.
	log := b.logText(t)
	retries := requireRetriedEach(t, hits, log)
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	auditBuild(t, b, r)
	n := buildtest.RequireNoSecretsInTree(t, theLab, buildtest.ImageFiles(t, theLab, img.ID), minBuilderImageFiles)
	t.Logf("503/429 hits %v, retries %v; output %d bytes, PACKER_LOG %d bytes, %d image files: no secret", hits, retries, len(r.Output()), len(log), n)
}
