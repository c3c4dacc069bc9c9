"""`make check-deploy`: the Helm chart linted, rendered and validated against Kubernetes' schemas, no cluster.

    python deploy/helm/check.py                  # helm lint + helm template | kubeconform, every ci/*-values.yaml
    python deploy/helm/check.py validate FILE..  # kubeconform alone on rendered manifests (what the tests use)

kubeconform runs in strict mode (unknown or duplicated fields are errors) with the schemas that
kube_schemas.py makes from the Kubernetes and prometheus-operator Go modules; no object is skipped.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kube_schemas  # noqa: E402 - this folder is not a package

HERE = Path(__file__).resolve().parent
CHART = HERE / "ragmesh"
ROOT = HERE.parents[1]
TOOLS = Path(os.environ.get("RAGMESH_TOOLS", ROOT / ".tools"))
KUBE_VERSION = kube_schemas.KUBERNETES_VERSION.lstrip("v")
RELEASE, NAMESPACE = "ragmesh", "ragmesh"


def tool(name: str) -> str:
    path = TOOLS / name
    if not path.exists():
        raise SystemExit(f"{path} is missing: `make {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}`")
    return str(path)


def scenarios() -> list[Path]:
    return sorted((CHART / "ci").glob("*-values.yaml"))


def lint(values: Path) -> bool:
    """`helm lint --strict`; its output only when it fails (it notes, on every run, that files/alerts.yml is a link
    whose contents it includes: that is the point of the link)."""
    done = subprocess.run(
        [tool("helm"), "lint", "--strict", "--kube-version", KUBE_VERSION, str(CHART), "-f", str(values)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
    return done.returncode == 0


def render(values: list[Path], sets: list[str] = ()) -> str:
    """`helm template` of the chart; a failure (a `required` value, a `fail`) exits with helm's message."""
    args = [tool("helm"), "template", RELEASE, str(CHART), "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION]
    for path in values:
        args += ["-f", str(path)]
    for assignment in sets:
        args += ["--set", assignment]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"helm template failed:\n{done.stderr.strip()}")
    return done.stdout


def validate(manifests: str) -> subprocess.CompletedProcess:
    """kubeconform over manifests (YAML text): strict, every kind must have a schema."""
    location = kube_schemas.ensure() / kube_schemas.LOCATION
    return subprocess.run(
        [tool("kubeconform"), "-strict", "-summary", "-schema-location", str(location), "-output", "text", "-"],
        input=manifests,
        capture_output=True,
        text=True,
    )


def report(done: subprocess.CompletedProcess, label: str) -> bool:
    out = (done.stdout + done.stderr).strip()
    print(f"{label}: {out.splitlines()[-1] if out else '(no output)'}")
    if done.returncode != 0:
        print(out, file=sys.stderr)
    return done.returncode == 0


def check_all() -> int:
    started = time.monotonic()
    kube_schemas.ensure()
    ok = True
    for values in scenarios():
        linted = lint(values)
        ok &= linted and report(validate(render([values])), f"{values.name}: helm lint passed; kubeconform")
    print(f"check-deploy: {'passed' if ok else 'FAILED'} in {time.monotonic() - started:.1f}s")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("validate", help="validate rendered manifests (files, or - for stdin)")
    check.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command != "validate":
        return check_all()
    ok = True
    for name in args.files:
        text = sys.stdin.read() if name == "-" else Path(name).read_text()
        ok &= report(validate(text), name)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
