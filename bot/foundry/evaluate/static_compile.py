"""Compile a candidate's kernels for an NVIDIA target on a machine without a GPU.

The worker's launch recorder knows each kernel's name and the arguments it was launched with. This
module runs as its own isolated child (`python -m foundry.evaluate.static_compile JOBDIR FD FD DIGEST`),
without TRITON_INTERPRET (under the interpreter Triton's standard library is interpreted and cannot be
compiled): it loads the candidate from its checked source (jobfiles.read_checked), and `triton.compile`
with a GPUTarget turns each launched kernel into PTX and a cubin; Triton's bundled cuobjdump reads
registers, stack (spills) and shared memory. These facts diagnose resource problems and feed the static
cost model without spending GPU time.
Imports only stdlib, triton and foundry.evaluate.jobfiles (torch)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from foundry.evaluate import jobfiles, landlock

TARGET = ("cuda", 90, 32)  # sm_90 (H100/H200), warp size 32
MAX_SHARED_BYTES = 232448  # per block on sm_90
DTYPES = {
    "torch.float32": "*fp32",
    "torch.float16": "*fp16",
    "torch.bfloat16": "*bf16",
    "torch.float64": "*fp64",
    "torch.int32": "*i32",
    "torch.int64": "*i64",
    "torch.int16": "*i16",
    "torch.int8": "*i8",
    "torch.uint8": "*u8",
    "torch.bool": "*i1",
}
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
# Failures Triton's autotuner catches while benchmarking (the config is timed as infinitely slow, not raised)
SKIPPED_BY_AUTOTUNER = frozenset({"OutOfResources", "PTXASError", "CompileTimeAssertionFailure"})
RESOURCE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def scalar_type(value: Any) -> str:
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"cannot type argument {value!r}")


def compile_facts(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Facts of fn compiled for sm_90 with the recorded launch arguments (tensors as 'tensor:<dtype>')."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    py_fn, _ = unwrap(fn)
    jit = JITFunction(py_fn)
    options = {k: kwargs[k] for k in LAUNCH_OPTIONS if k in kwargs}
    values = dict(zip([p.name for p in jit.params], args, strict=False))
    values.update({k: v for k, v in kwargs.items() if k not in LAUNCH_OPTIONS})
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    for param in jit.params:
        value = values.get(param.name, param.default if param.has_default else None)
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constexprs[param.name] = value
        elif isinstance(value, str) and value.startswith("tensor:"):
            signature[param.name] = DTYPES.get(value[7:], "*fp32")
        elif value is None:
            signature[param.name] = "constexpr"
            constexprs[param.name] = None
        else:
            signature[param.name] = scalar_type(value)
    compiled = triton.compile(ASTSource(jit, signature, constexprs), target=GPUTarget(*TARGET), options=options)
    facts = {
        "name": py_fn.__name__,
        "shared_bytes": int(compiled.metadata.shared),
        "num_warps": int(compiled.metadata.num_warps),
        "num_stages": int(compiled.metadata.num_stages),
        "target": "sm_90 (static compile)",
        "registers": None,
        "spills": None,
    }
    facts.update(resource_usage(compiled.asm.get("cubin")))
    return facts


def unwrap(fn: Any) -> tuple[Any, list[Any] | None]:
    """The Python function under a kernel's decorators (@triton.jit, @triton.heuristics, @triton.autotune, in any
    order) and the autotune configs, if any. Heuristic values need no unwrapping of their own: the launch
    recorder saw them among the launch's keyword arguments."""
    import inspect

    from triton.runtime.autotuner import Autotuner

    configs = None
    for _ in range(8):
        if inspect.isfunction(fn):
            return fn, configs
        if isinstance(fn, Autotuner) and configs is None:
            configs = list(fn.configs)
        fn = getattr(fn, "fn", None)
    raise TypeError("not a Triton kernel (no Python function under its decorators)")


def config_kwargs(config: Any) -> dict[str, Any]:
    """What an autotune config passes to the launch: its meta-parameters and launch options."""
    values = dict(config.kwargs)
    values.update({k: getattr(config, k) for k in LAUNCH_OPTIONS if getattr(config, k, None) is not None})
    return values


def config_label(config: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in config_kwargs(config).items())


def kernel_facts(name: str, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Facts of one launched kernel; for an autotuned kernel, of each config (the recorded launch had one
    config's values; each config's replace them). A config that does not fit sm_90 (out of resources, more
    shared memory than a block may have, ptxas or compile-time assertion failures) is one the autotuner skips on
    the device: it is reported as skipped, and only a kernel none of whose configs fit is a failure."""
    _, configs = unwrap(fn)
    if configs is None:
        try:
            return [compile_facts(fn, args, kwargs)]
        except Exception as exc:  # the GPU compiler refusing a kernel is a fact about the candidate
            return [failed(name, exc)]
    facts: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for config in configs:
        label = f"{name}[{config_label(config)}]"
        try:
            fact = compile_facts(fn, args, {**kwargs, **config_kwargs(config)})
        except Exception as exc:
            if type(exc).__name__ not in SKIPPED_BY_AUTOTUNER:
                return [failed(label, exc)]
            skipped.append(failed(label, exc))
            continue
        fact["name"] = label
        if (fact.get("shared_bytes") or 0) > MAX_SHARED_BYTES:
            skipped.append(fact)
            continue
        facts.append(fact)
    if not facts:  # every config fails on the device: the first one's failure is the kernel's
        return skipped[:1]
    for fact in skipped:
        why = fact.get("error") or f"{fact.get('shared_bytes')} bytes of shared memory"
        target = f"sm_90 (static compile: config skipped by autotune: {why})"[:400]
        facts.append({"name": fact["name"], "target": target})
    return facts


def failed(name: str, exc: Exception) -> dict[str, Any]:
    message = str(exc).strip().splitlines()
    return {
        "name": name,
        "target": "sm_90 (static compile failed)",
        "error": f"{type(exc).__name__}: {' | '.join(message[-6:])}"[:800],
    }


def resource_usage(cubin: bytes | None) -> dict[str, int]:
    if not cubin:
        return {}
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(tool):
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as handle:
        handle.write(cubin)
        handle.flush()
        result = subprocess.run(
            [tool, "--dump-resource-usage", handle.name], capture_output=True, text=True, timeout=60, check=False
        )
    match = RESOURCE.search(result.stdout)
    if not match:
        return {}
    regs, stack, _shared, local = (int(g) for g in match.groups())
    return {"registers": regs, "spills": stack + local}


def main() -> None:
    jobdir = Path(sys.argv[1])
    out = os.fdopen(int(sys.argv[2]), "wb", buffering=0)
    expected = sys.argv[4] if len(sys.argv) > 4 else ""
    if landlock.requested():  # before the candidate's module is loaded
        try:
            landlock.confine(jobdir)
        except OSError as exc:
            error = jobfiles.no_verdict("sandbox_failed", landlock.failure(exc))
            out.write((json.dumps({"phase": "compile", "error": error}) + "\n").encode())
            return
    try:
        source, raw = jobfiles.read_checked(jobdir, ("candidate.py", "signatures.json"), expected)
    except jobfiles.JobChanged as exc:
        out.write((json.dumps({"phase": "compile", "error": exc.error()}) + "\n").encode())
        return
    signatures = json.loads(raw)
    facts: list[dict[str, Any]] = []
    module = jobfiles.load_candidate(source.decode(), str(jobdir / "candidate.py"))
    for name, (args, kwargs) in signatures.items():
        fn = getattr(module, name, None)
        if fn is None:
            facts.append({"name": name, "target": "sm_90 (static compile: kernel not found at module level)"})
            continue
        try:
            facts.extend(kernel_facts(name, fn, tuple(args), kwargs))
        except Exception as exc:  # not a kernel at all (unwrap): a fact about the candidate too
            facts.append(failed(name, exc))
    out.write((json.dumps({"phase": "compile", "error": None, "kernels": facts}) + "\n").encode())


if __name__ == "__main__":
    main()
