package cloud

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
)

// A Lost fault lets the cloud act and then loses the answer: the client
// sees a gateway error or a dropped connection, the keypair exists.
func TestFaultLostAnswer(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	for _, tc := range []struct {
		name   string
		status int
	}{{"gateway", 502}, {"dropped", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			l.c.SetFaults(LoseAnswer(SvcCompute, "POST", "/os-keypairs$", `"lost-`, tc.status))
			_, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "lost-" + tc.name}).Extract()
			switch {
			case err == nil:
				t.Fatal("the answer reached the client")
			case tc.status != 0 && !gophercloud.ResponseCodeIs(err, tc.status):
				t.Fatalf("want %d, got %v", tc.status, err)
			}
			if _, err := keypairs.Get(ctx, cl.compute, "lost-"+tc.name, nil).Extract(); err != nil {
				t.Fatalf("the cloud did not act: %v", err)
			}
			if got := l.c.FaultHits(); len(got) != 1 || got[0] != 1 {
				t.Fatalf("hits %v, want [1]", got)
			}
			// Times: 1, so the next create is answered.
			if _, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "next-" + tc.name}).Extract(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
