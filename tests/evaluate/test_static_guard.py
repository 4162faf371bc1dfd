"""The static guard's allowlists: syntax, module-rooted chains, builtins by scope, decorators; and the honest
constructs LLM-written kernels use, which must pass. Only StaticGuard.check runs here (no evaluation)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
from foundry.evaluate.static_guard import RULES, StaticGuard, build_allowlist, resolve_path
from foundry.rules.loader import load_rules

pytestmark = pytest.mark.usefixtures("libdevice_as_shipped")

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "cheats"

HEADER = """
import math

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def launch(x):
    y = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
"""

MODEL = """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return launch(x)
"""


@pytest.fixture(scope="module")
def guard() -> StaticGuard:
    return StaticGuard(load_rules().guard)


def check(guard: StaticGuard, extra: str = "", model: str = MODEL) -> list[tuple[str, int, str]]:
    source = HEADER + textwrap.dedent(extra) + textwrap.dedent(model)
    errors, _ = guard.check(source)
    return [(d.rule or "", d.line or 0, d.message) for d in errors]


def rules_at(findings: list[tuple[str, int, str]]) -> set[str]:
    return {rule for rule, _, _ in findings}


def line_of(source_part: str, needle: str) -> int:
    source = HEADER + textwrap.dedent(source_part)
    return next(i for i, text in enumerate(source.splitlines(), start=1) if needle in text)


def test_the_honest_base_passes(guard: StaticGuard):
    assert check(guard) == []


def test_every_rule_has_a_severity_and_the_allowlist_resolves():
    policy = load_rules().guard
    assert set(policy.rules) == set(RULES)
    allow = build_allowlist(policy)
    for path in ("torch.empty", "torch.float32", "triton.jit", "triton.cdiv", "torch.nn.Module", "math.sqrt"):
        assert id(resolve_path(path)) in allow.objects, path
    assert id(resolve_path("triton.language.arange")) in allow.objects
    for refused in ("torch.load", "torch.manual_seed", "torch.library.Library", "triton.knobs", "torch.ops"):
        assert id(resolve_path(refused)) not in allow.objects, refused


# -- syntax ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "needle", "construct"),
    [
        (
            "def peek(x):\n    match x:\n        case object(numpy=view):\n            return view\n",
            "match x",
            "match statement",
        ),
        ("def gen(x):\n    yield x\n", "yield x", "yield"),
        ("async def run(x):\n    return x\n", "async def", "async def"),
        ("def walrus(x):\n    return (n := x.numel())\n", "n :=", ":="),
        ("class Meta(nn.Module, metaclass=type):\n    pass\n", "metaclass", "class keyword metaclass="),
    ],
)
def test_syntax_outside_the_allowlist_is_named_with_its_line(guard: StaticGuard, snippet, needle, construct):
    findings = check(guard, snippet)
    hits = [f for f in findings if f[0] == "syntax_allowlist"]
    assert hits, findings
    assert hits[0][1] == line_of(snippet, needle)
    assert construct in hits[0][2]


def test_string_annotations_are_refused_anywhere(guard: StaticGuard):
    snippet = "def hint(view: \"__import__('numpy').asarray\") -> None:\n    pass\n"
    findings = check(guard, snippet)
    assert ("syntax_allowlist", line_of(snippet, "def hint")) in {(r, n) for r, n, _ in findings}
    assert any("string annotation" in m for _, _, m in findings)


def test_type_annotations_that_are_expressions_pass(guard: StaticGuard):
    snippet = """
    from typing import Optional


    def sized(x: torch.Tensor, block: Optional[int] = None) -> torch.Tensor:
        return x
    """
    assert check(guard, snippet) == []


def test_try_and_global_keep_their_rules(guard: StaticGuard):
    assert "try_except" in rules_at(
        check(guard, "def f(x):\n    try:\n        return x\n    except Exception:\n        return x\n")
    )
    assert "global_state" in rules_at(check(guard, "N = 0\n\n\ndef f():\n    global N\n    N = 1\n"))


# -- chains rooted at modules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "rule", "chain"),
    [
        ("np = F.np\n", "object_allowlist", "F.np"),  # numpy one attribute from torch.nn.functional
        ("load = torch.package.sys_importer.import_module\n", "object_allowlist", "sys_importer"),  # an importer
        ("Mode = torch.overrides.TorchFunctionMode\n", "object_allowlist", "TorchFunctionMode"),  # a mode
        ("lib = torch.library.Library\n", "forbidden_attribute", "torch.library"),  # op registration
        ("add = torch.ops.aten.add\n", "forbidden_attribute", "torch.ops"),
        ("seed = torch.manual_seed\n", "forbidden_attribute", "manual_seed"),
        ("loader = torch.load\n", "object_allowlist", "torch.load"),  # pickle: arbitrary code
        ("knobs = triton.knobs\n", "forbidden_attribute", "triton.knobs"),  # launch hooks live there
        ("testing = triton.testing.do_bench\n", "forbidden_attribute", "triton.testing"),
        ("mod = torch\n", "object_allowlist", "torch"),  # a module object as a value
        ("nested = torch.nn\n", "object_allowlist", "torch.nn"),
        ("torch.empty = torch.zeros\n", "object_allowlist", "torch.empty"),  # writing into a module
        ("from torch.nn.functional import np\n", "object_allowlist", "np"),
        ("fan = nn.init._no_grad_uniform_\n", "private_attribute", "_no_grad_uniform_"),
        ("mode = torch.utils._python_dispatch.TorchDispatchMode\n", "private_attribute", "_python_dispatch"),
    ],
)
def test_a_chain_must_end_at_a_listed_object(guard: StaticGuard, snippet, rule, chain):
    findings = check(guard, snippet)
    line = HEADER.count("\n") + 1
    matching = [f for f in findings if f[0] == rule and f[1] == line]
    assert matching, findings
    assert chain in matching[0][2]


def test_aliases_resolve_to_the_same_objects(guard: StaticGuard):
    snippet = """
    import triton.language as language
    from torch.nn import functional as functional
    from triton import cdiv, jit
    from triton import language as lang


    def sizes(x):
        return cdiv(x.numel(), 128), language.arange, lang.zeros, functional.relu, jit
    """
    assert check(guard, snippet) == []
    assert "object_allowlist" in rules_at(check(guard, "from torch.nn import functional as G\n\nN = G.np\n"))


def test_registering_hooks_on_values_is_refused(guard: StaticGuard):
    snippet = """
    def watch(module, fn, kernel):
        module.register_forward_hook(fn)
        kernel.add_pre_run_hook(fn)
        return triton.Config({}, pre_hook=fn)
    """
    findings = check(guard, snippet)
    lines = {n for r, n, _ in findings if r == "forbidden_attribute"}
    assert {line_of(snippet, "register_forward_hook"), line_of(snippet, "add_pre_run_hook")} <= lines
    assert line_of(snippet, "pre_hook=") in lines


def test_dunder_methods_other_than_init_are_refused(guard: StaticGuard):
    snippet = """
    class Peek(nn.Module):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args)
    """
    findings = check(guard, snippet)
    assert ("private_attribute", line_of(snippet, "__torch_function__")) in {(r, n) for r, n, _ in findings}


def test_decorators_outside_the_list_are_refused(guard: StaticGuard):
    snippet = """
    def remember(fn):
        return fn


    @remember
    def helper(x):
        return x
    """
    findings = check(guard, snippet)
    assert ("decorator_allowlist", line_of(snippet, "@remember")) in {(r, n) for r, n, _ in findings}


# -- builtins and scopes --------------------------------------------------------------------------------------


def test_calling_a_dangerous_builtin_is_refused_but_a_local_of_that_name_is_fine(guard: StaticGuard):
    assert "forbidden_name" in rules_at(check(guard, "def f(x):\n    return id(x)\n"))
    assert "forbidden_name" in rules_at(check(guard, "def f(x):\n    return getattr(x, 'numpy')\n"))
    honest = """
    def scaled(input, id=0):
        next = input.shape[0] + id
        return next
    """
    assert check(guard, honest) == []
    model = """
    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, input):
            id = input.shape[-1]
            return launch(input)[..., :id]
    """
    assert check(guard, model=model) == []


def test_a_module_level_name_shadowing_a_builtin_is_refused(guard: StaticGuard):
    # bound at module level it could be unbound at run time, and the name would mean the builtin again
    assert "forbidden_name" in rules_at(check(guard, "input = 3\n"))


def test_a_main_block_is_skipped_and_binds_nothing(guard: StaticGuard):
    main = """
    if __name__ == "__main__":
        torch.manual_seed(0)
        x = torch.randn(4, 4)
        print(ModelNew()(x), open("log.txt"))
    """
    assert check(guard, model=MODEL + textwrap.dedent(main)) == []
    # names bound only inside the main block do not hide builtins elsewhere
    sneaky = "\n\ndef later():\n    return input()\n" + textwrap.dedent(main).replace("x =", "input =")
    assert "forbidden_name" in rules_at(check(guard, model=MODEL + sneaky))
    assert "private_attribute" in rules_at(check(guard, "NAME = __name__\n"))


def test_tensor_methods_named_like_stdlib_modules(guard: StaticGuard):
    assert check(guard, "def halves(x):\n    return x.chunk(2, dim=-1), x.select(0, 1), x.trace()\n") == []
    assert "forbidden_attribute" in rules_at(check(guard, "def f(x):\n    return x.os\n"))
    assert "forbidden_attribute" in rules_at(check(guard, "def f(x):\n    return x.numpy()\n"))


# -- state ----------------------------------------------------------------------------------------------------


def test_containers_that_are_only_read_are_not_state(guard: StaticGuard):
    snippet = """
    BLOCKS = {"small": 128, "large": 1024}
    CONFIGS = [triton.Config({"BLOCK": b}, num_warps=4) for b in (64, 128)]
    """
    model = """
    class ModelNew(nn.Module):
        SIZES = {"rows": 1}

        def __init__(self):
            super().__init__()
            self.table = {"block": BLOCKS["small"]}
            self.cache = []

        def forward(self, x):
            block = self.table["block"] if x.numel() < BLOCKS["large"] else BLOCKS["large"]
            y = torch.empty_like(x)
            _scale_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
            return y
    """
    assert check(guard, snippet, model) == []


def test_writing_module_level_containers_at_run_time_is_state(guard: StaticGuard):
    snippet = "RESULTS = {}\n\n\ndef remember(key, y):\n    RESULTS[key] = y\n    RESULTS.update({key: y})\n"
    findings = check(guard, snippet)
    assert {line_of(snippet, "RESULTS[key] = y"), line_of(snippet, "RESULTS.update")} <= {
        n for r, n, _ in findings if r == "global_state"
    }


def test_forward_storing_on_self_is_state(guard: StaticGuard):
    model = """
    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return launch(x)
    """
    assert "state_in_forward" in rules_at(check(guard, model=model))


def test_reset_parameters_copied_from_nn_linear_passes(guard: StaticGuard):
    model = """
    class ModelNew(nn.Module):
        def __init__(self, n=8):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(n, n))
            self.bias = nn.Parameter(torch.empty(n))
            self.reset_parameters()

        def reset_parameters(self):
            nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            nn.init.uniform_(self.bias, -bound, bound)

        def forward(self, x):
            return launch(x)
    """
    assert check(guard, model=model) == []
    refused = check(guard, "def f(w):\n    return nn.init._no_grad_uniform_(w, 0, 1)\n")
    assert any("_calculate_fan_in_and_fan_out is listed" in m for _, _, m in refused)


# -- forward reaches a launch ---------------------------------------------------------------------------------


def test_forward_without_a_launch_is_refused(guard: StaticGuard):
    model = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    assert "forward_launches_kernel" in rules_at(check(guard, model=model))


@pytest.mark.parametrize(
    "model",
    [
        # through an autograd.Function called with .apply
        """
        class _Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = torch.empty_like(x)
                _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
                return y

            @staticmethod
            def backward(ctx, grad):
                return grad * 2.0


        class ModelNew(nn.Module):
            def forward(self, x):
                return _Scale.apply(x)
        """,
        # through Triton submodules held in nn.Sequential / nn.ModuleList
        """
        class Scale(nn.Module):
            def forward(self, x):
                y = torch.empty_like(x)
                _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
                return y


        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(Scale(), Scale())
                self.extra = nn.ModuleList([Scale() for _ in range(2)])

            def forward(self, x):
                for layer in self.extra:
                    x = layer(x)
                return self.body(x)
        """,
        # through a helper launcher given the kernel, and a kernel chosen by a conditional
        """
        def run(kernel, x, block):
            y = torch.empty_like(x)
            kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
            return y


        class ModelNew(nn.Module):
            def forward(self, x):
                kernel = _scale_kernel if x.is_contiguous() else _scale_kernel
                if x.numel() > 1 << 20:
                    return run(kernel, x, 1024)
                grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
                y = torch.empty_like(x)
                kernel[grid](x, y, x.numel(), BLOCK=128)
                return y
        """,
        # through a module-level table of kernels and a kernel kept on self
        """
        KERNELS = {torch.float32: _scale_kernel}


        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.kernel = _scale_kernel

            def forward(self, x):
                y = torch.empty_like(x)
                KERNELS[x.dtype][(1,)](x, y, x.numel(), BLOCK=1024)
                self.kernel[(1,)](x, y, x.numel(), BLOCK=1024)
                return y
        """,
    ],
    ids=["autograd_function", "sequential", "helper_and_conditional", "table_and_self"],
)
def test_forward_reaches_launches_through_the_ways_llms_write_them(guard: StaticGuard, model: str):
    assert check(guard, model=model) == []


# -- the product's own candidates, the honest corpora and every cheat's declared rule -------------------------


def header(path: Path) -> dict[str, str]:
    fields = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[2:].partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def test_every_static_cheat_fires_its_declared_rule_and_every_other_candidate_passes(guard: StaticGuard):
    folders = ("candidates", "candidates_gpu", "faults", "honest", "honest_llm")
    files = [p for folder in folders for p in sorted((CHEATS / folder).glob("*.py"))]
    assert len(files) > 60
    for path in files:
        fields = header(path)
        errors, _ = guard.check(path.read_text())
        fired = {d.rule for d in errors}
        expect = fields.get("expect", "verified")
        if expect.startswith("static_guard") and not fields.get("uncaught"):  # uncaught: a strict xfail today
            expected = set(expect.partition("rule=")[2].split("|")) - {""}
            assert errors and (not expected or fired & expected), f"{path.name}: expected {expected}, fired {fired}"
        elif "static_guard=false" not in fields.get("config", "") and not fields.get("uncaught", "").startswith(
            "(a false rejection) static_guard"
        ):  # a false rejection by the guard still open is a strict xfail of the cheats suite
            assert not errors, f"{path.name}: {[(d.rule, d.line, d.message) for d in errors]}"


def test_tensor_subclasses_and_other_bases_are_refused(guard: StaticGuard):
    assert torch.Tensor is resolve_path("torch.Tensor")
    found = check(guard, "class Lazy(torch.Tensor):\n    pass\n")
    assert "object_allowlist" in rules_at(found) and any("tensor subclasses" in m for _, _, m in found)
    assert "object_allowlist" in rules_at(check(guard, "class Odd(torch.dtype):\n    pass\n"))


def test_module_level_code_sets_attributes_only_of_its_own_definitions(guard: StaticGuard):
    assert "global_state" in rules_at(check(guard, "holder = []\nholder.extra = 1\n"))
    assert "global_state" in rules_at(check(guard, "import math\nfound = math\nfound.pi = 3\n"))
    assert check(guard, "def helper():\n    return 1\n\n\nhelper.cached = 2\n") == []


def test_imports_inside_blocks_and_functions_bind_their_modules(guard: StaticGuard):
    for snippet in (
        "if True:\n    import torch.nn.functional as G\n\nN = G.np\n",
        "def f():\n    if True:\n        import torch.nn.functional as G\n    return G.np\n",
        "class Holder:\n    import torch.nn.functional as G\n\n    N = G.np\n",
    ):
        assert "object_allowlist" in rules_at(check(guard, snippet)), snippet


def test_the_reference_names_are_refused_with_their_line(guard: StaticGuard):
    snippet = "def get_inputs():\n    return []\n\n\ndef make():\n    return Model()\n"
    findings = {(r, n) for r, n, _ in check(guard, snippet)}
    assert ("reference_access", line_of(snippet, "def get_inputs")) in findings
    assert ("reference_access", line_of(snippet, "return Model()")) in findings


def test_kernel_internals_are_refused(guard: StaticGuard):
    # JITFunction.get_capture_scope() is the candidate module's globals, __builtins__ (and getattr) included
    snippet = "def escape():\n    return _scale_kernel.get_capture_scope()['__builtins__']\n"
    findings = {(r, n) for r, n, _ in check(guard, snippet)}
    line = line_of(snippet, "get_capture_scope")
    assert {("forbidden_attribute", line), ("private_attribute", line)} <= findings


def test_overriding_nn_module_members_the_harness_relies_on_is_refused(guard: StaticGuard):
    snippet = """
    class Hidden(nn.Module):
        named_buffers = None

        def state_dict(self, *args, **kwargs):
            return {}

        def _call_impl(self, *args):
            return args[0]

        def extra_repr(self):
            return "honest"
    """
    findings = {(r, n) for r, n, _ in check(guard, snippet)}
    for needle in ("named_buffers = None", "def state_dict", "def _call_impl"):
        assert ("forbidden_attribute", line_of(snippet, needle)) in findings, needle
    assert not any(n == line_of(snippet, "def extra_repr") for _, n in findings)
    # nn.Module's own private fields are not the candidate's even when it assigns them
    assigned = "class Sneaky(nn.Module):\n    def __init__(self):\n        self._modules = {}\n"
    assert "private_attribute" in rules_at(check(guard, assigned + "\n\ndef peek(m):\n    return m._modules\n"))


def test_class_level_names_may_not_shadow_outer_ones(guard: StaticGuard):
    # if False: typing = None leaves the module's typing visible in the class body at run time
    snippet = "import typing\n\n\nclass Escape:\n    if False:\n        typing = None\n    hint = typing.ForwardRef\n"
    assert "object_allowlist" in rules_at(check(guard, snippet))


def test_format_strings_and_per_element_python_are_refused(guard: StaticGuard):
    assert "forbidden_attribute" in rules_at(check(guard, "def f(x):\n    return '{0.shape}'.format(x)\n"))
    assert "forbidden_attribute" in rules_at(check(guard, "def f(x):\n    return x.apply_(abs)\n"))
    assert check(guard, "def f(x):\n    return f'{x.shape}'\n") == []


# -- names bound only on a dead path; state kept across calls (issue 25) ------------------------------------


@pytest.mark.parametrize(
    "snippet",
    [
        "if False:\n    del exec\n\n\ndef load():\n    exec('1')\n",  # a module-level name never bound: the builtin
        "class Escape:\n    if False:\n        del exec\n    exec('1')\n",  # a class body reads it with LOAD_NAME
        "def f(x):\n    del open\n    return x\n",  # del of a name the function never assigns
        "if False:\n    exec = 1\n",
        "for exec in []:\n    pass\n",
        "if False:\n    with torch.no_grad() as exec:\n        pass\n",
        "if False:\n    import math as exec\n",
        "if False:\n    from math import sqrt as exec\n",
        "if False:\n\n    def exec():\n        pass\n",
        "class C:\n    for eval in []:\n        pass\n",
        "class C:\n    if False:\n        eval: int = 1\n",
        "exec: int\n",  # an annotation alone makes exec module-level to a guard that counts it
    ],
)
def test_a_builtin_is_never_the_candidates_own_name_at_module_or_class_level(guard: StaticGuard, snippet: str):
    assert "forbidden_name" in rules_at(check(guard, snippet)), snippet


def test_del_of_an_assigned_name_and_comprehension_variables_pass(guard: StaticGuard):
    snippet = """
    def tidy(x):
        tmp = x * 2
        del tmp
        return [exec for exec in range(3)]
    """
    assert check(guard, snippet) == []


@pytest.mark.parametrize(
    "snippet",
    [
        # the guard would check tl.arange against triton.language; what runs is the parameter
        "def f(tl=print):\n    if False:\n        import triton.language as tl\n    return tl.arange\n",
        # two imports of one name: the guard resolves one of them, the other may be the one that ran
        "import math as M\n\nif False:\n    import torch.nn as M\n",
    ],
)
def test_an_imported_name_has_one_meaning_in_its_scope(guard: StaticGuard, snippet: str):
    assert "object_allowlist" in rules_at(check(guard, snippet)), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "def f(x, calls=[0]):\n    return x\n",
        "def f(x, *, seen={}):\n    return x\n",
        "def f(x, seen={1}):\n    return x\n",
        "def f(x, buf=torch.zeros(1)):\n    return x\n",
        "g = lambda x, c=[0]: c\n",
    ],
)
def test_defaults_that_hold_state_are_refused(guard: StaticGuard, snippet: str):
    assert "global_state" in rules_at(check(guard, snippet)), snippet


def test_plain_defaults_pass(guard: StaticGuard):
    snippet = """
    def f(x, dim=-1, eps=1e-5, dtype=torch.float32, stride=(1, 1), out=None, act=F.relu):
        return x
    """
    assert check(guard, snippet) == []


COUNTER_CLASS = """
class ModelNew(nn.Module):
    calls = 0

    def __init__(self):
        super().__init__()

    def forward(self, x):
        ModelNew.calls = ModelNew.calls + 1
        return launch(x)
"""


@pytest.mark.parametrize(
    "extra, model",
    [
        ("", COUNTER_CLASS),
        ("class K:\n    n = [0]\n\n\ndef bump():\n    K.n[0] += 1\n", MODEL),
        ("class K:\n    n = []\n\n\ndef bump():\n    K.n.append(1)\n", MODEL),
        ("def h():\n    pass\n\n\ndef bump():\n    h.calls = 1\n", MODEL),
        # a closure's cell outlives the call
        ("def make():\n    c = [0]\n\n    def f():\n        c[0] += 1\n        return c[0]\n\n    return f\n", MODEL),
    ],
)
def test_writing_classes_functions_and_closures_at_run_time_is_state(guard: StaticGuard, extra: str, model: str):
    assert "global_state" in rules_at(check(guard, extra, model))


STATE_THROUGH_NAMES = [
    # an alias of a class attribute, written in forward
    "class Store:\n    seen = [0]\n",
    "        c = Store.seen\n        c[0] += 1\n",
    # a method default naming a class-level list
    "",
    "        self.bump()\n",
    # a module-level instance whose method writes its own attribute
    "class Counter:\n    def __init__(self):\n        self.n = 0\n\n    def bump(self):\n        self.n += 1\n\n\n"
    "COUNTER = Counter()\n",
    "        COUNTER.bump()\n",
    # an attribute set on a value that is not the call's ctx
    "",
    "        y = launch(x)\n        y.seen = True\n",
]


@pytest.mark.parametrize("extra, body", list(zip(STATE_THROUGH_NAMES[::2], STATE_THROUGH_NAMES[1::2], strict=True)))
def test_state_written_through_other_names_in_forward_is_refused(guard: StaticGuard, extra: str, body: str):
    model = f"""
class ModelNew(nn.Module):
    store = [0]

    def __init__(self):
        super().__init__()

    def bump(self, c=store):
        c[0] += 1

    def forward(self, x):
{body}        return launch(x)
"""
    assert "state_in_forward" in rules_at(check(guard, extra, model)), body


def test_ctx_attributes_and_fresh_outputs_written_in_forward_pass(guard: StaticGuard):
    extra = """
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.BLOCK = 256
            ctx.save_for_backward(x)
            return launch(x)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0
    """
    model = """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(4))

    def forward(self, x):
        y = Scale.apply(x)
        out = torch.empty_like(y)
        out[...] = y
        out.mul_(1.0)
        return out
"""
    assert check(guard, extra, model) == []


def test_package_wildcards_list_only_the_packages_own_members():
    allow = build_allowlist(load_rules().guard)
    import functools
    import typing

    assert id(functools.wraps) not in allow.objects  # re-exported by triton.language.math
    assert id(typing.TypeVar) not in allow.objects  # re-exported by torch.nn.init
    assert id(resolve_path("triton.language.math.exp")) in allow.objects
    assert id(resolve_path("math.pi")) in allow.objects


@pytest.mark.parametrize(
    "extra, model",
    [
        ("TICKS = enumerate(range(1 << 30))\n", MODEL),
        ("PAIRS = (zip(range(3), range(3)), 1)\n", MODEL),
        ("STREAM = (i for i in range(10))\n", MODEL),
        ("class K:\n    it = map(abs, range(10))\n", MODEL),
        ("", MODEL.replace("super().__init__()", "super().__init__()\n        self.ticks = reversed(range(10))")),
        ("", MODEL.replace("super().__init__()", "super().__init__()\n        self.ps = self.parameters()")),
    ],
)
def test_iterators_kept_beyond_a_call_are_state(guard: StaticGuard, extra: str, model: str):
    assert "global_state" in rules_at(check(guard, extra, model))


def test_iterators_used_within_a_call_pass(guard: StaticGuard):
    snippet = """
    SIZES = dict(zip(("a", "b"), (1, 2)))
    ORDER = tuple(reversed(range(4)))


    def sizes(x):
        pairs = zip(x.shape, x.stride())
        return [n for n, _ in pairs] + [i for i, _ in enumerate(x.shape)]
    """
    assert check(guard, snippet) == []


def test_writing_through_a_defaulted_parameter_or_deleting_self_state_is_refused(guard: StaticGuard):
    assert "global_state" in rules_at(check(guard, "STORE = [0]\nbump = lambda c=STORE: c.append(1)\n"))
    model = MODEL.replace("return launch(x)", "del self.weight\n        return launch(x)")
    assert "state_in_forward" in rules_at(check(guard, model=model))


STATEFUL_MODEL = """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def get(self):
        return self.cache

    def forward(self, x):
BODY
        return launch(x)
"""


@pytest.mark.parametrize(
    "body",
    [
        "        self.get()['k'] = 1",  # through a call on self
        "        [self.cache][0]['k'] = 1",  # through a display: no name at all
        "        self.get().update(k=1)",
        "        self.cache.get('a', [0])[0] = 1",
        "        c = self.cache if x is not None else None\n        c['k'] = 1",
        "        c, d = self.cache, 1\n        c['k'] = d",
        "        [c.update(k=1) for c in [self.cache]]",
        "        v = self.cache.get('a')\n        v.append(1)",
        "        v = list(self.cache.values())[0]\n        v['k'] = 1",
    ],
)
def test_writes_into_objects_forward_did_not_make_are_refused(guard: StaticGuard, body: str):
    assert "state_in_forward" in rules_at(check(guard, model=STATEFUL_MODEL.replace("BODY", body))), body


def test_writes_into_fresh_locals_and_their_views_pass(guard: StaticGuard):
    body = (
        "        y = torch.empty_like(x)\n        y.view(-1)[0:1] = 0.0\n        z = torch.empty(4).fill_(0)\n"
        "        vals = list(self.cache.values())\n        vals.append(z)"
    )
    assert check(guard, model=STATEFUL_MODEL.replace("BODY", body)) == []


def test_a_private_name_the_candidate_assigns_is_usable_on_self_only_and_never_a_library_ones(guard: StaticGuard):
    own = """
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self._scale = 2.0

        def scale(self, x):
            return x * self._scale
    """
    assert check(guard, own) == []
    # a private name the candidate assigned somewhere, read on another object
    assert "private_attribute" in rules_at(check(guard, own + "\n\ndef peek(x):\n    return x._scale\n"))
    # kernel._unsafe_update_src would swap the kernel's checked source for another
    kernel = own + "\n\ndef swap(src):\n    return self_kernel._unsafe_update_src(src)\n"
    assert "private_attribute" in rules_at(check(guard, kernel.replace("self_kernel", "_scale_kernel")))
    # a library's private name stays private even when the candidate assigns it on self
    on_self = own.replace("self._scale = 2.0", "self._unsafe_update_src = None")
    assert "private_attribute" in rules_at(check(guard, on_self))


def test_a_classmethod_writing_its_class_is_state(guard: StaticGuard):
    snippet = """
    class Counter:
        calls = [0]

        @classmethod
        def bump(cls):
            cls.calls[0] += 1
            cls.total = 1
    """
    findings = check(guard, snippet)
    assert {line for rule, line, _ in findings if rule == "global_state"} == {
        line_of(snippet, "cls.calls[0] += 1"),
        line_of(snippet, "cls.total = 1"),
    }


def test_the_autograd_graph_behind_a_tensor_is_refused(guard: StaticGuard):
    """Where an input came from (a leaf or another op's output) tells a checked gradient call from use."""
    for expression in ("x.grad_fn", "x.grad_fn.next_functions", "x.is_leaf", "x._base", "x.register_hook"):
        model = MODEL.replace("return launch(x)", f"probe = {expression}\n        return launch(x)")
        assert rules_at(check(guard, model=model)) & {"forbidden_attribute", "private_attribute"}, expression
