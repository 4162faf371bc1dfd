"""Package metadata: torch and triton are ranges a user's GPU runner already satisfies with its own CUDA
build, and CI installs the local CPU wheel explicitly before the package (a ranged torch alone pulls the
CUDA wheels onto a machine without torch)."""

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
# (torch, triton) pairs the product runs on: the GPU machine and this CPU machine / CI.
SUPPORTED = (("2.11.0", "3.6.0"), ("2.13.0", "3.7.1"))


def requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {Requirement(line).name: Requirement(line) for line in project["dependencies"]}


def test_torch_and_triton_are_ranges_both_machines_satisfy():
    reqs = requirements()
    for name in ("torch", "triton"):
        assert not any(s.operator in ("==", "===") for s in reqs[name].specifier), f"{name} is pinned"
    for torch_version, triton_version in SUPPORTED:
        assert reqs["torch"].specifier.contains(torch_version, prereleases=True), torch_version
        assert reqs["triton"].specifier.contains(triton_version, prereleases=True), triton_version


def test_ci_installs_the_cpu_wheels_before_the_package():
    script = (ROOT / ".ci" / "run").read_text()
    pinned = re.search(r"pip install[^\n&]*\btorch==2\.13\.0\b[^\n&]*\btriton==3\.7\.1\b", script)
    package = re.search(r"pip install[^\n&]*-e '\.\[test\]'", script)
    assert pinned and package, script
    assert pinned.start() < package.start(), "the CPU wheels must be installed before the package"
