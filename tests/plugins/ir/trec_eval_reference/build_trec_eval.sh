#!/usr/bin/env bash
# Build trec_eval 10.0 from its source into /tmp/trec_eval/trec_eval (or $1/trec_eval).
#
# The source is trec_eval's public repository (usnistgov/trec_eval), tag v10.0
# (commit f4253652c8efd0d86ddffd0d163cc0a0f813111a; `trec_eval -v` says 10.0-rc3,
# the Makefile's VERSIONID at that tag). Give a clone of it, or a folder or tarball of
# that tag, in TREC_EVAL_SOURCE; the PyPI sdists of pytrec_eval and
# pytrec-eval-terrier hold no C source (they download trec_eval 9.0.8 when built).
#
#   TREC_EVAL_SOURCE=/path/to/trec_eval.git bash build_trec_eval.sh [target folder]
set -euo pipefail

target=${1:-/tmp/trec_eval}
source=${TREC_EVAL_SOURCE:-/work/.mirror/usnistgov+trec_eval/repo}
tag=v10.0
commit=f4253652c8efd0d86ddffd0d163cc0a0f813111a

rm -rf "$target"
mkdir -p "$target"
if [ -d "$source" ] && git -C "$source" rev-parse --git-dir >/dev/null 2>&1; then
    found=$(git -C "$source" rev-parse "$tag^{commit}")
    [ "$found" = "$commit" ] || { echo "tag $tag is $found, expected $commit" >&2; exit 1; }
    git -C "$source" archive "$tag" | tar -x -C "$target"
elif [ -d "$source" ]; then
    cp -R "$source"/. "$target"
else
    tar -xf "$source" -C "$target" --strip-components=1
fi
make -C "$target" CC=gcc >/dev/null
make -C "$target" quicktest >/dev/null  # trec_eval's own tests against its stored outputs
"$target/trec_eval" -v
