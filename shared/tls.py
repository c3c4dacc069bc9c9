"""Mutual TLS between the gateway and the stages behind it.

With RAGMESH_TLS_DIR set, every stage but the gateway serves only TLS and requires a client
certificate signed by the mesh's CA, and stage clients present theirs: a process without the mesh's
certificate cannot call a stage, so the tenant and scopes a stage receives are the gateway's.
`ragmesh certs --out DIR` makes the CA and one certificate per stage (plus `launcher`, for health
checks) with the `cryptography` package; keys are written mode 0600.
"""

import datetime
import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path

import grpc

from shared import config
from shared.config import STAGES

TLS_ENV = "RAGMESH_TLS_DIR"
CA_FILE = "ca.pem"
# The gateway serves its callers on its own port (API keys); mTLS is behind it.
MTLS_STAGES = tuple(s for s in STAGES if s != "gateway")
NAMES = (*STAGES, "launcher")


def tls_dir(env: Mapping[str, str] | None = None) -> str:
    return config.mesh(env).tls_dir


def _read(folder: str, name: str) -> bytes:
    return (Path(folder) / name).read_bytes()


def server_credentials(folder: str, name: str) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials(
        [(_read(folder, f"{name}-key.pem"), _read(folder, f"{name}.pem"))],
        root_certificates=_read(folder, CA_FILE),
        require_client_auth=True,
    )


def channel_credentials(folder: str, name: str) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=_read(folder, CA_FILE),
        private_key=_read(folder, f"{name}-key.pem"),
        certificate_chain=_read(folder, f"{name}.pem"),
    )


def stage_channel(address: str, stage: str, caller: str, folder: str | None = None, options=None) -> grpc.Channel:
    """A channel to `stage` as `caller`: mTLS when the mesh has a TLS folder and the stage is behind the gateway."""
    folder = tls_dir() if folder is None else folder
    if folder and stage in MTLS_STAGES:
        return grpc.secure_channel(address, channel_credentials(folder, caller), options=options)
    return grpc.insecure_channel(address, options=options)


def make_certs(out: str | os.PathLike, hosts: list[str] | None = None, days: int = 365) -> Path:
    """A CA and a certificate per stage name, valid for `hosts` (default localhost and 127.0.0.1)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    valid = {
        "not_valid_before": now - datetime.timedelta(minutes=5),
        "not_valid_after": now + datetime.timedelta(days=days),
    }

    def name(common: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ragmesh mesh"),
                x509.NameAttribute(NameOID.COMMON_NAME, common),
            ]
        )

    def write_key(path: Path, key) -> None:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(
                key.private_bytes(
                    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                )
            )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("ragmesh mesh CA"))
        .issuer_name(name("ragmesh mesh CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid["not_valid_before"])
        .not_valid_after(valid["not_valid_after"])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    (folder / CA_FILE).write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    write_key(folder / "ca-key.pem", ca_key)

    alt_names: list[x509.GeneralName] = []
    for host in hosts or ["localhost", "127.0.0.1"]:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt_names.append(x509.DNSName(host))
    for stage in NAMES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(stage))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid["not_valid_before"])
            .not_valid_after(valid["not_valid_after"])
            .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        (folder / f"{stage}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_key(folder / f"{stage}-key.pem", key)
    return folder
