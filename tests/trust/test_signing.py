"""Run keys and HMAC signatures over canonical JSON (runner.domain.signing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.domain.signing import (
    RunKey,
    RunKeyError,
    SignatureError,
    artifact_signature,
    check_artifact,
    load_run_key,
    run_key_for,
    sign,
    verify,
    write_key_file,
)


def test_sign_then_verify_round_trips_and_ignores_key_order() -> None:
    key = RunKey.generate()
    payload = {"b": [1, 2, {"z": None}], "a": "é", "n": 1.5}
    signed = sign(payload, key)
    assert verify(signed, key) == payload
    reordered = dict(reversed(list(signed.items())))
    assert verify(reordered, key) == payload


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: d.pop("sig"),
        lambda d: d.__setitem__("a", "x"),
        lambda d: d.__setitem__("extra", 1),
        lambda d: d["b"].append(3),
        lambda d: d["sig"].__setitem__("mac", "0" * 64),
        lambda d: d.__setitem__("sig", "nonsense"),
    ],
)
def test_any_change_or_missing_signature_is_refused(tamper: object) -> None:
    key = RunKey.generate()
    signed = sign({"a": "é", "b": [1, 2]}, key)
    assert callable(tamper)
    tamper(signed)
    with pytest.raises(SignatureError):
        verify(signed, key)


def test_another_key_is_refused_even_when_claiming_our_key_id() -> None:
    ours, theirs = RunKey.generate(), RunKey.generate()
    forged = sign({"kind": "result"}, theirs)
    with pytest.raises(SignatureError, match="another key"):
        verify(forged, ours)
    forged["sig"]["key"] = ours.key_id
    with pytest.raises(SignatureError, match="altered"):
        verify(forged, ours)


def test_artifact_signature_binds_bytes_to_digest() -> None:
    key = RunKey.generate()
    sig = artifact_signature(key, "d" * 64, b"blob")
    check_artifact(key, "d" * 64, b"blob", sig.encode())
    for digest, blob, s in [("e" * 64, b"blob", sig), ("d" * 64, b"blob2", sig), ("d" * 64, b"blob", None)]:
        with pytest.raises(SignatureError):
            check_artifact(key, digest, blob, s)


def test_key_files_must_be_private(tmp_path: Path) -> None:
    key = RunKey.generate()
    path = tmp_path / "run.key"
    write_key_file(path, key)
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_run_key(path, environ={}) == key
    os.chmod(path, 0o640)
    with pytest.raises(RunKeyError, match="chmod 600"):
        load_run_key(path, environ={})


def test_key_from_environment_and_none_at_all() -> None:
    key = RunKey.generate()
    assert load_run_key(environ={"TOURNEY_RUN_KEY": key.hex()}) == key
    with pytest.raises(RunKeyError, match="no run key"):
        load_run_key(environ={})
    with pytest.raises(RunKeyError):
        load_run_key(environ={"TOURNEY_RUN_KEY": "not hex"})
    assert key.hex() not in repr(key)


def test_embedded_default_generates_one_key_per_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOURNEY_RUN_KEY", raising=False)
    monkeypatch.delenv("TOURNEY_RUN_KEY_FILE", raising=False)
    first = run_key_for(tmp_path)
    assert (tmp_path / "run.key").stat().st_mode & 0o777 == 0o600
    assert run_key_for(tmp_path) == first
    assert run_key_for(tmp_path / "other") != first


# -- signed_json / verify_json: one encoding per message (issue 13) ----------------------
@pytest.mark.parametrize(
    "payload",
    [{}, {"b": [1, 2, {"z": None}], "a": "é", "n": 1.5}, {"x": {"sig": {"key": "nested"}}}],
)
def test_signed_json_is_what_sign_makes_and_verifies_both_ways(payload: dict[str, object]) -> None:
    import json

    from runner.domain.signing import signed_json, verify_json

    key = RunKey.generate()
    blob = signed_json(payload, key)
    assert json.loads(blob) == sign(payload, key)  # any reader sees the same signed message
    assert verify_json(blob, key) == payload  # the fast path
    assert verify_json(json.dumps(sign(payload, key)), key) == payload  # another sender's encoding
    with pytest.raises(SignatureError, match="another key"):
        verify_json(blob, RunKey.generate())


def test_verify_json_refuses_altered_bytes_and_a_moved_signature() -> None:
    import json

    from runner.domain.signing import signed_json, verify_json

    key = RunKey.generate()
    blob = signed_json({"a": 1, "worker": "w1"}, key)
    with pytest.raises(SignatureError, match="altered"):
        verify_json(blob.replace(b'"w1"', b'"w2"'), key)
    with pytest.raises(SignatureError, match="unsigned"):
        verify_json(json.dumps({"a": 1, "worker": "w1"}), key)
    # the signature of one message glued onto another's body
    other = signed_json({"a": 2, "worker": "w1"}, key)
    sig = blob[blob.index(b',"sig":') :]
    with pytest.raises(SignatureError, match="altered"):
        verify_json(other[: other.index(b',"sig":')] + sig, key)
    with pytest.raises(ValueError):
        verify_json(b"[1, 2]", key)


def test_a_key_file_is_never_read_through_a_link(tmp_path: Path) -> None:
    """The one rule for files tourney reads (issue 25 item 1): a link named as a key file
    could point at any file the organiser can read; its mode is checked on the file read."""
    real = tmp_path / "real.key"
    write_key_file(real, RunKey.generate())
    link = tmp_path / "run.key"
    link.symlink_to(real)
    with pytest.raises(RunKeyError, match=r"run\.key: a symbolic link \(to .*real\.key\); expected a reg"):
        load_run_key(link)
