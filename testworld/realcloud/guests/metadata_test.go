package guests

import "testing"

// Sign must match what Nova's metadata handler expects
// (nova/api/metadata/handler.py: hmac.new(secret, instance_id,
// hashlib.sha256).hexdigest()); the value is Python's for these inputs.
func TestSignIsNovas(t *testing.T) {
	got := Sign("md-secret-91c2", "814df2eb-1eab-462b-877d-27f43c037bf0")
	if want := "ae7b32c6e463595a9cad68a3c7e91c07d7da86e4b09f5958de44d27379341bf3"; got != want {
		t.Errorf("Sign = %s, want Nova's %s", got, want)
	}
}
