"""deploy/: the compose file and the Kubernetes manifests agree with each other and with synthgpt itself
(flags its CLI accepts, the rule file mounted where the command reads it, probes on routes that exist)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from synthgpt import cli
from synthgpt.rules.loader import load_files
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport2

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def serve_args(argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """The container's command as `synthgpt` parses it (the image's entrypoint is `synthgpt`)."""
    monkeypatch.delenv("SYNTHGPT_STATE", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return cli.build_parser().parse_args(argv)


def k8s(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()) if d]


def test_the_rule_file_loads_and_the_configmap_carries_it() -> None:
    loaded = load_files([DEPLOY / "rules.yaml"])
    assert [r.name for r in loaded.ruleset] == ["flaky", "default"]
    (configmap,) = k8s("configmap.yaml")
    assert configmap["data"]["rules.yaml"] == (DEPLOY / "rules.yaml").read_text()


def test_compose_replicas_share_redis_and_read_the_mounted_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"redis", "synthgpt", "nginx"}
    app = services["synthgpt"]
    assert app["deploy"]["replicas"] >= 3
    args = serve_args(app["command"], app["environment"], monkeypatch)
    state = urlsplit(args.state)
    assert (state.scheme, state.hostname, state.port) == ("redis", "redis", 6379)
    mounts = {target: source for source, target, *_ in (v.split(":") for v in app["volumes"])}
    (rule_file,) = args.rule_files
    assert (DEPLOY / mounts[rule_file]).resolve() == (DEPLOY / "rules.yaml").resolve()
    assert args.host == "0.0.0.0"
    assert str(args.port) in app["healthcheck"]["test"][-1] and "/readyz" in app["healthcheck"]["test"][-1]
    assert app["build"] == ".."  # the repository's one Dockerfile (tests/packaging checks it)
    assert (DEPLOY / app["build"] / "Dockerfile").is_file() and not (DEPLOY / "Dockerfile").exists()
    # nginx: round robin to the replicas' service name and port, with its config mounted
    nginx = services["nginx"]
    assert any(v.startswith("./nginx.conf:/etc/nginx/nginx.conf") for v in nginx["volumes"])
    conf = (DEPLOY / "nginx.conf").read_text()
    assert re.findall(r"^\s*server (\S+);", conf, re.M) == [f"synthgpt:{args.port}"]
    assert "proxy_pass http://synthgpt;" in conf
    listen = re.search(r"listen (\d+);", conf)
    assert listen is not None and nginx["ports"] == [f"8080:{listen.group(1)}"]


def test_kubernetes_deployment_service_probes_and_hpa_fit_together(monkeypatch: pytest.MonkeyPatch) -> None:
    deployment, service, hpa = k8s("deployment.yaml")
    redis_deployment, redis_service = k8s("redis.yaml")
    (configmap,) = k8s("configmap.yaml")
    assert [d["kind"] for d in (deployment, service, hpa)] == ["Deployment", "Service",
                                                                "HorizontalPodAutoscaler"]  # fmt: skip
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    args = serve_args(container["args"], env, monkeypatch)
    # the state store is the Redis Service, on its port
    state = urlsplit(args.state)
    redis_port = redis_service["spec"]["ports"][0]["port"]
    assert (state.hostname, state.port) == (redis_service["metadata"]["name"], redis_port)
    redis_labels = redis_deployment["spec"]["template"]["metadata"]["labels"]
    assert redis_service["spec"]["selector"].items() <= redis_labels.items()
    # the rule file is the ConfigMap's key, mounted where the command reads it
    (mount,) = container["volumeMounts"]
    (volume,) = pod["spec"]["volumes"]
    assert volume["name"] == mount["name"] and volume["configMap"]["name"] == configmap["metadata"]["name"]
    assert args.rule_files == [f"{mount['mountPath']}/rules.yaml"]
    assert "rules.yaml" in configmap["data"]
    # probes: readiness on /readyz, liveness on /healthz, on the port the server listens on
    (port,) = container["ports"]
    assert port["containerPort"] == args.port and args.host == "0.0.0.0"
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    # the Service reaches the pods; the HPA scales this Deployment
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert hpa["spec"]["minReplicas"] <= deployment["spec"]["replicas"] <= hpa["spec"]["maxReplicas"]


def test_the_probe_routes_answer() -> None:
    import httpx2

    from synthgpt import MockGPT

    with httpx2.Client(transport=InProcessTransport2(create_app(MockGPT())), base_url="http://t") as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").json()["status"] == "ready"
