# The local lab (make lab-up; . .lab/env): credentials come from OS_CLOUD
# and OS_CLIENT_CONFIG_FILE, Pulp from ARK_CONTENT_URL/ARK_USERNAME/
# ARK_PASSWORD. Pass the lab's release server too:
#
#   packer build -var-file=example/lab.pkrvars.hcl -var release_base_url=$LAB_RELEASES_URL \
#     -var git_base_url=$LAB_GIT_URL -var python_index_url=$LAB_PYPI_URL -var github_releases_url=${LAB_RELEASES_URL%/prometheus} -var rstudio_download_url=${LAB_RELEASES_URL%/prometheus} -var container_registry=$LAB_REGISTRY \
#     -var grafana_dashboards_url=${LAB_RELEASES_URL%/prometheus} -var netlib_url=${LAB_RELEASES_URL%/prometheus}/benchmark/hpl example
source_image_name = "Rocky-9-GenericCloud-Base-9.6"
# The lab's stand-ins are Rocky 9.6 (its images, repositories and the
# pins in example/dnf_repo_timestamps.yml), where the appliance builds 9.8.
os_version          = "9.6"
flavor              = "m1.small"
floating_ip_network = "public"
volume_size         = 20
image_name          = "demo-fat"
image_disk_format   = "raw"

# The lab has no site appliance (an activated environment would set
# these): the groups below are built-in sets. TestApplianceExample gives
# an appliance inventory layout instead (inventory, appliance_dir).
appliance_dir         = ""
appliance_environment = ""

# The appliance's whole fat image: control, login, compute and every
# feature group (module streams nodejs:22 and ruby:3.3, the @Xfce group).
inventory_groups = "fatimage"

# The lab's release server serves stand-ins for the Prometheus tarballs:
# same names, versions and layout, other checksums.
binary_sha256 = {
  node_exporter = "ba5557eca2298e41624dca3d328aa7acd5aeed05578ec98b30a8c47345d73371"
  prometheus    = "7a29a354e9ddb0c67e83c11d2c122759717f385f514d7db706d3f94591afd8ce"
  alertmanager  = "e006874ab066e7514c46b7bbc106b5d1048f61a33f672a0a948625cf26ed0eea"
}

# The lab's release server also serves a stand-in of netlib's HPL source
# (pass -var netlib_url=${LAB_RELEASES_URL%/prometheus}/benchmark/hpl and
# -var grafana_dashboards_url=${LAB_RELEASES_URL%/prometheus}).
# The lab's PyPI double ($LAB_PYPI_URL) is plain http.
python_index_insecure = true

hpl_sha256 = "e9e46a70117ba08030346992afd17395ed06dff45a3368979e32fc6a40f93376"

# The lab's registry serves the appliance's images over plain HTTP.
container_registry_insecure = true
