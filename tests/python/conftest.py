"""Fixtures the binding's tests share."""
import pytest

import panto
from panto import _native


@pytest.fixture(scope="module")
def library() -> _native.Library:
    """The loaded libpanto; a test that needs it fails with where it was looked for."""
    if _native.LIB is None:
        pytest.fail(str(panto.LibraryNotFound(_native.LOOKED_IN)), pytrace=False)
    return _native.LIB


@pytest.fixture(params=["anthropic", "openai"])
def provider(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs once per provider."""
    return str(request.param)
