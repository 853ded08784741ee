# k3s (roles/k3s): kubectl and helm find the k3s cluster
export KUBECONFIG=/etc/rancher/k3s/k3s.yaml
