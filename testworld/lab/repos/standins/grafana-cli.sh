#!/bin/sh
# Lab stand-in for grafana-cli from @PKG@-@EVR@.
dir=/var/lib/grafana/plugins
while [ $# -gt 0 ]; do
  case "$1" in
    --pluginsDir) dir=$2; shift 2 ;;
    --pluginsDir=*) dir=${1#--pluginsDir=}; shift ;;
    --*) shift ;;
    *) break ;;
  esac
done
if [ "$1" = plugins ] && [ "$2" = install ] && [ -n "$3" ]; then
  ver=${4:-latest}
  mkdir -p "$dir/$3" || exit 1
  printf '{"id":"%s","info":{"version":"%s"},"lab_stand_in":true}\n' "$3" "$ver" > "$dir/$3/plugin.json" || exit 1
  echo "Downloaded and extracted $3 v$ver zip successfully to $dir/$3 (lab stand-in)"
  exit 0
fi
if [ "$1" = plugins ] && [ "$2" = ls ]; then
  for p in "$dir"/*/plugin.json; do [ -f "$p" ] && basename "$(dirname "$p")"; done
  exit 0
fi
echo "grafana-cli version @VERSION@ (lab stand-in, @PKG@-@EVR@)"
