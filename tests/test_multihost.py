"""Jobs across several hosts, each a network namespace with its own address (tests/netns.py), started
by hand and through the launcher, with network faults: a host partitioned mid-run, 200 ms of delay,
connections reset. Jobs finish where the network allows and fail within the timeout, naming the
peer, where it does not. Needs root; skipped without it."""

from __future__ import annotations

import os
import re
import time

import netns
import numpy as np
import pytest
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints, wait_for_cpu

pytestmark = pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))

PS_TRAIN = os.path.join(SCRIPTS, "ps_train.py")
SECRET = {"FLEETGRAPH_JOB_SECRET": "multi-host test"}
PORT = 6174
FAULT_TIMEOUT_S = 3  # FLEETGRAPH_RPC_TIMEOUT of the fault tests
# Every role ends 2.4-3.3 s after a partition and a reset job 4.0-5.7 s after its start (start-up
# included), on two cores with or without a busy process beside it; the bounds leave room for a
# machine that is busier still, but not for a role that waits out a second timeout or hangs.
PARTITION_BOUND_S = 10
RESET_BOUND_S = 20


def _ps_job(group, servers, trainers, trainer_view=None, steps=10, timeout_s=20, out=None):
    """ps_train.py: a pserver on each of `servers` (hosts), a trainer on each of `trainers`; the
    trainers connect to `trainer_view` (a proxy's endpoints) when given."""
    eps = [f"{h.ip}:{PORT}" for h in servers]
    env = {**SECRET, "FLEETGRAPH_RPC_TIMEOUT": str(timeout_s)}
    common = ["--trainers", str(len(trainers)), "--steps", str(steps)]
    for h, ep in zip(servers, eps):
        group.start(f"pserver {ep}", [PS_TRAIN, "pserver", ep, "--pservers", ",".join(eps), *common], env=env, host=h)
    view = ",".join(trainer_view or eps)
    for t, h in enumerate(trainers):
        dest = os.devnull if out is None else str(out / f"{t}.npz")
        argv = [PS_TRAIN, "trainer", str(t), "--pservers", view, "--out", dest, *common]
        group.start(f"trainer {t}", argv, env=env, host=h)
    return eps


ORACLE_STEPS = 5


@pytest.fixture(scope="module")
def loopback_params(tmp_path_factory):
    """The same job of ORACLE_STEPS steps on one host: the oracle (run once for the module)."""
    where = tmp_path_factory.mktemp("loopback")
    eps = endpoints(2)
    common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", str(ORACLE_STEPS)]
    with ProcessGroup(timeout=60) as group:
        for ep in eps:
            group.start(f"pserver {ep}", [PS_TRAIN, "pserver", ep, *common])
        for t in (0, 1):
            group.start(f"trainer {t}", [PS_TRAIN, "trainer", str(t), "--out", str(where / f"ref{t}.npz"), *common])
        assert_all_exit_zero(group.wait())
    return [dict(np.load(where / f"ref{t}.npz")) for t in (0, 1)]


def _assert_same(tmp_path, want):
    for t in (0, 1):
        got = np.load(tmp_path / f"{t}.npz")
        for name, value in want[t].items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"trainer {t} {name}")


def test_a_parameter_server_job_across_four_hosts_equals_one_host(tmp_path, loopback_params):
    with netns.Cluster(4) as hosts, ProcessGroup(timeout=90) as group:
        _ps_job(group, hosts[:2], hosts[2:], steps=ORACLE_STEPS, out=tmp_path)
        assert_all_exit_zero(group.wait())
    _assert_same(tmp_path, loopback_params)


def test_the_launcher_starts_each_hosts_roles_of_a_parameter_server_job(tmp_path):
    script = os.path.join(SCRIPTS, "fleet_launched.py")
    with netns.Cluster(4) as hosts, ProcessGroup(timeout=120) as group:
        servers = ",".join(f"{h.ip}:{PORT}" for h in hosts[:2])
        workers = ",".join(f"{h.ip}:6170" for h in hosts[2:])
        for h in hosts:
            argv = ["-m", "fleetgraph.distributed.launch", "--servers", servers, "--workers", workers]
            argv += ["--node_ip", h.ip, "--log_dir", str(tmp_path / h.name), script, "--steps", "10"]
            group.start(f"launcher {h.ip}", argv, env={**SECRET, "FLEETGRAPH_RPC_TIMEOUT": "30"}, host=h)
        results = group.wait()
    assert_all_exit_zero(results)
    assert "worker 0 done" in results[f"launcher {hosts[2].ip}"][1]


def test_the_launcher_runs_a_collective_job_across_three_hosts(tmp_path):
    script = os.path.join(SCRIPTS, "fleet_collective.py")
    with netns.Cluster(3) as hosts, ProcessGroup(timeout=120) as group:
        ips = ",".join(h.ip for h in hosts)
        for h in hosts:
            argv = ["-m", "fleetgraph.distributed.launch", "--ips", ips, "--nproc_per_node", "1", "--node_ip", h.ip]
            argv += ["--log_dir", str(tmp_path / h.name), script, "--out", str(tmp_path), "--steps", "5"]
            group.start(f"launcher {h.ip}", argv, env={**SECRET, "FLEETGRAPH_RPC_TIMEOUT": "30"}, host=h)
        assert_all_exit_zero(group.wait())
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(3)]
    for name in set(ranks[0].files) - {"losses"}:  # the ranks hold the same parameters
        for r in (1, 2):
            np.testing.assert_array_equal(ranks[r][name], ranks[0][name])


def test_a_partitioned_host_fails_the_job_within_the_timeout_naming_the_peer():
    cluster = netns.Cluster(4)
    with cluster as hosts, ProcessGroup(timeout=90) as group:
        eps = _ps_job(group, hosts[:2], hosts[2:], steps=100000, timeout_s=FAULT_TIMEOUT_S)
        wait_for_cpu(group.procs[3].popen.pid, 1.2)  # trainer 1 is training
        cluster.partition(hosts[3])  # trainer 1's host drops off the network
        started = time.monotonic()
        results = group.wait()
    assert time.monotonic() - started < PARTITION_BOUND_S  # the last role to end, so every role
    assert all(code != 0 for code, _ in results.values())
    code, out = results["trainer 1"]
    peer = f"{re.escape(eps[0])}|{re.escape(eps[1])}"
    assert re.search(rf"from ({peer}): no answer after {FAULT_TIMEOUT_S}\.0 s", out), out[-2000:]
    assert any("trainer(s) [1]" in results[f"pserver {ep}"][1] for ep in eps)


def test_a_job_finishes_through_200_ms_of_delay(tmp_path, loopback_params):
    with netns.Cluster(4) as hosts, ProcessGroup(timeout=120) as group:
        with netns.proxied(hosts[:2], PORT + 1, PORT, delay_s=0.2) as proxies:
            started = time.monotonic()
            _ps_job(group, hosts[:2], hosts[2:], trainer_view=proxies, steps=ORACLE_STEPS, out=tmp_path)
            assert_all_exit_zero(group.wait())
    assert time.monotonic() - started > 2  # the delay was there
    _assert_same(tmp_path, loopback_params)


def test_reset_connections_fail_the_job_within_the_timeout_naming_the_endpoint():
    with netns.Cluster(4) as hosts, ProcessGroup(timeout=90) as group:
        with netns.proxied(hosts[:2], PORT + 1, PORT, reset_after=20_000) as proxies:
            started = time.monotonic()
            _ps_job(group, hosts[:2], hosts[2:], trainer_view=proxies, steps=100000, timeout_s=FAULT_TIMEOUT_S)
            results = group.wait()
    assert time.monotonic() - started < RESET_BOUND_S
    trainer_outs = [results[f"trainer {t}"] for t in (0, 1)]
    assert all(code != 0 for code, _ in trainer_outs)
    named = re.compile("|".join(re.escape(p) for p in proxies))
    assert all(named.search(out) for _, out in trainer_outs), [out[-1500:] for _, out in trainer_outs]
