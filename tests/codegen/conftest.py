"""Fixtures for codegen tests."""

from __future__ import annotations

import pytest
from foundry.writers.template import TemplateWriter


@pytest.fixture(scope="session")
def writer() -> TemplateWriter:
    return TemplateWriter()
