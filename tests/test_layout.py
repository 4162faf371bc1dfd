"""The test tree itself: pytest imports test modules by basename, so two test files with the same name
in different folders break collection of the whole suite."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_test_module_basenames_are_unique():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    duplicated = sorted(name for name, count in names.items() if count > 1)
    assert duplicated == [], f"rename these test modules (one basename each): {duplicated}"


def test_no_test_folder_shadows_an_importable_package():
    # pytest puts tests/ on sys.path; a folder named like a package (tests/ray, tests/github) becomes a
    # namespace package wherever the real one is not installed, and `import ray` finds the test folder.
    shadowing = {"ray", "github", "torch", "triton", "duckdb", "openai", "yaml", "httpx", "pydantic", "foundry"}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir()}
    assert not folders & shadowing, f"rename these test folders: {sorted(folders & shadowing)}"
