# shellcheck shell=sh
# install_image_json installs the staged image.json.
install_image_json() {
  install -D -o root -g root -m 0644 "$FATIMAGE_WORKDIR/image.json" /var/lib/image/image.json
  rm -f "$FATIMAGE_WORKDIR/image.json"
}
