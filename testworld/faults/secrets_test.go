package faults

import (
	"encoding/base64"
	"fmt"
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
	disk := buildtest.RequireNoSecretsInImageFile(t, theLab, img.ID)
	t.Logf("503/429 hits %v, retries %v; output %d bytes, PACKER_LOG %d bytes, %d image files, image disk %d bytes: no secret", hits, retries, len(r.Output()), len(log), n, disk)
	figure(t, "secrets", []string{"Build", "UI output", "PACKER_LOG", "manifest", "image files scanned", "image disk scanned", "secret hits"}, "builder-only, application credential (TestSecretAuditAppCredential)", kb(len(r.Output())), kb(len(log)), "-", fmt.Sprint(n), kb(int(disk)), "0")
}

// TestSecretAuditFindsALeak is the audit's negative test: a deliberately
// leaky shell provisioner writes the Ark password into a file it keeps,
// and the whole-disk audit of the image file downloaded from Glance finds
// it; it also runs a command with that password in its argv for two
// seconds, which the sampler of the VMs' command lines sees. The same step writes the OpenStack password into a file it deletes
// before the snapshot: on a real cloud the snapshot is a block copy of the
// VM's disk and the freed blocks still hold it (what
// buildtest.TestWholeDiskAuditSeesFreedBlocks shows the audit finds); the
// lab's image files are made afresh from the disk's tree (mkfs.ext4 -d),
// so they carry no freed blocks and the lab cannot show that leak
// (docs/lab.md).
func TestSecretAuditFindsALeak(t *testing.T) {
	labtest.Require(t)
	name := uniqueName("leaky")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	b, r := runBuild(t, "leaky", []string{"PKR_VAR_kept_b64=" + b64(theLab.ArkPassword), "PKR_VAR_removed_b64=" + b64(theLab.CloudPassword)},
		"-var", "image_name="+name)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	// the secrets went in as sensitive variables: nothing shows in the
	// output or the log, but ps on the VM showed the kept one
	requireNoSecrets(t, "packer's output", []byte(r.Output()))
	requireNoSecrets(t, "PACKER_LOG", []byte(b.logText(t)))
	argv := b.Argv.Stop()
	if argv.Found["Ark password"] != "sh" {
		t.Errorf("the argv sampler (%d samples, %d command lines) missed the Ark password on sh's command line (found %v)", argv.Samples, argv.CommandLines, argv.Found)
	}
	img := findImage(t, name)
	found, n := buildtest.ScanImageFile(t, theLab, img.ID, buildtest.Secrets(theLab))
	if _, ok := found["Ark password"]; !ok {
		t.Fatalf("the whole-disk audit of %d bytes missed the Ark password the build left in /etc/leaky-kept.conf (found %v)", n, found)
	}
	_, removed := found["OpenStack password"]
	t.Logf("%d bytes scanned: the kept secret at byte %d; the deleted file's secret found: %v (the lab's images hold no freed blocks)",
		n, found["Ark password"], removed)
}
