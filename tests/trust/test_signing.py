"""Ed25519 keys and signatures over the codec's bytes (runner.domain.signing), key files and the
fleet registry (runner.domain.fleet)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
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
    open_signed,
    sign_bytes,
)


def test_signed_bytes_open_to_exactly_those_bytes_and_name_their_key() -> None:
    a, b = SigningKey.generate(), SigningKey.generate()
    body = '{"a":"é","b":[1,2,{"z":null}],"n":1.5}'.encode()
    blob = sign_bytes(body, b)
    assert json.loads(blob)["sig"]["key"] == b.key_id  # still one JSON object
    assert open_signed(blob, keyring(a.public, b.public)) == (body, b.key_id)
    assert open_signed(blob.decode(), b.public) == (body, b.key_id)  # as a Celery argument comes
    assert open_signed(sign_bytes(b"{}", a), a.public) == (b"{}", a.key_id)
    assert a.hex() not in repr(a)


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda b: b[: b.index(b',"sig":')] + b"}", "unsigned"),
        (lambda b: b.replace(b'"w1"', b'"w2"'), "altered"),
        (lambda b: b.replace(b'"a":1', b'"a":1,"extra":1'), "altered"),
        (lambda b: b.replace(b'"sig":"', b'"sig":"00', 1)[:-6] + b'"}}', "malformed"),
        (lambda b: b[:-2] + b',"x":1}}', "malformed"),
        (lambda b: b[:-1] + b" ", "malformed"),
    ],
    ids=["unsigned", "a-value", "a-member-added", "short-signature", "signature-not-last", "trailing"],
)
def test_any_change_or_missing_signature_is_refused(tamper: Callable[[bytes], bytes], reason: str) -> None:
    key = SigningKey.generate()
    blob = sign_bytes(b'{"a":1,"worker":"w1"}', key)
    with pytest.raises(SignatureError, match=reason):
        open_signed(tamper(blob), key.public)


def test_another_key_is_refused_even_when_claiming_our_key_id() -> None:
    ours, theirs = SigningKey.generate(), SigningKey.generate()
    forged = sign_bytes(b'{"kind":"result"}', theirs)
    with pytest.raises(SignatureError, match="another key"):
        open_signed(forged, ours.public)
    with pytest.raises(SignatureError, match="altered"):
        open_signed(forged.replace(theirs.key_id.encode(), ours.key_id.encode()), ours.public)
    # the signature of one message glued onto another's body
    other = sign_bytes(b'{"a":2}', ours)
    glued = b'{"a":1' + other[other.index(b',"sig":') :]
    with pytest.raises(SignatureError, match="altered"):
        open_signed(glued, ours.public)


def test_only_a_json_object_is_signed() -> None:
    with pytest.raises(ValueError, match="JSON object"):
        sign_bytes(b"[1, 2]", SigningKey.generate())


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


def test_a_worker_key_file_is_never_read_through_a_link(tmp_path: Path) -> None:
    """The one rule for files tourney reads (docs/sandbox.md, "What an entry hands in"): a link
    named as a key file could point at any file the organiser can read."""
    real = Fleet(tmp_path / "home").enrol("w1", out=tmp_path / "w1.key")
    link = tmp_path / "linked.key"
    link.symlink_to(real)
    with pytest.raises(KeyFileError, match=r"linked\.key: a symbolic link \(to .*w1\.key\); expected a reg"):
        read_worker_key(link)
    assert read_worker_key(real).name == "w1"
