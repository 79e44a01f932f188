#!/bin/bash
# SPDX-License-Identifier: MIT
# eatmydata -- the Debian package's /usr/bin/eatmydata.  The package is
# Architecture: all, as Debian's is, because mmdebstrap's eatmydata hook
# takes usr/bin/eatmydata out of eatmydata_*_all.deb and the libraries out of
# libeatmydata1 and nothing else; so this runs the launcher of the machine's
# own architecture (package eatmydata-tools) under this script's name, which
# keeps symlink mode, and where only this file and the library were unpacked
# (the hook's case) preloads the library by name.
launcher=/usr/libexec/eatmydata/eatmydata
if [ -x "$launcher" ]; then
	exec -a "$0" "$launcher" "$@"
fi
[ "${1-}" = -- ] && shift
if [ $# = 0 ]; then
	echo "eatmydata: no command given ($launcher is not installed)" >&2
	exit 125
fi
export LD_PRELOAD="libeatmydata.so${LD_PRELOAD:+:$LD_PRELOAD}"
exec "$@"
