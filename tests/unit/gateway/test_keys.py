"""API keys at rest and the gateway's start-up rules for authentication."""

import os
import sqlite3
import stat
import time
from datetime import UTC, datetime, timedelta

import pytest

from services.gateway.server import GatewayConfig, auth_interceptors, is_loopback
from shared.errors import InvalidArgument
from shared.keys import KEYS_FILE, LOCAL_KEYS_DIR, KeyRejected, KeyStore, local_key


def test_only_a_salted_hash_is_stored_and_the_file_is_private(tmp_path):
    store = KeyStore(tmp_path / KEYS_FILE)
    key, token = store.create("acme", ["hr", "finance"], "reader")
    secret = token.split("_", 2)[2]
    raw = (tmp_path / KEYS_FILE).read_bytes()
    assert secret.encode() not in raw and token.encode() not in raw
    assert stat.S_IMODE(os.stat(tmp_path / KEYS_FILE).st_mode) == 0o600
    assert store.authenticate(token) == key
    _, twin = store.create("acme", ["hr", "finance"], "reader")
    assert twin != token  # salted and random: no two keys alike


@pytest.mark.parametrize(
    "mangle, reason",
    [
        (lambda t: t[:-1] + ("x" if t[-1] != "x" else "y"), "unknown"),
        (lambda t: "rmk_ffffffffffffffff_" + t.split("_", 2)[2], "unknown"),
        (lambda t: t.replace("rmk_", "xyz_"), "malformed"),
        (lambda t: "", "malformed"),
    ],
)
def test_wrong_keys_are_rejected(tmp_path, mangle, reason):
    store = KeyStore(tmp_path / KEYS_FILE)
    _, token = store.create("acme", [], "reader")
    store.authenticate(token)  # a remembered secret must not let a wrong one through
    with pytest.raises(KeyRejected) as err:
        store.authenticate(mangle(token))
    assert err.value.reason == reason


def test_revoked_and_expired_keys_are_rejected(tmp_path):
    store = KeyStore(tmp_path / KEYS_FILE)
    key, token = store.create("acme", [], "writer")
    store.authenticate(token)
    assert store.revoke(key.key_id) and not store.revoke(key.key_id)
    with pytest.raises(KeyRejected, match="revoked"):
        store.authenticate(token)
    soon, old = store.create("acme", [], "writer", expires_at="2099-02-03")
    with sqlite3.connect(tmp_path / KEYS_FILE) as conn:  # time passes: its expiry is behind us now
        conn.execute("UPDATE api_keys SET expires_at = '2001-02-03T00:00:00Z' WHERE key_id = ?", (soon.key_id,))
    with pytest.raises(KeyRejected, match="expired"):
        store.authenticate(old)


def test_a_key_cannot_be_made_already_expired(tmp_path):
    """`--expires-at 2020-01-01` (or `--expires-in-days -5`) made a key that no call could ever use."""
    with pytest.raises(ValueError, match="is not in the future"):
        KeyStore(tmp_path / KEYS_FILE).create("acme", [], "reader", expires_at="2001-02-03")


def test_keys_name_a_valid_tenant_role_and_scopes(tmp_path):
    store = KeyStore(tmp_path / KEYS_FILE)
    with pytest.raises(InvalidArgument):
        store.create("a" * 65, [], "reader")
    with pytest.raises(InvalidArgument):
        store.create("../etc", [], "reader")
    with pytest.raises(ValueError, match="role"):
        store.create("acme", [], "root")
    with pytest.raises(ValueError, match="scope"):
        store.create("acme", ["[hr"], "reader")


def test_local_key_is_a_private_file_reused_until_revoked(tmp_path):
    token = local_key(tmp_path, "demo")
    path = tmp_path / LOCAL_KEYS_DIR / "demo"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert local_key(tmp_path, "demo") == token
    store = KeyStore(tmp_path / KEYS_FILE)
    key = store.authenticate(token)
    assert (key.tenant_id, key.role, key.holds("anything")) == ("demo", "writer", True)
    store.revoke(key.key_id)
    assert local_key(tmp_path, "demo") != token


def test_auth_off_is_refused_off_loopback(tmp_path):
    assert auth_interceptors(GatewayConfig(host="127.0.0.1", auth_disabled=True)) == []
    for host in ("0.0.0.0", "192.168.1.4", "::", "example.com"):
        with pytest.raises(SystemExit, match="authentication off"):
            auth_interceptors(GatewayConfig(host=host, auth_disabled=True))
    assert len(auth_interceptors(GatewayConfig(host="0.0.0.0", data_dir=str(tmp_path)))) == 1
    assert is_loopback("::1") and is_loopback("localhost") and not is_loopback("")


def test_guessing_at_a_known_key_id_is_throttled_but_the_right_secret_still_works(tmp_path):
    store = KeyStore(tmp_path / KEYS_FILE, clock=lambda: 1000.0)  # no refill while slow scrypt checks run
    key, token = store.create("acme", [], "reader")
    store.authenticate(token)  # remembered: later checks of the right secret cost no scrypt
    reasons = []
    for i in range(15):
        with pytest.raises(KeyRejected) as err:
            store.authenticate(f"rmk_{key.key_id}_guess{i}")
        reasons.append(err.value.reason)
    # A burst of 10 secret checks, one spent on the right secret above: 9 guesses are checked, the rest refused.
    assert reasons == ["unknown"] * 9 + ["throttled"] * 6
    assert store.authenticate(token) == key


def test_a_revocation_from_another_process_is_seen_by_the_next_call(tmp_path):
    """The gateway keeps key rows between calls; `ragmesh keys revoke` writes through a store of its own."""
    gateway = KeyStore(tmp_path / KEYS_FILE)
    key, token = gateway.create("acme", [], "writer")
    for _ in range(3):
        assert gateway.authenticate(token) == key
    assert KeyStore(tmp_path / KEYS_FILE).revoke(key.key_id)
    with pytest.raises(KeyRejected, match="revoked"):
        gateway.authenticate(token)


def test_a_key_created_elsewhere_after_a_miss_is_found(tmp_path):
    gateway = KeyStore(tmp_path / KEYS_FILE)
    gateway.create("acme", [], "reader")  # the file exists and the gateway has read from it
    cli = KeyStore(tmp_path / KEYS_FILE)
    _, token = cli.create("acme", [], "reader")
    key_id = token.split("_")[1]
    cli.revoke(key_id)  # a row the gateway has not read yet is read fresh, revoked state included
    with pytest.raises(KeyRejected, match="revoked"):
        gateway.authenticate(token)
    _, fresh = cli.create("acme", [], "reader")
    assert gateway.authenticate(fresh).key_id == fresh.split("_")[1]


def test_a_replaced_key_file_is_read_again(tmp_path):
    gateway = KeyStore(tmp_path / KEYS_FILE)
    _, token = gateway.create("acme", [], "writer")
    gateway.authenticate(token)
    (tmp_path / KEYS_FILE).unlink()  # e.g. restored from a backup without this key
    KeyStore(tmp_path / KEYS_FILE).create("acme", [], "writer")
    with pytest.raises(KeyRejected, match="unknown"):
        gateway.authenticate(token)


def test_expiry_is_checked_on_every_call(tmp_path):
    gateway = KeyStore(tmp_path / KEYS_FILE)
    soon = (datetime.now(UTC) + timedelta(seconds=1.5)).isoformat(timespec="seconds")
    _, token = gateway.create("acme", [], "writer", expires_at=soon)
    gateway.authenticate(token)
    time.sleep(2.1)
    with pytest.raises(KeyRejected, match="expired"):
        gateway.authenticate(token)
