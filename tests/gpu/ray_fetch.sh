#!/usr/bin/env bash
# Bring Ray to the single-GPU machine (no Ray there, no internet, 64 MiB per transfer; Ray's wheel is ~79 MB).
# Here, once (needs the package index):   bash tests/gpu/ray_fetch.sh
#   .whl-ray/part1: the first half of the Ray wheel
#   .whl-ray/part2: the second half, Ray's dependencies and the bot's pure-Python needs (pydantic …)
# Then two device calls back to back (the machine stays warm only 30 s between calls):
#   carry [".whl-ray/part1"]:  bash tests/gpu/gpu_pass.sh ray1
#   carry [".whl-ray/part2"]:  bash tests/gpu/gpu_pass.sh ray2      (assembles, installs, runs the bench)
set -euo pipefail
root=.whl-ray
rm -rf "$root" && mkdir -p "$root/part1" "$root/part2/deps" /tmp/ray-fetch
pick=(--no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64)
pip download -q "${pick[@]}" -d /tmp/ray-fetch ray==2.60.0
pip download -q "${pick[@]}" -d "$root/part2/deps" click jsonschema jsonschema-specifications referencing \
  rpds-py attrs msgpack protobuf requests urllib3 idna certifi charset-normalizer packaging \
  pydantic pydantic-core annotated-types typing-inspection typing-extensions
wheel=$(ls /tmp/ray-fetch/ray-*.whl)
basename "$wheel" > "$root/part2/wheel-name"
sha256sum "$wheel" | cut -d' ' -f1 > "$root/part2/wheel-sha256"
split -b 40m -d "$wheel" /tmp/ray-fetch/piece.
mv /tmp/ray-fetch/piece.00 "$root/part1/"
mv /tmp/ray-fetch/piece.01 "$root/part2/"
du -sh "$root"/part*
grep -qx '/.whl-ray/' .git/info/exclude || echo '/.whl-ray/' >> .git/info/exclude
