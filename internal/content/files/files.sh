# shellcheck shell=sh
# Files and directories copied into the image.

# make_parents PATH makes PATH's missing parent directories 0755 (root),
# whatever the step's umask, and leaves existing ones as they are: a
# modulefile's new directories must be readable by every user.
make_parents() {
  (umask 022 && mkdir -p "$(dirname "$1")")
}

# place_file TMP DST OWNER GROUP MODE installs an uploaded file.
place_file() {
  make_parents "$2"
  install -o "$3" -g "$4" -m "$5" "$1" "$2"
  rm -f "$1"
  echo "placed $2"
}

# place_dir TMP DST OWNER GROUP unpacks an uploaded directory tarball at
# DST; the modes come from the tarball.
place_dir() {
  make_parents "$2"
  install -d -m 0755 "$2"
  tar -xf "$1" -C "$2" --no-same-owner
  chown -R -h "$3:$4" "$2"
  rm -f "$1"
  echo "placed $2/"
}

# make_dir DST OWNER GROUP MODE makes an (empty) directory, or sets an
# existing one's owner and mode.
make_dir() {
  make_parents "$1"
  install -d -o "$2" -g "$3" -m "$4" "$1"
  echo "made $1/"
}

# make_link TARGET DST OWNER GROUP makes DST a symbolic link to TARGET,
# replacing a link already there but never a file or directory.
make_link() {
  if [ -e "$2" ] && [ ! -L "$2" ]; then
    fatimage_cause "files: $2 exists and is not a symbolic link"
    return 1
  fi
  make_parents "$2"
  ln -sfn "$1" "$2"
  chown -h "$3:$4" "$2"
  echo "linked $2 -> $1"
}
