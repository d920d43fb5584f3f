"""Shared test set-up: the replays' decoded-stream cache goes to a directory
of the test run, never the user's (~/.cache/pagelab/evstream)."""
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_evstream_cache(tmp_path_factory):
    old = os.environ.get("PAGELAB_CACHE_DIR")
    os.environ["PAGELAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("evcache"))
    yield
    if old is None:
        os.environ.pop("PAGELAB_CACHE_DIR", None)
    else:
        os.environ["PAGELAB_CACHE_DIR"] = old
