"""Shared fixtures of the Python client suite (run by scripts/mcp-tests.sh)."""

import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"
