"""Another local user cannot push a one-host ring off shared memory by creating its segment names
first, and a segment file that is not what its rank made is refused with a warning saying why."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from test_collective_runtime import _our_shm_files, _raise_first, needs_shm, run_ranks

from fleetgraph.executor.comm import shm

pytestmark = needs_shm


@pytest.fixture(autouse=True)
def _shared_memory_wanted(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "5")
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto")


@pytest.fixture
def squatted():
    """Files the test creates in /dev/shm as the attacker would; removed at the end."""
    paths: list[str] = []
    yield paths
    for path in paths:
        shm._unlink(path)


def _squat(path: str, squatted: list[str]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(fd)
    squatted.append(path)


def _names_predicted_from(name: str, nranks: int) -> set[str]:
    """What an attacker makes of rank 0's segment name: the same name with each field that reads
    0 (the rank, wherever it sits) set to every other rank."""
    parts = name.split("-")
    return {
        "-".join(parts[:i] + [str(r)] + parts[i + 1 :])
        for i, part in enumerate(parts)
        if part == "0"
        for r in range(1, nranks)
    }


def _allreduce_on_shm(ring):
    return ring.allreduce(np.full(3, ring.rank + 1.0, np.float32))


def test_names_created_first_from_rank_0s_segment_do_not_push_the_ring_off_shared_memory(monkeypatch, squatted):
    """The worst case of the race: the attacker sees rank 0's file (as inotify on /dev/shm would)
    and creates every name it predicts from it before the other ranks create theirs."""
    nranks, before = 3, _our_shm_files()
    create = shm._Segment.create
    rank_0_seen = threading.Event()

    def create_after_the_attacker(cls, *args):
        if threading.current_thread().name != "rank 0":
            assert rank_0_seen.wait(5), "rank 0 never created its segment"
            return create(*args)
        segment = create(*args)
        for name in _our_shm_files() - before:
            for path in _names_predicted_from(name, nranks):
                _squat(os.path.join(shm.SHM_DIR, path), squatted)
        rank_0_seen.set()
        return segment

    monkeypatch.setattr(shm._Segment, "create", classmethod(create_after_the_attacker))
    results = run_ranks(nranks, _allreduce_on_shm, transport="shm")
    _raise_first(results)
    assert squatted, "the attacker predicted no name"
    for got in results:
        np.testing.assert_array_equal(got, [6, 6, 6])
    assert _our_shm_files() == before | {os.path.basename(p) for p in squatted}


@pytest.mark.parametrize("taken_draws", [1, shm._CREATE_TRIES])
def test_a_taken_random_name_is_drawn_again_a_few_times(monkeypatch, caplog, squatted, taken_draws):
    """Rank 1's first draws are forced to one name, created beforehand: it draws again, and only
    after _CREATE_TRIES taken names does the ring fall back to TCP, saying why."""
    forced = bytes(range(1, 17))
    _squat(shm._path(0, 1, forced), squatted)
    urandom, draws = os.urandom, []

    def forced_first(n):
        if threading.current_thread().name == "rank 1" and n == shm._TOKEN_BYTES and len(draws) < taken_draws:
            draws.append(n)
            return forced
        return urandom(n)

    monkeypatch.setattr(shm.os, "urandom", forced_first)
    exhausted = taken_draws == shm._CREATE_TRIES
    with caplog.at_level("WARNING", logger="fleetgraph.comm"):
        results = run_ranks(2, _allreduce_on_shm, transport="tcp" if exhausted else "shm")
    _raise_first(results)
    np.testing.assert_array_equal(results[0], [3, 3, 3])
    assert len(draws) == taken_draws
    taken = f"ring 0, rank 1: cannot create a segment in /dev/shm: {shm._CREATE_TRIES} random names in a row were taken"
    assert (taken in caplog.text) == exhausted
    assert os.path.exists(squatted[0])  # not ours to remove


def _refusals(caplog) -> list[str]:
    """The warnings of ranks that refused a peer's segment."""
    messages = [r.getMessage() for r in caplog.records if r.name == "fleetgraph.comm"]
    return [m for m in messages if "'s segment /dev/shm/" in m]


def _refusal_of_rank_0s_segment(monkeypatch, caplog, tamper) -> str:
    """Run a ring of 2 where `tamper(path)` changes rank 0's segment file just before rank 1 opens
    it: the ring must come up on TCP, and rank 1's one warning saying why is returned."""
    opened = shm._Segment.open

    def tampered_first(cls, path, token, rank):
        if rank == 0:
            tamper(path)
        return opened(path, token, rank)

    monkeypatch.setattr(shm._Segment, "open", classmethod(tampered_first))
    before = _our_shm_files()
    with caplog.at_level("WARNING", logger="fleetgraph.comm"):
        results = run_ranks(2, _allreduce_on_shm, transport="tcp")
    _raise_first(results)
    np.testing.assert_array_equal(results[1], [3, 3, 3])
    assert _our_shm_files() == before
    [refusal] = _refusals(caplog)
    assert refusal.startswith("ring 0, rank 1: rank 0's segment /dev/shm/fleetgraph-0-0-")
    assert refusal.endswith("; the ring moves its bytes over TCP")
    return refusal


def test_a_peer_segment_others_can_read_is_refused_naming_its_mode(monkeypatch, caplog):
    refusal = _refusal_of_rank_0s_segment(monkeypatch, caplog, lambda path: os.chmod(path, 0o644))
    assert ": mode; expected no group or other permissions (0600), got 0644; " in refusal


def test_a_peer_segment_replaced_by_a_link_is_refused(monkeypatch, caplog):
    def link(path):
        os.unlink(path)  # rank 0 keeps its mapping
        os.symlink("/dev/null", path)

    refusal = _refusal_of_rank_0s_segment(monkeypatch, caplog, link)
    assert ": file type; expected a regular file, got a symbolic link; " in refusal


def test_a_peer_segment_with_another_header_is_refused_naming_the_field(monkeypatch, caplog):
    def rewrite_rank(path):
        with open(path, "r+b") as f:
            magic, token, _, size = shm._HEADER.unpack(f.read(shm._HEADER.size))
            f.seek(0)
            f.write(shm._HEADER.pack(magic, token, 7, size))

    refusal = _refusal_of_rank_0s_segment(monkeypatch, caplog, rewrite_rank)
    assert ": header rank; expected 0, got 7; " in refusal


def test_a_peer_segment_of_another_uid_is_refused_naming_the_owner(monkeypatch, caplog):
    """Tests run as one user, so rank 1 plays a process of another effective uid."""
    geteuid = os.geteuid
    monkeypatch.setattr(shm.os, "geteuid", lambda: 4242 if threading.current_thread().name == "rank 1" else geteuid())
    refusal = _refusal_of_rank_0s_segment(monkeypatch, caplog, lambda path: None)
    assert f": owner; expected uid 4242 (this process's effective uid), got uid {geteuid()}; " in refusal
