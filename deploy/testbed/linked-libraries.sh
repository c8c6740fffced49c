# linked-libraries.sh - sourced by build-image.sh and tb: the shared libraries the built ntprof
# binaries load. build-image.sh puts their packages in the image and lists them beside it; tb
# rebuilds an image that lacks one a binary has gained since, instead of booting guests whose
# ntprofd stops at "cannot open shared object file".

ntprof_binaries() {  # BUILD_DIR: the built binaries the guests run, one a line
  local b
  for b in "$1"/daemon/ntprofd "$1"/client/ntprofctl "$1"/collector/ntprof-collector; do
    [ -x "$b" ] && echo "$b"
  done
  return 0
}

linked_libraries() {  # BINARY...: the libraries they load, one path a line, sorted
  [ $# -gt 0 ] || return 0
  ldd "$@" 2>/dev/null | awk '$2=="=>" && $3 ~ /^\// {print $3}' | sort -u
}
