#!/bin/sh
# Regenerate the build system from a git checkout.
set -e
cd "$(dirname "$0")"
autoreconf --force --install
