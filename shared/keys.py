"""API keys: each bound to one tenant, a set of access scopes and a role.

Only a salted scrypt hash of each secret is stored (SQLite, `keys.sqlite` in the data dir, mode 0600),
with an id, a creation time, an optional expiry and a revocation time. A key reads `rmk_<id>_<secret>`:
the id finds the row, the secret is checked against its hash in constant time.
"""

import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from shared.model import normalize_time, utc_now
from shared.names import ALL_SCOPES, SCOPE_NAME, check_tenant_id
from shared.ratelimit import TokenBuckets
from shared.sqlite import unreadable_store

ROLES = ("reader", "writer", "admin")
KEYS_FILE = "keys.sqlite"
# Local keys (`ragmesh up`, `make demo`, test and evaluation meshes): <data dir>/api-keys/<tenant>.
LOCAL_KEYS_DIR = "api-keys"
_PREFIX = "rmk"
# ~16 MiB and a few tens of ms per check; a verified secret is remembered (as SHA-256) for the process.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
# Slow hashes a key id may cost per second once its remembered secret does not match: guessing at a
# known id cannot turn scrypt into a CPU flood (the right secret is remembered after its first check).
_VERIFY_RATE, _VERIFY_BURST = 2.0, 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
  key_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  role TEXT NOT NULL,
  salt BLOB NOT NULL,
  hash BLOB NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL DEFAULT '',
  revoked_at TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT ''
);
"""


class KeyRejected(Exception):
    """Why a presented key does not authenticate; `reason` is a short metric label."""

    def __init__(self, reason: str, message: str, key_id: str = ""):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.key_id = key_id


@dataclasses.dataclass(frozen=True)
class ApiKey:
    key_id: str
    tenant_id: str
    scopes: tuple[str, ...]
    role: str
    created_at: str
    expires_at: str = ""
    revoked_at: str = ""
    label: str = ""

    def holds(self, scope: str) -> bool:
        return scope == "public" or ALL_SCOPES in self.scopes or scope in self.scopes

    def status(self, now: str | None = None) -> str:
        if self.revoked_at:
            return "revoked"
        if self.expires_at and self.expires_at <= (now or utc_now()):
            return "expired"
        return "active"


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, **_SCRYPT)


def _check_scopes(scopes) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(s.strip() for s in scopes if s.strip()))
    bad = [s for s in out if s != ALL_SCOPES and not SCOPE_NAME.fullmatch(s)]
    if bad:
        raise ValueError(f"not scope names: {', '.join(map(repr, bad))}")
    return out


class KeyStore:
    def __init__(self, path: str | os.PathLike, clock: Callable[[], float] = time.monotonic):
        self.path = Path(path)
        self._verified: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._schema_ready = False
        # `clock` paces failed secret checks; a test passes a still one so scrypt's speed cannot refill the budget.
        self._verify_budget = TokenBuckets(_VERIFY_RATE, _VERIFY_BURST, clock)
        # Per thread: a kept-open connection for the per-call lookups and the rows it read (see _cached_row).
        self._reader = threading.local()

    @contextlib.contextmanager
    def _db(self):
        """A connection for one operation: committed and closed when it ends."""
        conn = self._connect()
        try:
            with conn:
                yield conn
        finally:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))  # never world-readable, even briefly
            self._schema_ready = False
        conn = sqlite3.connect(self.path, timeout=10)
        conn.row_factory = sqlite3.Row
        if not self._schema_ready:  # once per process: every call reads the file, never a stale copy
            try:
                conn.executescript(_SCHEMA)
            except sqlite3.DatabaseError as err:
                conn.close()
                raise unreadable_store(str(self.path), err) from err
            self._schema_ready = True
        return conn

    def create(self, tenant_id: str, scopes, role: str, expires_at: str = "", label: str = "") -> tuple[ApiKey, str]:
        """The new key and its secret token, which exists nowhere else: show it once."""
        check_tenant_id(tenant_id)
        if role not in ROLES:
            raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
        created_at = utc_now()
        expires = normalize_time(expires_at, "expires_at")
        if expires and expires <= created_at:  # a key that could never be used: a typo, not an intent
            raise ValueError(f"expires_at {expires_at!r} is not in the future ({expires} <= {created_at})")
        key = ApiKey(
            key_id=secrets.token_hex(8),
            tenant_id=tenant_id,
            scopes=_check_scopes(scopes),
            role=role,
            created_at=created_at,
            expires_at=expires,
            label=label,
        )
        secret = secrets.token_urlsafe(32)
        salt = os.urandom(16)
        with self._db() as conn:
            conn.execute(
                "INSERT INTO api_keys (key_id, tenant_id, scopes, role, salt, hash, created_at, expires_at, "
                "label) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.key_id,
                    tenant_id,
                    json.dumps(list(key.scopes)),
                    role,
                    salt,
                    _hash(secret, salt),
                    key.created_at,
                    key.expires_at,
                    label,
                ),
            )
        return key, f"{_PREFIX}_{key.key_id}_{secret}"

    def list(self) -> list[ApiKey]:
        with self._db() as conn:
            return [_key(row) for row in conn.execute("SELECT * FROM api_keys ORDER BY created_at, key_id")]

    def get(self, key_id: str) -> ApiKey | None:
        row = self._row(key_id)
        return _key(row) if row else None

    def revoke(self, key_id: str) -> bool:
        with self._db() as conn:
            changed = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at = ''", (utc_now(), key_id)
            ).rowcount
        return changed > 0

    def _row(self, key_id: str):
        with self._db() as conn:
            return conn.execute("SELECT * FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()

    def _cached_row(self, key_id: str):
        """The key's row as the file holds it now, without opening the file per call: rows are kept per thread
        until any other connection (a revoke or create, from this process or `ragmesh keys` in another) commits,
        which SQLite's data_version shows, or the file is replaced (another inode)."""
        local = self._reader
        try:
            identity = os.stat(self.path).st_ino
        except FileNotFoundError:
            return self._row(key_id)  # creates the file, as the first call always did
        conn = getattr(local, "conn", None)
        if conn is None or local.identity != identity:
            if conn is not None:
                conn.close()
            conn = local.conn = self._connect()
            local.identity, local.version, local.rows = identity, None, {}
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version != local.version:
            local.version, local.rows = version, {}
        row = local.rows.get(key_id)
        if row is None:
            row = conn.execute("SELECT * FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
            if row is not None:  # unknown ids are not kept: guessed ids cannot grow the cache
                local.rows[key_id] = row
        return row

    def authenticate(self, token: str) -> ApiKey:
        """The active key behind `token`, or KeyRejected. Revocation and expiry are checked on every call
        (a revocation committed anywhere is seen by the next call)."""
        prefix, _, rest = token.partition("_")
        key_id, _, secret = rest.partition("_")
        if prefix != _PREFIX or not key_id or not secret:
            raise KeyRejected("malformed", "malformed API key (expected rmk_<id>_<secret>)")
        row = self._cached_row(key_id)
        if row is None:
            raise KeyRejected("unknown", "unknown API key", key_id)
        digest = hashlib.sha256(secret.encode()).digest()
        with self._lock:
            remembered = self._verified.get(key_id)
        if remembered is None or not hmac.compare_digest(remembered, digest):
            wait = self._verify_budget.take(key_id)
            if wait > 0:
                raise KeyRejected(
                    "throttled", f"too many failed checks of API key {key_id}; retry in {wait:.1f}s", key_id
                )
            if not hmac.compare_digest(_hash(secret, row["salt"]), row["hash"]):
                raise KeyRejected("unknown", "unknown API key", key_id)  # same answer as an unknown id
            with self._lock:
                self._verified[key_id] = digest
        key = _key(row)
        status = key.status()
        if status == "revoked":
            raise KeyRejected("revoked", f"API key {key_id} was revoked at {key.revoked_at}", key_id)
        if status == "expired":
            raise KeyRejected("expired", f"API key {key_id} expired at {key.expires_at}", key_id)
        return key


def _key(row) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        tenant_id=row["tenant_id"],
        scopes=tuple(json.loads(row["scopes"])),
        role=row["role"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        label=row["label"],
    )


def local_key(data_dir: str | os.PathLike, tenant_id: str) -> str:
    """A local writer key for `tenant_id` holding every scope: reused from <data dir>/api-keys/<tenant>
    (mode 0600) while it is active there, else created. For meshes a person or a test runs on loopback."""
    check_tenant_id(tenant_id)
    folder = Path(data_dir) / LOCAL_KEYS_DIR
    path = folder / tenant_id
    store = KeyStore(Path(data_dir) / KEYS_FILE)
    if path.exists():
        token = path.read_text().strip()
        try:
            store.authenticate(token)
            return token
        except KeyRejected:
            pass  # revoked, expired or from another store: replaced below
    _, token = store.create(tenant_id, [ALL_SCOPES], "writer", label="local")
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    os.chmod(path, 0o600)  # an older file keeps its mode through O_CREAT
    return token
