#!/bin/sh
# Installs a packed migrate (npm pack) into PREFIX, as docs/install.md does on a server and the Dockerfile does in the
# image: PREFIX/bin/migrate is the command, the package in PREFIX/lib/node_modules/@energy-migration/migrate (where
# `npm install --global --prefix PREFIX` would put it). Installing the next tarball into the same prefix replaces it.
#
# The dependencies are the tree the tests ran on: the tarball carries the lock as npm-shrinkwrap.json, and `npm ci`
# in the unpacked package installs exactly its versions. (`npm install --global TARBALL` does not read a local
# tarball's shrinkwrap: it resolves every dependency afresh, and some come out newer than the lock.) They come from
# the npm registry, or npm's cache offline.
#
# Install scripts: `npm ci --ignore-scripts` runs none (the package's own `prepare` would build it again, and needs the
# development tools). Of the runtime dependencies only better-sqlite3 has one: `npm rebuild better-sqlite3` runs it,
# allowed by the package's allowScripts, so npm prints no warning about scripts it was not told to allow. It fetches a
# prebuilt native module for this Node.js and machine, or compiles one where it cannot download it (python3, make
# and g++ must be there then).
# Usage: scripts/install-tarball.sh TARBALL PREFIX
set -eu
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
prefix=$2
package=$prefix/lib/node_modules/@energy-migration/migrate
rm -rf "$package"
mkdir -p "$package" "$prefix/bin"
tar -xzf "$tarball" -C "$package" --strip-components=1 --no-same-owner
cd "$package"
npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline
npm rebuild better-sqlite3
ln -sfn ../lib/node_modules/@energy-migration/migrate/bin/migrate.js "$prefix/bin/migrate"
"$prefix/bin/migrate" --version
