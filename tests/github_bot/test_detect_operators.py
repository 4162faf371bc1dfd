"""Detection over real git histories. The operators' files have import-time side effects that
would show if detection ever imported them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from foundry.github.config import parse_config
from foundry.github.detect import detect, operator_slug
from gitfixtures import git


def kb_op(body: str = "return torch.relu(x) * 2", helper: str = "", canary: str = "/tmp/never") -> str:
    return f"""import torch
from torch import nn

open({canary!r}, "w").write("imported!")  # detection must never run this

{helper}

class Model(nn.Module):
    def forward(self, x):
        {body}


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
"""


def refs(detection, wanted: bool = True) -> dict[str, str]:
    ops = detection.wanted if wanted else detection.operators
    return {o.ref: o.status for o in ops}


def test_added_changed_and_untouched(remote, tmp_path: Path) -> None:
    _, dev = remote
    canary = tmp_path / "canary"
    c1 = dev.commit({"ops/relu.py": kb_op(canary=str(canary)), "README.md": "hi\n"})
    first = detect(dev.path, base=None, head=c1)
    assert refs(first) == {"ops/relu.py": "added"}
    assert first.note.startswith("no base")
    c2 = dev.commit({"README.md": "hello\n"})
    assert refs(detect(dev.path, base=c1, head=c2)) == {}
    c3 = dev.commit({"ops/relu.py": kb_op(canary=str(canary)).replace("def forward", "# a comment\n    def forward")})
    assert refs(detect(dev.path, base=c2, head=c3)) == {}, "a comment is not a change of the operator"
    c4 = dev.commit({"ops/relu.py": kb_op("return torch.relu(x) * 3", canary=str(canary))})
    assert refs(detect(dev.path, base=c3, head=c4)) == {"ops/relu.py": "changed"}
    assert not canary.exists(), "detection imported the operator"


def test_helper_used_by_the_class_counts(remote) -> None:
    _, dev = remote
    helper = "def scale(x):\n    return x * 2\n\nUNUSED = 1\n"
    c1 = dev.commit({"ops/h.py": kb_op("return scale(x)", helper)})
    c2 = dev.commit({"ops/h.py": kb_op("return scale(x)", helper.replace("UNUSED = 1", "UNUSED = 2"))})
    assert refs(detect(dev.path, base=c1, head=c2)) == {}
    c3 = dev.commit({"ops/h.py": kb_op("return scale(x)", helper.replace("x * 2", "x * 4"))})
    assert refs(detect(dev.path, base=c2, head=c3)) == {"ops/h.py": "changed"}
    c4 = dev.commit({"ops/h.py": kb_op("return scale(x)", helper.replace("x * 2", "x * 4")).replace("4, 8", "16, 8")})
    assert refs(detect(dev.path, base=c3, head=c4)) == {"ops/h.py": "changed"}, "input shapes are part of it"


def test_submodules_named_classes_and_plain_modules(remote) -> None:
    _, dev = remote
    source = kb_op("return self.block(x)").replace(
        "class Model(nn.Module):",
        "class Block(nn.Module):\n    def forward(self, x):\n        return x\n\n\nclass Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.block = Block()\n",
    )
    plain = "import torch\n\nclass Gelu(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    c1 = dev.commit({"ops/net.py": source, "lib/gelu.py": plain, "lib/util.py": "x = 1\n"})
    found = detect(dev.path, base=None, head=c1)
    assert refs(found) == {"ops/net.py": "added"}, "Block is a part of Model, not an operator"
    assert [s.path for s in found.skipped] == ["lib/gelu.py"]
    config = parse_config("operators: {lib/gelu.py::Gelu: {inputs: [[4, 4]]}}")
    assert refs(detect(dev.path, base=None, head=c1, config=config)) == {
        "ops/net.py": "added",
        "lib/gelu.py::Gelu": "added",
    }


def test_rename_delete_and_filters(remote) -> None:
    _, dev = remote
    c1 = dev.commit({"ops/a.py": kb_op(), "ops/b.py": kb_op("return x + 1"), "tests/test_op.py": kb_op()})
    git(dev.path, "mv", "ops/a.py", "ops/renamed.py")
    c2 = dev.commit({"ops/b.py": None}, "rename and delete")
    found = detect(dev.path, base=c1, head=c2)
    assert refs(found, wanted=False) == {"ops/renamed.py": "renamed", "ops/b.py": "deleted"}
    assert refs(found) == {}
    renamed = next(o for o in found.operators if o.status == "renamed")
    assert renamed.previous_path == "ops/a.py"
    config = parse_config("exclude: ['ops/b.py']\ninclude: ['ops/**', 'tests/**']")
    c3 = dev.commit({"tests/test_op.py": kb_op("return x - 1")})
    assert refs(detect(dev.path, base=c2, head=c3, config=config)) == {"tests/test_op.py": "changed"}
    assert refs(detect(dev.path, base=c2, head=c3)) == {}, "tests/ are excluded by default"


def test_config_from_the_head_commit(remote) -> None:
    _, dev = remote
    c1 = dev.commit({"ops/a.py": kb_op(), ".github/foundry.yml": "include: ['kernels/**']\n"})
    assert refs(detect(dev.path, base=None, head=c1)) == {}
    c2 = dev.commit({".github/foundry.yml": "operators: {ops/a.py: {skip: true}}\n"})
    skipped = detect(dev.path, base=None, head=c2)
    assert refs(skipped) == {} and "skip: true" in skipped.skipped[0].reason


def test_force_push_and_merge_commits(remote, tmp_path: Path) -> None:
    bare, dev = remote
    c1 = dev.commit({"ops/a.py": kb_op()})
    dev.push()
    gone = dev.commit({"ops/a.py": kb_op("return x")})
    git(dev.path, "reset", "-q", "--hard", c1)
    c2 = dev.commit({"ops/b.py": kb_op("return x + 2")})
    dev.push(force=True)
    runner = tmp_path / "runner"
    git(tmp_path, "clone", "-q", str(bare), str(runner))  # never saw `gone`
    found = detect(runner, base=gone, head=c2)
    assert refs(found) == {"ops/b.py": "added"}
    assert "not in this repository" in found.note
    git(dev.path, "checkout", "-q", "-b", "feature", c1)
    f1 = dev.commit({"ops/c.py": kb_op("return x * 5")})
    git(dev.path, "checkout", "-q", "main")
    git(dev.path, "merge", "-q", "--no-ff", "-m", "merge feature", f1)
    merge = dev.head()
    assert refs(detect(dev.path, base=c2, head=merge)) == {"ops/c.py": "added"}
    assert refs(detect(dev.path, base="0" * 40, head=merge)) == {
        "ops/a.py": "added",
        "ops/b.py": "added",
        "ops/c.py": "added",
    }


def test_syntax_errors_and_odd_files_are_skipped(remote) -> None:
    _, dev = remote
    c1 = dev.commit(
        {
            "ops/broken.py": "class Model(nn.Module:\n",
            "ops/data.bin.py": "\x00\x01",
            "ops/a.py": kb_op(),
            "ops/$(touch x) b.py": kb_op(),
        }
    )
    found = detect(dev.path, base=None, head=c1)
    assert refs(found) == {"ops/a.py": "added"}
    assert any(s.path == "ops/broken.py" and "syntax error at line 1" in s.reason for s in found.skipped)
    assert any(s.path == "ops/$(touch x) b.py" and "file name" in s.reason for s in found.skipped)


def test_slugs() -> None:
    assert operator_slug("ops/fused_gelu.py") == "ops-fused-gelu"
    assert operator_slug("ops/net.py::LayerNorm") == "ops-net-layernorm"
    assert operator_slug("a$(touch x).py") == "a-touch-x"


def test_detect_command_json(remote) -> None:
    _, dev = remote
    c1 = dev.commit({"ops/a.py": kb_op()})
    c2 = dev.commit({"ops/a.py": kb_op("return x")})
    proc = subprocess.run(
        [sys.executable, "-m", "foundry", "detect", "--base", c1, "--head", c2, "--repo", str(dev.path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(o["ref"], o["status"]) for o in data["operators"]] == [("ops/a.py", "changed")]
    assert "changed  ops/a.py" in proc.stderr


# detection misses (issue 26, item 9) ---------------------------------------------------------------------
def importing(module_line: str, body: str = "return scale(x)") -> str:
    return kb_op(body).replace("from torch import nn\n", f"from torch import nn\n{module_line}\n")


HELPERS = "def scale(x):\n    return x * 2\n\n\ndef unused(x):\n    return x\n"


@pytest.mark.parametrize(
    ("path", "line", "body"),
    [
        ("ops/relu.py", "from ops.helpers import scale", "return scale(x)"),
        ("ops/relu.py", "from .helpers import scale", "return scale(x)"),
        ("ops/relu.py", "from helpers import scale", "return scale(x)"),  # the script's own directory
        ("ops/relu.py", "import ops.helpers as h", "return h.scale(x)"),
        ("ops/relu.py", "from ops import helpers", "return helpers.scale(x)"),
        ("ops/deep/relu.py", "from ..helpers import scale", "return scale(x)"),
    ],
)
def test_a_helper_imported_from_another_file_of_the_repository_counts(remote, path, line, body) -> None:
    _, dev = remote
    c1 = dev.commit({"ops/helpers.py": HELPERS, path: importing(line, body)})
    c2 = dev.commit({"ops/helpers.py": HELPERS.replace("x * 2", "x * 3")})
    assert refs(detect(dev.path, base=c1, head=c2)) == {path: "changed"}


def test_a_helper_change_that_the_operator_does_not_use_is_no_change(remote) -> None:
    _, dev = remote
    c1 = dev.commit({"ops/helpers.py": HELPERS, "ops/relu.py": importing("from ops.helpers import scale")})
    c2 = dev.commit({"ops/helpers.py": HELPERS.replace("return x\n", "return x + 1\n")})
    assert refs(detect(dev.path, base=c1, head=c2)) == {}
    # … but a helper the used one calls, in a third file, does count
    c3 = dev.commit(
        {
            "lib/base.py": "def factor():\n    return 2\n",
            "ops/helpers.py": "from lib.base import factor\n\n\ndef scale(x):\n    return x * factor()\n",
        }
    )
    assert refs(detect(dev.path, base=c2, head=c3)) == {"ops/relu.py": "changed"}
    c4 = dev.commit({"lib/base.py": "def factor():\n    return 5\n"})
    assert refs(detect(dev.path, base=c3, head=c4)) == {"ops/relu.py": "changed"}


@pytest.mark.parametrize(
    ("imports", "base"),
    [
        ("import torch.nn as tnn", "tnn.Module"),
        ("import torch as T", "T.nn.Module"),
        ("from torch import nn as N", "N.Module"),
        ("from torch.nn import Module as Base", "Base"),
    ],
)
def test_module_classes_through_import_aliases(remote, imports: str, base: str) -> None:
    _, dev = remote
    source = kb_op().replace("from torch import nn\n", f"{imports}\n").replace("(nn.Module)", f"({base})")
    c1 = dev.commit({"ops/alias.py": source})
    assert refs(detect(dev.path, base=None, head=c1)) == {"ops/alias.py": "added"}


def test_an_unrecognized_base_class_is_skipped_with_a_reason(remote) -> None:
    _, dev = remote
    source = kb_op().replace("from torch import nn\n", "from mylib import Layer\n").replace("(nn.Module)", "(Layer)")
    found = detect(dev.path, base=None, head=dev.commit({"ops/odd.py": source}))
    assert refs(found) == {}
    [skip] = found.skipped
    assert skip.path == "ops/odd.py" and "Model(Layer)" in skip.reason and "torch.nn.Module" in skip.reason


def test_a_config_only_change_replans_the_operators_it_affects(remote) -> None:
    _, dev = remote
    plain = "import torch\n\nclass Gelu(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    c1 = dev.commit({"ops/a.py": kb_op(), "ops/b.py": kb_op("return x"), "lib/gelu.py": plain})
    c2 = dev.commit({".github/foundry.yml": "operators: {ops/a.py: {precision: bf16}}\n"})
    assert refs(detect(dev.path, base=c1, head=c2)) == {"ops/a.py": "changed"}
    c3 = dev.commit(
        {
            ".github/foundry.yml": "operators:\n  ops/a.py: {precision: bf16, labels: [hot]}\n"
            "  lib/gelu.py::Gelu: {inputs: [[4, 4]]}\n"
        }
    )
    assert refs(detect(dev.path, base=c2, head=c3)) == {"lib/gelu.py::Gelu": "added"}, "labels change no kernel"
    c4 = dev.commit({".github/foundry.yml": "defaults: {budget: 3}\nexclude: ['ops/b.py', 'lib/**']\n"})
    assert refs(detect(dev.path, base=c3, head=c4)) == {"ops/a.py": "changed"}
    c5 = dev.commit({".github/foundry.yml": "defaults: {budget: 3}\n"})
    assert refs(detect(dev.path, base=c4, head=c5)) == {"ops/b.py": "added"}, "included again"


def test_a_helper_reached_through_a_file_the_config_does_not_include_counts(remote) -> None:
    _, dev = remote
    mid = "from lib.base import factor\n\n\ndef scale(x):\n    return x * factor()\n"
    c1 = dev.commit(
        {
            ".github/foundry.yml": "include: ['ops/**']\n",
            "lib/mid.py": mid,
            "lib/base.py": "def factor():\n    return 2\n",
            "ops/relu.py": importing("from lib.mid import scale"),
        }
    )
    c2 = dev.commit({"lib/base.py": "def factor():\n    return 3\n"})
    assert refs(detect(dev.path, base=c1, head=c2)) == {"ops/relu.py": "changed"}


def test_a_helper_imported_inside_forward_counts(remote) -> None:
    _, dev = remote
    local = kb_op("from ops.helpers import scale\n        return scale(x)")
    c1 = dev.commit({"ops/helpers.py": HELPERS, "ops/relu.py": local})
    c2 = dev.commit({"ops/helpers.py": HELPERS.replace("x * 2", "x * 3")})
    assert refs(detect(dev.path, base=c1, head=c2)) == {"ops/relu.py": "changed"}


def test_a_class_the_config_names_but_the_file_does_not_hold_as_a_module_is_skipped_with_a_reason(remote) -> None:
    _, dev = remote
    source = "from mylib import Layer\n\n\nclass Gelu(Layer):\n    def forward(self, x):\n        return x\n"
    config = "operators: {lib/gelu.py::Gelu: {inputs: [[4, 4]]}, lib/gelu.py::Gone: {inputs: [[4]]}}\n"
    first = detect(dev.path, base=None, head=dev.commit({".github/foundry.yml": config, "lib/gelu.py": source}))
    assert refs(first) == {}
    reasons = sorted(s.reason for s in first.skipped)
    assert reasons[0].startswith("lib/gelu.py::Gelu: named in .github/foundry.yml, but Gelu(Layer) is not recognized")
    assert reasons[1] == "lib/gelu.py::Gone: named in .github/foundry.yml, but no class Gone in the file"
    # a config-only change that names it says so too
    c1 = dev.commit({".github/foundry.yml": None})
    c2 = dev.commit({".github/foundry.yml": "operators: {lib/gelu.py::Gelu: {inputs: [[4, 4]]}}\n"})
    [skip] = detect(dev.path, base=c1, head=c2).skipped
    assert skip.path == "lib/gelu.py" and "Gelu(Layer) is not recognized as torch.nn.Module" in skip.reason


def test_a_declaration_the_optimizer_reads_from_the_file_is_a_change(remote) -> None:
    _, dev = remote
    plain = "import torch\n\nFOUNDRY_PRECISION = 'fp32'\n\n\nclass Gelu(torch.nn.Module):\n"
    plain += "    def forward(self, x):\n        return x\n"
    c1 = dev.commit(
        {
            ".github/foundry.yml": "operators: {lib/gelu.py::Gelu: {inputs: [[4, 4]]}}\n",
            "lib/gelu.py": plain,
            "ops/t.py": kb_op() + "\nFOUNDRY_TRAINING = False\n",
        }
    )
    c2 = dev.commit({"lib/gelu.py": plain.replace("fp32", "bf16"), "ops/t.py": kb_op() + "\nFOUNDRY_TRAINING = True\n"})
    assert refs(detect(dev.path, base=c1, head=c2)) == {"lib/gelu.py::Gelu": "changed", "ops/t.py": "changed"}


# an operator whose base class is a module class of another file of the repository --------------------------
BASE = "from torch import nn\n\n\nclass Base(nn.Module):\n    def scale(self, x):\n        return x * 2\n"


def based(line: str, base: str) -> str:
    source = kb_op("return self.scale(x)").replace("from torch import nn\n", f"from torch import nn\n{line}\n")
    return source.replace("class Model(nn.Module)", f"class Model({base})")


@pytest.mark.parametrize(
    ("path", "line", "base"),
    [
        ("ops/relu.py", "from ops.base import Base", "Base"),
        ("ops/relu.py", "from .base import Base as Parent", "Parent"),
        ("ops/relu.py", "import ops.base as b", "b.Base"),
        ("ops/relu.py", "import ops.base", "ops.base.Base"),
        ("ops/relu.py", "from ops import base", "base.Base"),
        ("ops/deep/relu.py", "from ..base import Base", "Base"),
        ("kernels/relu.py", "from ops import Base", "Base"),  # re-exported by ops/__init__.py
    ],
)
def test_an_operator_whose_base_class_lives_in_another_file_is_detected_and_follows_it(
    remote, path, line, base
) -> None:
    _, dev = remote
    files = {"ops/base.py": BASE, "ops/__init__.py": "from ops.base import Base\n", path: based(line, base)}
    c1 = dev.commit(files)
    assert refs(detect(dev.path, base=None, head=c1)) == {path: "added"}
    c2 = dev.commit({"ops/base.py": BASE.replace("x * 2", "x * 3")})
    assert refs(detect(dev.path, base=c1, head=c2)) == {path: "changed"}, "the base class changed"
    c3 = dev.commit({"ops/base.py": BASE.replace("x * 2", "x * 3") + "\n\ndef unrelated():\n    return 1\n"})
    assert refs(detect(dev.path, base=c2, head=c3)) in ({}, {path: "changed"})


def test_a_base_class_through_a_chain_of_files_and_a_mixin_that_is_no_module(remote) -> None:
    _, dev = remote
    mid = "from ops.base import Base\n\n\nclass Mid(Base):\n    pass\n"
    mixin = "class Mixin:\n    def scale(self, x):\n        return x * 2\n"
    c1 = dev.commit(
        {
            "ops/base.py": BASE,
            "lib/mid.py": mid,
            "lib/mixin.py": mixin,
            "ops/relu.py": based("from lib.mid import Mid", "Mid"),
            "ops/odd.py": based("from lib.mixin import Mixin", "Mixin"),
        }
    )
    found = detect(dev.path, base=None, head=c1)
    assert refs(found) == {"ops/relu.py": "added"}
    [odd] = [s for s in found.skipped if s.path == "ops/odd.py"]
    assert "Model(Mixin)" in odd.reason and "module class of this repository" in odd.reason
    c2 = dev.commit({"ops/base.py": BASE.replace("x * 2", "x * 4")})
    assert refs(detect(dev.path, base=c1, head=c2)) == {"ops/relu.py": "changed"}


def test_a_named_class_with_an_imported_base_and_files_that_import_each_other(remote) -> None:
    _, dev = remote
    config = "operators: {lib/gelu.py::Gelu: {inputs: [[4, 4]]}}\n"
    gelu = "from lib.cycle import Base\n\n\nclass Gelu(Base):\n    def forward(self, x):\n        return x\n"
    cycle = "from lib.gelu import Gelu\nfrom torch import nn\n\n\nclass Base(nn.Module):\n    pass\n"
    c1 = dev.commit({".github/foundry.yml": config, "lib/gelu.py": gelu, "lib/cycle.py": cycle})
    found = detect(dev.path, base=None, head=c1)
    assert refs(found) == {"lib/gelu.py::Gelu": "added"}
    assert [s.path for s in found.skipped] == ["lib/cycle.py"], "Gelu is read; Base is no operator of its own"
    c2 = dev.commit({"lib/cycle.py": cycle.replace("pass", "scale = 2")})
    assert refs(detect(dev.path, base=c1, head=c2)) == {"lib/gelu.py::Gelu": "changed"}
