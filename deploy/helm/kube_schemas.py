"""JSON schemas for kubeconform from sources the package registries serve, cached for later runs.

No schema registry is reachable, so the schemas are made here:
- Kubernetes objects from the OpenAPI v2 document in the `k8s.io/kubernetes` Go module's source
  (`api/openapi-spec/swagger.json`), fetched with `go mod download` from the Go module proxy;
- prometheus-operator's ServiceMonitor and PrometheusRule from the CRDs in the
  `github.com/prometheus-operator/prometheus-operator` module (`example/prometheus-operator-crd/`).

The conversion does what kubeconform's own openapi2jsonschema does for its "standalone-strict" schemas:
every `$ref` inlined, int-or-string and quantities accepted as strings or numbers, optional fields
nullable, and `additionalProperties: false` wherever an object lists its properties (a misspelt or
misplaced field is an error, as kubectl's validation has it). One file per kind:
`<kind>_<group>_<version>.json` (group = the version for the core group), the layout of `LOCATION`.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import yaml

KUBERNETES_VERSION = "v1.34.4"
PROMETHEUS_OPERATOR_VERSION = "v0.85.0"
CRDS = ("monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml")
# kubeconform's -schema-location template (its variables: lower-case kind, group, version).
LOCATION = "{{ .ResourceKind }}_{{ .Group }}_{{ .ResourceAPIVersion }}.json"
INT_OR_STRING = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
QUANTITY = {"oneOf": [{"type": "string"}, {"type": "number"}]}
Schema = dict[str, Any]


def cache_root() -> Path:
    base = os.environ.get("RAGMESH_KUBE_SCHEMAS") or Path.home() / ".cache" / "ragmesh" / "kube-schemas"
    return Path(base) / f"k8s-{KUBERNETES_VERSION}_prometheus-operator-{PROMETHEUS_OPERATOR_VERSION}"


def module_zip(module: str, version: str) -> Path:
    """The module's zip in Go's module cache, downloaded from the module proxy when it is not there yet."""
    done = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        cwd=Path.home(),  # outside any go.mod, so no module of this project is consulted
    )
    info = json.loads(done.stdout or "{}")
    if done.returncode != 0 or "Zip" not in info:
        raise SystemExit(f"go mod download {module}@{version} failed: {info.get('Error') or done.stderr.strip()}")
    return Path(info["Zip"])


def read_member(archive: Path, suffix: str) -> bytes:
    with zipfile.ZipFile(archive) as zipped:
        (name,) = [n for n in zipped.namelist() if n.endswith(suffix)]
        return zipped.read(name)


def allow_null(schema: Schema) -> Schema:
    """An optional field may be null (Helm renders an empty value as null; the API server drops it)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = [kind, "null"]
    return schema


def strict(schema: Schema, required: bool = True) -> Schema:
    """additionalProperties: false on every object that lists properties; optional fields nullable."""
    if "properties" in schema and "additionalProperties" not in schema:
        if not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
    if schema.get("x-kubernetes-int-or-string"):
        schema.pop("type", None)
        schema.update(copy.deepcopy(INT_OR_STRING))
    needed = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        strict(prop, name in needed)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            strict(schema[key])
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, ()):
            strict(sub)
    if not required:
        allow_null(schema)
    return schema


def expand(schema: Any, definitions: dict[str, Schema], stack: tuple[str, ...] = ()) -> Any:
    """`schema` with every `$ref` replaced by its definition. A definition met again inside itself (a CRD's
    validation schema, arbitrary JSON) becomes {}: anything is accepted there."""
    if isinstance(schema, list):
        return [expand(item, definitions, stack) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str):  # (JSONSchemaProps has a property named $ref)
        name = ref.rpartition("/")[2]
        if name.endswith("util.intstr.IntOrString"):
            return copy.deepcopy(INT_OR_STRING)
        if name.endswith("api.resource.Quantity"):
            return copy.deepcopy(QUANTITY)
        if name in stack:
            return {}
        return expand(definitions[name], definitions, (*stack, name))
    if schema.get("format") == "int-or-string":
        return copy.deepcopy(INT_OR_STRING)
    # Formats (date-time, byte, int32...) are not checked, as kubectl does not either.
    return {
        key: expand(value, definitions, stack)
        for key, value in schema.items()
        if not (key == "format" and isinstance(value, str))
    }


def file_name(group: str, version: str, kind: str) -> str:
    return f"{kind.lower()}_{group or version}_{version}.json"


def kubernetes_schemas(swagger: dict) -> dict[str, Schema]:
    definitions = swagger["definitions"]
    out = {}
    for name, definition in definitions.items():
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            schema = strict(expand(definition, definitions, (name,)))
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
            schema["properties"]["kind"] = {"type": "string", "enum": [gvk["kind"]]}
            out[file_name(gvk["group"], gvk["version"], gvk["kind"])] = schema
    return out


def crd_schemas(crd: dict) -> dict[str, Schema]:
    spec = crd["spec"]
    out = {}
    for version in spec["versions"]:
        schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
        props = schema.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "enum": [f"{spec['group']}/{version['name']}"]}
        props["kind"] = {"type": "string", "enum": [spec["names"]["kind"]]}
        props["metadata"] = {"type": "object"}
        out[file_name(spec["group"], version["name"], spec["names"]["kind"])] = strict(schema)
    return out


def ensure(root: Path | None = None) -> Path:
    """The schema folder, made once (~1 min with the downloads; the Go module cache keeps the zips)."""
    root = root or cache_root()
    stamp = root / ".complete"
    if stamp.exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    print(
        f"kube-schemas: making {root} (k8s.io/kubernetes {KUBERNETES_VERSION}, prometheus-operator "
        f"{PROMETHEUS_OPERATOR_VERSION}, from the Go module proxy)",
        file=sys.stderr,
    )
    swagger = json.loads(
        read_member(module_zip("k8s.io/kubernetes", KUBERNETES_VERSION), "/api/openapi-spec/swagger.json")
    )
    schemas = kubernetes_schemas(swagger)
    operator = module_zip("github.com/prometheus-operator/prometheus-operator", PROMETHEUS_OPERATOR_VERSION)
    for crd_file in CRDS:
        schemas.update(
            crd_schemas(yaml.safe_load(read_member(operator, f"/example/prometheus-operator-crd/{crd_file}")))
        )
    for name, schema in schemas.items():
        (root / name).write_text(json.dumps(schema, separators=(",", ":")))
    stamp.write_text(f"{len(schemas)} schemas\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="schema folder (default: the versioned cache folder)")
    args = parser.parse_args()
    print(ensure(args.out) / LOCATION)


if __name__ == "__main__":
    main()
