# The local lab (make lab-up; . .lab/env). Credentials come from OS_CLOUD
# and OS_CLIENT_CONFIG_FILE. networks takes network IDs: look up lab-net's
# with `openstack network show lab-net -c id -f value` and pass it with
# -var 'networks=["<id>"]'.
source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
flavor              = "m1.small"
floating_ip_network = "public"
volume_size         = 20
