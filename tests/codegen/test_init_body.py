"""The generated module's constructor: the reference's own statements where they stand alone (its parameters made
and initialised as the reference makes them), empty parameters of the reference's shapes where they do not."""

from __future__ import annotations

import torch
from codegen_helpers import ROOT
from foundry.codegen.analyze import init_body
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

HEAD = "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"


def test_the_constructor_statements_and_the_imports_they_use_are_taken():
    source = HEAD + (
        "class Model(nn.Module):\n"
        "    def __init__(self, d, eps=1e-5):\n"
        '        """Docs."""\n'
        "        super().__init__()\n"
        "        self.fc = nn.Linear(d, 2 * d)\n"
        "        self.scale = nn.Parameter(torch.full((d,), math.sqrt(d)))\n"
        "        self.register_buffer('steps', torch.zeros((), dtype=torch.long))\n"
        "        self.eps = eps\n"
        "    def forward(self, x):\n"
        "        return F.gelu(self.fc(x))\n"
    )
    imports, body = init_body(source, "Model")
    assert imports == ["import math", "import torch", "from torch import nn"]
    assert body == [
        "self.fc = nn.Linear(d, 2 * d)",
        "self.scale = nn.Parameter(torch.full((d,), math.sqrt(d)))",
        "self.register_buffer('steps', torch.zeros((), dtype=torch.long))",
        "self.eps = eps",
    ]


def test_a_constructor_reading_the_files_own_names_is_not_taken():
    helper = HEAD + "WIDTH = 4\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    assert init_body(helper + "        self.w = nn.Parameter(torch.randn(WIDTH))\n", "Model") is None
    method = HEAD + (
        "class Model(nn.Module):\n"
        "    def __init__(self, d):\n"
        "        super().__init__()\n"
        "        self.w = nn.Parameter(torch.empty(d))\n"
        "        self.reset_parameters()\n"
        "    def reset_parameters(self):\n"
        "        nn.init.normal_(self.w)\n"
    )
    assert init_body(method, "Model") is None
    passed = method.replace("self.reset_parameters()", "self.apply(self.reset_parameters)")  # passed, not called
    assert init_body(passed, "Model") is None
    own = method.replace("self.reset_parameters()", "self.apply(lambda m: None)")  # nn.Module's own method: kept
    assert init_body(own, "Model") is not None


def test_a_generated_training_module_starts_as_the_reference():
    path = ROOT / "examples" / "training" / "linear_gelu.py"
    loaded = load_operator(str(path))
    source = TemplateWriter().render(loaded.spec, {})
    assert "self.fc = nn.Linear(in_features, out_features)" in source
    namespace: dict = {}
    exec(compile(source, "kernel.py", "exec"), namespace)
    init = loaded.init_inputs(small=True)
    torch.manual_seed(7)
    ours = namespace["ModelNew"](*init).state_dict()
    torch.manual_seed(7)
    theirs = loaded.model_cls(*init).state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)


def test_a_constructor_reading_its_own_method_falls_back_to_a_state_to_load():
    """self.apply(self._init_weights) (GPT-2's init) reads a method the generated module does not have: the module is
    built with empty parameters of the reference's shapes instead (a state to load), not with a broken constructor."""
    path = ROOT / "tests" / "cheats" / "operators" / "rt24_linear_apply_init_train.py"
    loaded = load_operator(str(path))
    source = TemplateWriter().render(loaded.spec, {})
    assert "_init_weights" not in source
    namespace: dict = {}
    exec(compile(source, "kernel.py", "exec"), namespace)
    built = namespace["ModelNew"](*loaded.init_inputs(small=True))
    assert {k: v.shape for k, v in built.state_dict().items()} == {
        k: v.shape for k, v in loaded.model_cls(*loaded.init_inputs(small=True)).state_dict().items()
    }
