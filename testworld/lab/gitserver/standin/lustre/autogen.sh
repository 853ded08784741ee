#!/bin/sh
# Lab stand-in for lustre-release's autogen.sh, which runs autoreconf over
# configure.ac and the m4 in config/: this one makes ./configure from
# config/configure.in with the tree's version (VERSION), so a build that
# skips it has no configure, as with the real tree.
set -eu
if [ ! -f config/configure.in ] || [ ! -f VERSION ]; then
  echo "autogen.sh: run me from the top of a lustre-release checkout" >&2
  exit 1
fi
version=$(cat VERSION)
sed "s|@LUSTRE_VERSION@|$version|g" config/configure.in > configure
chmod 0755 configure
echo "autogen.sh: configure made for lustre $version (lab stand-in)"
