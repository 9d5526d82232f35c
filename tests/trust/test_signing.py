"""Ed25519 keys and signatures over canonical JSON (runner.domain.signing), key files and the
fleet registry (runner.domain.fleet)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.domain.fleet import (
    Fleet,
    FleetError,
    RegistryView,
    load_worker_key,
    organiser_key,
    read_worker_key,
)
from runner.domain.signing import (
    KeyFileError,
    SignatureError,
    SigningKey,
    artifact_signature,
    check_artifact,
    keyring,
    sign,
    verify,
    verify_by,
)


def test_sign_then_verify_round_trips_and_ignores_key_order() -> None:
    key = SigningKey.generate()
    payload = {"b": [1, 2, {"z": None}], "a": "é", "n": 1.5}
    signed = sign(payload, key)
    assert verify(signed, key.public) == payload
    reordered = dict(reversed(list(signed.items())))
    assert verify(reordered, key.public) == payload


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: d.pop("sig"),
        lambda d: d.__setitem__("a", "x"),
        lambda d: d.__setitem__("extra", 1),
        lambda d: d["b"].append(3),
        lambda d: d["sig"].__setitem__("sig", "0" * 128),
        lambda d: d.__setitem__("sig", "nonsense"),
    ],
)
def test_any_change_or_missing_signature_is_refused(tamper: object) -> None:
    key = SigningKey.generate()
    signed = sign({"a": "é", "b": [1, 2]}, key)
    assert callable(tamper)
    tamper(signed)
    with pytest.raises(SignatureError):
        verify(signed, key.public)


def test_another_key_is_refused_even_when_claiming_our_key_id() -> None:
    ours, theirs = SigningKey.generate(), SigningKey.generate()
    forged = sign({"kind": "result"}, theirs)
    with pytest.raises(SignatureError, match="another key"):
        verify(forged, ours.public)
    forged["sig"]["key"] = ours.key_id
    with pytest.raises(SignatureError, match="altered"):
        verify(forged, ours.public)


def test_verify_by_names_the_key_that_signed_among_several() -> None:
    a, b = SigningKey.generate(), SigningKey.generate()
    ring = keyring(a.public, b.public)
    assert verify_by(sign({"x": 1}, b), ring) == ({"x": 1}, b.key_id)
    assert a.hex() not in repr(a)


def test_artifact_signature_binds_bytes_to_digest() -> None:
    key = SigningKey.generate()
    sig = artifact_signature(key, "d" * 64, b"blob")
    check_artifact(key.public, "d" * 64, b"blob", sig.encode())
    for digest, blob, s in [("e" * 64, b"blob", sig), ("d" * 64, b"blob2", sig), ("d" * 64, b"blob", None)]:
        with pytest.raises(SignatureError):
            check_artifact(key.public, digest, blob, s)


def test_organiser_key_is_made_once_private(tmp_path: Path) -> None:
    first = organiser_key(tmp_path)
    assert (tmp_path / "organiser.key").stat().st_mode & 0o777 == 0o600
    assert organiser_key(tmp_path) == first
    os.chmod(tmp_path / "organiser.key", 0o640)
    with pytest.raises(KeyFileError, match="chmod 600"):
        organiser_key(tmp_path)


def test_enrol_writes_one_private_worker_key_file_and_registers_its_public_key(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    path = fleet.enrol("w1")
    assert path.stat().st_mode & 0o777 == 0o600
    wk = load_worker_key(path, environ={})
    assert wk.name == "w1" and wk.organisers == (organiser_key(tmp_path).public,)
    member = fleet.members()["w1"]
    assert member.public == wk.key.public and not member.revoked
    with pytest.raises(FleetError, match="already enrolled"):
        fleet.enrol("w1")
    with pytest.raises(FleetError, match="letters, digits"):
        fleet.enrol("w 2")
    with pytest.raises(FleetError, match=r"no worker 'nobody'"):
        fleet.revoke("nobody", "x")
    with pytest.raises(KeyFileError, match="tourney fleet add NAME"):
        load_worker_key(environ={})
    (tmp_path / "junk.key").write_text("{}")
    os.chmod(tmp_path / "junk.key", 0o600)
    with pytest.raises(KeyFileError, match=r"junk\.key: not a worker key file"):
        load_worker_key(tmp_path / "junk.key", environ={})


def test_registry_view_sees_a_revocation_when_the_file_changes(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.enrol("w1")
    fleet.enrol("w2")
    view = RegistryView(tmp_path, every_s=0.0)
    assert view.refresh(1.0) == [] and len(view.keyring()) == 2
    assert view.refresh(2.0) == []  # unchanged: not read again
    fleet.revoke("w2", "stolen")
    revoked = view.refresh(3.0)
    assert [(m.name, m.reason) for m in revoked] == [("w2", "stolen")]
    assert view.refresh(4.0) == [] and len(view.keyring()) == 2  # still named, never trusted


# -- signed_json / verify_json: one encoding per message (issue 13) ----------------------
@pytest.mark.parametrize(
    "payload",
    [{}, {"b": [1, 2, {"z": None}], "a": "é", "n": 1.5}, {"x": {"sig": {"key": "nested"}}}],
)
def test_signed_json_is_what_sign_makes_and_verifies_both_ways(payload: dict[str, object]) -> None:
    import json

    from runner.domain.signing import signed_json, verify_json

    key = SigningKey.generate()
    blob = signed_json(payload, key)
    assert json.loads(blob) == sign(payload, key)  # any reader sees the same signed message
    assert verify_json(blob, key.public) == payload  # the fast path
    assert verify_json(json.dumps(sign(payload, key)), key.public) == payload  # another sender's encoding
    with pytest.raises(SignatureError, match="another key"):
        verify_json(blob, SigningKey.generate().public)


def test_verify_json_refuses_altered_bytes_and_a_moved_signature() -> None:
    import json

    from runner.domain.signing import signed_json, verify_json

    key = SigningKey.generate()
    blob = signed_json({"a": 1, "worker": "w1"}, key)
    with pytest.raises(SignatureError, match="altered"):
        verify_json(blob.replace(b'"w1"', b'"w2"'), key.public)
    with pytest.raises(SignatureError, match="unsigned"):
        verify_json(json.dumps({"a": 1, "worker": "w1"}), key.public)
    # the signature of one message glued onto another's body
    other = signed_json({"a": 2, "worker": "w1"}, key)
    sig = blob[blob.index(b',"sig":') :]
    with pytest.raises(SignatureError, match="altered"):
        verify_json(other[: other.index(b',"sig":')] + sig, key.public)
    with pytest.raises(ValueError):
        verify_json(b"[1, 2]", key.public)


def test_a_worker_key_file_is_never_read_through_a_link(tmp_path: Path) -> None:
    """The one rule for files tourney reads (docs/sandbox.md, "What an entry hands in"): a link
    named as a key file could point at any file the organiser can read."""
    real = Fleet(tmp_path / "home").enrol("w1", out=tmp_path / "w1.key")
    link = tmp_path / "linked.key"
    link.symlink_to(real)
    with pytest.raises(KeyFileError, match=r"linked\.key: a symbolic link \(to .*w1\.key\); expected a reg"):
        read_worker_key(link)
    assert read_worker_key(real).name == "w1"
