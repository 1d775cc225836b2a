"""deploy/kubernetes/fleetgraph-job.yaml: parsed as Kubernetes would read it, each pod's environment
worked out from its index (fieldRef, secretKeyRef, $(VAR) references) and given to the role parser:
every role finds its place, and the names pods get are the names the endpoints use."""

from __future__ import annotations

import os
import re

import pytest

from fleetgraph.distributed.role import Role, parse_role_env

yaml = pytest.importorskip("yaml")
MANIFEST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "deploy", "kubernetes")
INDEX_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def _documents() -> dict[tuple[str, str], dict]:
    with open(os.path.join(MANIFEST, "fleetgraph-job.yaml")) as f:
        return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(f)}


def _pod_env(job: dict, index: int) -> dict[str, str]:
    """The container's environment as the kubelet builds it: in order, each $(NAME) replaced by an
    earlier variable's value."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    env: dict[str, str] = {}
    for item in container["env"]:
        if "value" in item:
            value = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), str(item["value"]))
        elif item["valueFrom"].get("fieldRef", {}).get("fieldPath") == INDEX_ANNOTATION:
            value = str(index)
        elif "secretKeyRef" in item["valueFrom"]:
            value = "the job secret"
        else:
            raise AssertionError(f"{item['name']}: a source this test does not model: {item['valueFrom']}")
        env[item["name"]] = value
    return env


def test_the_manifest_is_a_headless_service_and_two_indexed_jobs():
    docs = _documents()
    assert set(docs) == {("Service", "fleetgraph"), ("Job", "fleetgraph-pserver"), ("Job", "fleetgraph-trainer")}
    service = docs["Service", "fleetgraph"]
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    for name in ("fleetgraph-pserver", "fleetgraph-trainer"):
        spec = docs["Job", name]["spec"]
        assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"]
        pod = spec["template"]
        assert pod["spec"]["subdomain"] == "fleetgraph"  # the Service: pods get <job>-<index>.fleetgraph
        assert all(pod["metadata"]["labels"][k] == v for k, v in service["spec"]["selector"].items())


def test_every_pod_finds_its_role_from_its_index():
    docs = _documents()
    servers_job, trainers_job = docs["Job", "fleetgraph-pserver"], docs["Job", "fleetgraph-trainer"]
    servers = [parse_role_env(_pod_env(servers_job, i)) for i in range(servers_job["spec"]["completions"])]
    trainers = [parse_role_env(_pod_env(trainers_job, i)) for i in range(trainers_job["spec"]["completions"])]
    # a pod's DNS name, <job>-<index>.<subdomain>, is its entry in the endpoint list
    names = [f"fleetgraph-pserver-{i}.fleetgraph" for i in range(len(servers))]
    assert [info.current_endpoint.rsplit(":", 1)[0] for info in servers] == names
    for i, info in enumerate(servers):
        assert (info.role, info.current_id, info.worker_num) == (Role.SERVER, i, len(trainers))
        assert info.server_endpoints == servers[0].server_endpoints
    for i, info in enumerate(trainers):
        assert (info.role, info.current_id, info.server_endpoints) == (Role.WORKER, i, servers[0].server_endpoints)
    for job in (servers_job, trainers_job):
        assert _pod_env(job, 0)["FLEETGRAPH_JOB_SECRET"] == "the job secret"  # every role authenticates
