"""``redact``: the secrets a process holds, and any broker URL's password, out of entry text."""

from __future__ import annotations

import base64

from runner.domain.match_values import GameRecord, MatchResult, Verdict, VerdictKind
from runner.domain.redaction import (
    REDACTED,
    redact,
    redacted_result,
    register_broker_url,
    register_key_material,
)
from runner.domain.signing import SigningKey


def test_a_private_key_is_redacted_in_every_form() -> None:
    key = SigningKey.generate()
    register_key_material(key.secret)
    forms = [
        key.hex(),
        key.hex().upper(),
        base64.b64encode(key.secret).decode(),
        base64.urlsafe_b64encode(key.secret).decode().rstrip("="),
        key.secret.decode("latin-1"),
    ]
    for form in forms:
        assert redact(f"stolen: {form}!") == f"stolen: {REDACTED}!"


def test_broker_passwords_are_redacted_whoever_owns_them() -> None:
    register_broker_url("redis://:s%2Fcret-pass-1@127.0.0.1:6379/0")
    assert redact("pw=s/cret-pass-1 and s%2Fcret-pass-1") == f"pw={REDACTED} and {REDACTED}"
    other = "TOURNEY_BROKER_URL=rediss://user:0ther-run-pw@10.0.0.2:6380/0?ssl_cert_reqs=required"
    assert (
        redact(other) == f"TOURNEY_BROKER_URL=rediss://user:{REDACTED}@10.0.0.2:6380/0?ssl_cert_reqs=required"
    )
    assert redact("TOURNEY_RUN_KEY=" + "ab" * 32) == f"TOURNEY_RUN_KEY={REDACTED}"
    # a worker key file printed whole (another worker's: this process never held it)
    assert redact('"worker_key": "' + "cd" * 32 + '"') == f'"worker_key": "{REDACTED}"'


def test_ordinary_text_is_left_alone() -> None:
    register_broker_url("redis://:abc@h:1/0")  # too short to be taken for a secret: 'abc' stays
    for text in ("depth 7 score 12 abc", "redis://localhost:6379/0", "", "a\x1b[2J b"):
        assert redact(text) == text


def test_a_result_is_redacted_in_details_stderr_and_build_logs() -> None:
    register_broker_url("redis://:result-secret-42@h:1/0")
    game = GameRecord(["a", "b"], None, {"a": 0, "b": 0},
                      Verdict(VerdictKind.CRASH, "a", "exit 1: result-secret-42"), [],
                      stderr={"a": ["pw result-secret-42"]})  # fmt: skip
    result = redacted_result(MatchResult("m", [game], build_logs={"b": "log result-secret-42"}))
    assert "result-secret-42" not in repr(result)
    assert result.games[0].verdict.detail == f"exit 1: {REDACTED}"
    assert result.games[0].stderr == {"a": [f"pw {REDACTED}"]}
