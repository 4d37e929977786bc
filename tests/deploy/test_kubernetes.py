"""Issue #61: the Kubernetes manifests in ``deploy/kubernetes/``, checked offline (this project's
machines have no cluster). Every object is validated against the Kubernetes 1.31 schemas
shipped inside the ``kubernetes-validate`` package (``--strict``: unknown fields refused; no
network); KEDA's ScaledObject, a custom resource with no schema there, is skipped by kind and
checked field by field instead. Then the manifests are held to the other deployment files: the
image, user, data folder, port, commands and environment of the Dockerfile and of
``deploy/compose.yaml``, every ``PIXELMILL_*`` name a real setting, every reference between
objects (selectors, ports, names) resolved. Last, the API pods' command is run for real on a
fresh database: live at once, ready only once the migration Job's command has run."""

from __future__ import annotations

import re
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml
from kubernetes_validate import utils as k8s_schemas  # type: ignore[import-untyped]

from pixelmill.config import Settings
from pixelmill.queue.celery import lane_queue
from tests.deploy.files import (
    DEPLOY,
    load_compose,
    read_dockerfile,
    service_environment,
)
from tests.deploy.names import is_setting
from tests.deploy.test_setting_names import filled_env
from tests.multinode.cluster import Node, free_port
from tests.queue.workers import PIXELMILL
from tests.support.services import BACKENDS, postgres_schema
from tests.support.waiting import wait_until

KUBERNETES = DEPLOY / "kubernetes"
VERSION = "1.31.0"
CUSTOM_KINDS = {"ScaledObject"}  # KEDA's CRD: no schema in the package
NOT_APPLIED = {"secret.example.yaml", "worker-keda-scaledobject.yaml"}
"""Files outside kustomization.yaml: the Secret's template and the optional KEDA object."""
NAMESPACE = "pixelmill"
IMAGE_DATA_DIR = "/var/lib/pixelmill"


def manifest_files() -> list[Path]:
    return sorted(p for p in KUBERNETES.glob("*.yaml") if p.name != "kustomization.yaml")


def documents(path: Path) -> list[dict[str, Any]]:
    found = [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    assert all(isinstance(doc, dict) for doc in found), path.name
    return found


def all_objects() -> list[dict[str, Any]]:
    return [doc for path in manifest_files() for doc in documents(path)]


def the(kind: str, name: str) -> dict[str, Any]:
    found = [o for o in all_objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def container(workload: dict[str, Any]) -> dict[str, Any]:
    containers = pod_spec(workload)["containers"]
    assert len(containers) == 1, workload["metadata"]["name"]
    found: dict[str, Any] = containers[0]
    return found


WORKLOADS = {
    "api": ("Deployment", "pixelmill-api"),
    "worker": ("Deployment", "pixelmill-worker"),
    "migrate": ("Job", "pixelmill-migrate"),
}


def workload(service: str) -> dict[str, Any]:
    return the(*WORKLOADS[service])


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose(filled_env())


# ---- the schemas ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: p.name)
def test_every_object_passes_the_kubernetes_schemas(path: Path) -> None:
    for obj in documents(path):
        if obj["kind"] in CUSTOM_KINDS:
            continue
        try:
            checked = k8s_schemas.validate(obj, VERSION, strict=True)
        except k8s_schemas.ValidationError as exc:
            where = ".".join(str(part) for part in exc.path)
            pytest.fail(f"{path.name}: {obj['kind']}/{obj['metadata']['name']}: {where}: {exc}")
        assert checked == "1.31"


def test_the_validator_refuses_what_a_cluster_would() -> None:
    """The check has teeth, offline: a misspelt field (strict), a wrong type, an unknown kind."""
    deployment = workload("api")
    spelt = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(k8s_schemas.ValidationError):
        k8s_schemas.validate(spelt, VERSION, strict=True)
    typed = {**deployment, "spec": {**deployment["spec"], "replicas": "two"}}
    with pytest.raises(k8s_schemas.ValidationError):
        k8s_schemas.validate(typed, VERSION, strict=True)
    with pytest.raises(k8s_schemas.SchemaNotFoundError):
        k8s_schemas.validate({"apiVersion": "apps/v1", "kind": "Deploymnet"}, VERSION, True)


def test_the_kustomization_lists_every_manifest_but_the_template_and_keda() -> None:
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Kustomization"
    assert kustomization["namespace"] == NAMESPACE
    listed = kustomization["resources"]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(p.name for p in manifest_files() if p.name not in NOT_APPLIED)
    assert {image["name"] for image in kustomization["images"]} == {"pixelmill"}
    kinds = {o["kind"] for o in all_objects()}
    assert {
        "Namespace",
        "ConfigMap",
        "Secret",
        "Job",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "Ingress",
        "ScaledObject",
    } <= kinds
    for obj in all_objects():
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == NAMESPACE, obj["metadata"]["name"]


# ---- the settings -------------------------------------------------------------------------


def configured() -> dict[str, str]:
    """The environment every pixelmill pod gets: the ConfigMap, then the Secret's template."""
    config = the("ConfigMap", "pixelmill-config")["data"]
    secret = the("Secret", "pixelmill-secrets")["stringData"]
    assert not set(config) & set(secret)
    return {**config, **secret}


def test_every_pixelmill_name_is_a_setting() -> None:
    names = set(configured())
    for service in WORKLOADS:
        names |= {env["name"] for env in container(workload(service)).get("env", [])}
    pixelmill = sorted(n for n in names if n.startswith("PIXELMILL_"))
    assert len(pixelmill) >= 10
    unknown = [n for n in pixelmill if not is_setting(n)]
    assert unknown == [], f"not settings (src/pixelmill/config.py): {unknown}"
    # The secret ones are in the Secret, never in the ConfigMap.
    secret = set(the("Secret", "pixelmill-secrets")["stringData"])
    assert {"PIXELMILL_SECRET_KEY", "PIXELMILL_DATABASE_URL", "AWS_SECRET_ACCESS_KEY"} <= secret
    assert all(value == "" for value in the("Secret", "pixelmill-secrets")["stringData"].values())


def test_every_pod_gets_the_configmap_and_the_secret() -> None:
    for service in WORKLOADS:
        sources = container(workload(service))["envFrom"]
        assert sources == [
            {"configMapRef": {"name": "pixelmill-config"}},
            {"secretRef": {"name": "pixelmill-secrets"}},
        ], service


def test_the_environment_is_the_compose_stacks(compose: dict[str, Any]) -> None:
    """The variables compose gives the api and worker services, all of them, with the same
    fixed values (the service addresses differ: in-cluster names)."""
    env = configured()
    stack = service_environment(compose["services"]["api"])
    missing = sorted(set(stack) - set(env))
    assert missing == [], f"set by compose, missing here: {missing}"
    extra = sorted(n for n in set(env) - set(stack) if not is_setting(n))
    assert extra == [], f"neither a setting nor set by compose: {extra}"
    for name in (
        "PIXELMILL_ENV",
        "PIXELMILL_QUEUE",
        "PIXELMILL_STORAGE",
        "PIXELMILL_S3_BUCKET",
        "PIXELMILL_S3_REGION",
        "PIXELMILL_CPU_WORKERS",
        "PIXELMILL_JOB_WORKERS",
        "PIXELMILL_FREE_CREDITS",
        "PIXELMILL_RESULT_TTL_HOURS",
        "PIXELMILL_BACKEND_PROFILE",
        "FORWARDED_ALLOW_IPS",
    ):
        assert env[name] == stack[name], name
    # Broker and rate limits on the same Redis databases as compose's.
    for name in ("PIXELMILL_REDIS_URL", "PIXELMILL_RATELIMIT_STORAGE"):
        assert urlsplit(env[name]).path == urlsplit(stack[name]).path, name


def test_the_settings_accept_the_pods_environment() -> None:
    env = {
        **configured(),
        "PIXELMILL_SECRET_KEY": secrets.token_hex(32),
        "PIXELMILL_DATABASE_URL": "postgresql+psycopg://pixelmill:pw@postgres:5432/pixelmill",
    }
    values = {
        key.removeprefix("PIXELMILL_").lower(): value
        for key, value in env.items()
        if key.startswith("PIXELMILL_")
    }
    settings = Settings.model_validate(values)
    assert settings.env == "production" and settings.queue == "celery"
    assert settings.storage == "s3" and settings.s3_bucket == "pixelmill"
    # The template's empty secret key is refused in production: pods stop at start.
    with pytest.raises(ValueError, match="PIXELMILL_SECRET_KEY"):
        Settings.model_validate({**values, "secret_key": ""})


# ---- the image and the commands ------------------------------------------------------------


def test_image_user_and_data_folder_are_the_dockerfiles(compose: dict[str, Any]) -> None:
    image = read_dockerfile().final
    uid = int(re.search(r"--uid (\d+)", " ".join(image.all("RUN")))[1])  # type: ignore[index]
    data_dir = image.env()["PIXELMILL_DATA_DIR"]
    assert data_dir == IMAGE_DATA_DIR
    compose_image = compose["services"]["api"]["image"]
    for service in WORKLOADS:
        pod, box = pod_spec(workload(service)), container(workload(service))
        assert box["image"] == compose_image, service
        # No command: the image's ENTRYPOINT (pixelmill) runs the args.
        assert "command" not in box, service
        assert pod["automountServiceAccountToken"] is False, service
        security = pod["securityContext"]
        assert security["runAsNonRoot"] is True and security["runAsUser"] == uid, service
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}, service
        assert box["securityContext"] == {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        }, service
        # The root file system is read-only: what the app writes goes to emptyDir volumes.
        mounts = {m["mountPath"]: m["name"] for m in box["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        for path in (data_dir, "/tmp"):
            assert "emptyDir" in volumes[mounts[path]], (service, path)
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(box["resources"][kind]), (service, kind)


def test_the_commands_are_the_compose_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert container(workload("worker"))["args"] == services["worker"]["command"]
    assert container(workload("migrate"))["args"] == services["migrate"]["command"]
    # The API as compose runs it, without the migration (the Job's).
    assert container(workload("api"))["args"] == [*services["api"]["command"], "--no-migrate"]


def test_the_api_probes_port_and_service() -> None:
    api = container(workload("api"))
    port = api["args"][api["args"].index("--port") + 1]
    assert f"EXPOSE {port}" in [f"EXPOSE {p}" for p in read_dockerfile().final.all("EXPOSE")]
    ports = {p["name"]: p["containerPort"] for p in api["ports"]}
    assert ports == {"http": int(port)}
    assert api["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert api["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert api["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    labels = workload("api")["spec"]["template"]["metadata"]["labels"]
    assert workload("api")["spec"]["selector"]["matchLabels"] == labels
    service = the("Service", "pixelmill-api")
    assert service["spec"]["selector"] == labels
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    hpa = the("HorizontalPodAutoscaler", "pixelmill-api")["spec"]
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "pixelmill-api",
    }
    assert 1 <= hpa["minReplicas"] <= hpa["maxReplicas"]
    pdb = the("PodDisruptionBudget", "pixelmill-api")["spec"]
    assert pdb["selector"]["matchLabels"] == labels
    assert pdb["minAvailable"] < hpa["minReplicas"]  # a drain can always move one
    backends = [
        path["backend"]["service"]
        for rule in the("Ingress", "pixelmill")["spec"]["rules"]
        for path in rule["http"]["paths"]
    ]
    names = {p["name"] for p in service["spec"]["ports"]}
    assert backends and all(b["name"] == "pixelmill-api" for b in backends)
    assert all(b["port"]["name"] in names for b in backends)
    host = the("Ingress", "pixelmill")["spec"]["rules"][0]["host"]
    assert urlsplit(configured()["PIXELMILL_PUBLIC_BASE_URL"]).hostname == host


def test_the_worker_probe_and_stop_are_the_compose_workers(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    probe = container(workload("worker"))
    check = worker["healthcheck"]["test"]
    assert check[0] == "CMD"
    for kind in ("livenessProbe", "startupProbe"):
        assert probe[kind]["exec"]["command"] == check[1:], kind
        # The probe's own deadline is longer than the check's --timeout.
        timeout = float(check[check.index("--timeout") + 1])
        assert probe[kind]["timeoutSeconds"] > timeout, kind
    grace = re.fullmatch(r"(\d+)m", worker["stop_grace_period"])
    assert grace, worker["stop_grace_period"]
    assert pod_spec(workload("worker"))["terminationGracePeriodSeconds"] == 60 * int(grace[1])


def test_network_policies_select_the_pods() -> None:
    api_labels = workload("api")["spec"]["template"]["metadata"]["labels"]
    api_policy = the("NetworkPolicy", "pixelmill-api")["spec"]
    assert api_policy["podSelector"]["matchLabels"] == api_labels
    assert [p["port"] for rule in api_policy["ingress"] for p in rule["ports"]] == ["http"]
    closed = the("NetworkPolicy", "pixelmill-no-ingress")["spec"]
    assert closed["policyTypes"] == ["Ingress"] and "ingress" not in closed
    (expression,) = closed["podSelector"]["matchExpressions"]
    components = {
        workload(s)["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        for s in ("worker", "migrate")
    }
    assert expression["key"] == "app.kubernetes.io/component"
    assert set(expression["values"]) == components


def test_keda_scales_the_workers_on_their_redis_queues() -> None:
    """Checked by hand (no schema for the custom resource): the target, the queues Celery
    keeps as Redis lists (``CeleryQueue.depth`` reads the same), on the broker's database."""
    scaled = the("ScaledObject", "pixelmill-worker")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    spec = scaled["spec"]
    assert spec["scaleTargetRef"] == {"name": "pixelmill-worker"}
    assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
    broker = urlsplit(configured()["PIXELMILL_REDIS_URL"])
    settings = Settings(queue="celery", redis_url=broker.geturl())
    lists = set()
    for trigger in spec["triggers"]:
        assert trigger["type"] == "redis"
        meta = trigger["metadata"]
        host, port = meta["address"].rsplit(":", 1)
        assert host == f"{broker.hostname}.{NAMESPACE}.svc.cluster.local"
        assert int(port) == (broker.port or 6379)
        assert meta["databaseIndex"] == broker.path.strip("/")
        assert int(meta["listLength"]) >= 1
        lists.add(meta["listName"])
    assert lists == {lane_queue(settings, "jobs"), lane_queue(settings, "webhooks")}


# ---- the API pods' command against a fresh database ------------------------------------------


@pytest.fixture
def fresh_database() -> Iterator[str]:
    if "postgresql" not in BACKENDS:
        pytest.skip("PIXELMILL_TEST_DATABASES leaves out postgresql: the cluster's database")
    with postgres_schema("pm_k8s") as url:
        yield url  # not migrated


@pytest.mark.postgres
def test_the_api_waits_unready_for_the_migration_job(fresh_database: str, tmp_path: Path) -> None:
    """``serve --no-migrate`` (the API Deployment's args) on a database nobody migrated: live
    (``/healthz``) but not ready (``/readyz`` 503) until the Job's ``pixelmill migrate`` ran."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PIXELMILL_ENV": "testing",
        "PIXELMILL_SECRET_KEY": secrets.token_hex(32),
        "PIXELMILL_DATABASE_URL": fresh_database,
        "PIXELMILL_DATA_DIR": str(tmp_path / "data"),
    }
    args = container(workload("api"))["args"]
    port = free_port()
    argv = [str(PIXELMILL), *args]
    argv[argv.index("--host") + 1] = "127.0.0.1"
    argv[argv.index("--port") + 1] = str(port)
    api = Node("api", argv, env, tmp_path / "api.log", port)
    api.start()
    try:

        def live() -> bool:
            assert api.alive(), api.log_text()[-3000:]
            try:
                return httpx.get(f"{api.url}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(live, timeout=90, interval=0.3)
        unready = httpx.get(f"{api.url}/readyz", timeout=10)
        assert unready.status_code == 503, unready.text
        assert "migrating the database" not in api.log_text()
        job = container(workload("migrate"))["args"]
        migrated = subprocess.run([str(PIXELMILL), *job], env=env, capture_output=True, timeout=120)
        assert migrated.returncode == 0, migrated.stdout + migrated.stderr
        ready = httpx.get(f"{api.url}/readyz", timeout=10)
        assert ready.status_code == 200, ready.text
    finally:
        api.stop()
