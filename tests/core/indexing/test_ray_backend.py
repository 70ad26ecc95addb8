"""``worker_backend="ray"``: batches as tasks on a local Ray cluster (loopback), written through
the server stores (a Chroma server and FalkorDB), give the in-process index."""

from __future__ import annotations

import os

import pytest

from minirag_core.indexing import index as index_module
from minirag_core.indexing.index import MiniRAGIndex

from core.indexing.test_workers import BatchOrigins, assert_same_index, corpus
from servers import ChromaServer, FalkorDBServer, chroma_executable, started

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if chroma_executable() is None:
        pytest.fail("the chroma executable is not installed")
    root = tmp_path_factory.mktemp("ray-servers")
    with started(ChromaServer, root / "chroma") as chroma, started(FalkorDBServer, root / "falkordb") as falkordb:
        yield chroma, falkordb


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             _node_ip_address="127.0.0.1")
    yield ray
    ray.shutdown()


def test_ray_tasks_build_the_in_process_index_with_one_model_per_worker(tmp_path, monkeypatch, embedder, servers,
                                                                      local_ray) -> None:
    chroma, falkordb = servers
    monkeypatch.setattr(index_module, "INSERT_BATCH_CHUNKS", 6)
    origins = BatchOrigins(monkeypatch)
    docs = corpus()
    here = MiniRAGIndex(tmp_path / "here", embedder=embedder, workers=1)
    here.insert(docs[:-2]), here.insert(docs[-2:])
    origins.take()
    with MiniRAGIndex(tmp_path / "ray", embedder=embedder, workers=2, worker_backend="ray",
                      chroma_url=chroma.url, falkordb_url=f"{falkordb.url}/ray") as on_ray:
        report = on_ray.insert(docs[:-2])
        assert not report.failed_chunks
        on_ray.insert(docs[-2:])  # a second insert: each Ray worker still holds the one extractor and embedder
        seen = origins.take()
        assert os.getpid() not in {pid for pid, _ in seen} and {held for _, held in seen} == {1}
        assert not (tmp_path / "ray" / "chroma").exists()  # the vectors are on the server
        assert_same_index(here, on_ray)
    assert not on_ray.workers.running
