#!/bin/sh
# Installs a packed migrate (npm pack) into PREFIX, as docs/install.md does on a server and the Dockerfile does in the
# image: PREFIX/bin/migrate is the command. The dependencies come from the npm registry (or npm's cache, offline).
# better-sqlite3 compiles itself where no prebuilt binary can be fetched: python3, make and g++ must be there.
# Usage: scripts/install-tarball.sh TARBALL PREFIX
set -eu
tarball=$1
prefix=$2
npm install --global --prefix "$prefix" --omit=dev --no-audit --no-fund --prefer-offline "$tarball"
"$prefix/bin/migrate" --version
