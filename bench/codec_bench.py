"""Encode + decode of a match's spec and result: this tree's codec against the candidates.

One spec (2 entries, 4 games, a boxing board) and one result (4 games of 128 moves each, the
size a boxing match returns) are encoded to JSON bytes and decoded back, per call:

* ``tree``: what this tree does (``runner.domain.wire``'s msgspec codec; on a tree from
  before issue 27, the hand-written ``to_dict``/``from_dict`` pairs of
  ``runner.domain.contracts`` with ``json``, sorted keys);
* ``msgspec``: ``msgspec.json`` over the same dataclasses, keys sorted;
* ``pydantic``: pydantic's ``TypeAdapter`` (``dump_json``/``validate_json``) over them.

The candidates run interleaved (tree, msgspec, pydantic, tree, ...) in ``--rounds`` rounds;
printed: median microseconds per call and the median of the per-round ratios to ``tree``. Last,
what the coordinator does with every result a worker sends: open the signed ``result`` note
(the signature checked over its bytes, then decoded).
Another tree (the parent commit, say) is measured with ``bench/run_tree.py``::

    .venv/bin/python -m bench.codec_bench
    git archive BASE | tar -x -C /tmp/base && cp bench/codec_bench.py /tmp/base/bench/
    .venv/bin/python bench/run_tree.py /tmp/base bench.codec_bench
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import msgspec
from pydantic import TypeAdapter

from runner.domain.signing import SigningKey

#: a tree from before issue 27 has ``runner.domain.contracts`` and its hand-written pairs instead
BEFORE_THE_CODEC = importlib.util.find_spec("runner.domain.wire") is None
values: Any = importlib.import_module(
    "runner.domain.contracts" if BEFORE_THE_CODEC else "runner.domain.match_values"
)
signing: Any = importlib.import_module("runner.domain.signing")


def _tree(value: Any, kind: type[Any]) -> Callable[[], Any]:
    """Encode + decode as the tree under test does it."""
    if BEFORE_THE_CODEC:

        def once() -> Any:
            raw = json.dumps(value.to_dict(), sort_keys=True, separators=(",", ":")).encode()
            return kind.from_dict(json.loads(raw))  # type: ignore[attr-defined]

        return once
    wire: Any = importlib.import_module("runner.domain.wire")
    return lambda: wire.decode(wire.encode(value), kind)


def _opened_note(result: Any, key: SigningKey) -> Callable[[], Any]:
    """What the coordinator does with a worker's result note, as the tree under test does it."""
    if BEFORE_THE_CODEC:
        blob = signing.signed_json(values.Finished("m7", 1, result, "w1").to_dict(), key)
        return lambda: values.note_from_dict(signing.verify_json_by(blob, key.public)[0])
    wire: Any = importlib.import_module("runner.domain.wire")
    blob = signing.signed(wire.Finished("m7", 1, result, "w1"), key)
    return lambda: signing.open_note(blob, key.public)[0]


def samples() -> tuple[Any, Any]:
    ref = values.EntryRef(
        name="a", digest="cd" * 32, protocol="potm-arena", run=["./a.out", "{mark}"], build="cc -O2 main.c"
    )
    spec = values.MatchSpec.of(
        match_id="m7", game="boxing", board_id="b", board_text="--------\n" * 4,
        orders=[["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]], entries={"a": ref, "b": ref},
        limits=values.Limits(move_wall_s=0.5), seed=3, sandbox="none",
    )  # fmt: skip
    normal = values.Verdict(values.VerdictKind.NORMAL, None, "")
    moves = [values.MoveRecord("ab"[i % 2], f"{i % 8} {i % 4} h", 1.25 + i, 0.5 + i) for i in range(128)]
    games = [
        values.GameRecord(["a", "b"], "a", {"a": 10, "b": 6}, normal, list(moves), reason="board full")
        for _ in range(4)
    ]
    return spec, values.MatchResult("m7", games, worker="w1", digests={"a": "cd" * 32, "b": "ef" * 32})


def candidates(value: Any) -> dict[str, Callable[[], Any]]:
    kind = type(value)
    encoder, decoder = msgspec.json.Encoder(order="sorted"), msgspec.json.Decoder(kind)
    adapter = TypeAdapter(kind)
    out: dict[str, Callable[[], Any]] = {
        "tree": _tree(value, kind),
        "msgspec": lambda: decoder.decode(encoder.encode(value)),
        "pydantic": lambda: adapter.validate_json(adapter.dump_json(value)),
    }
    for name, once in out.items():
        if once() != value:
            raise SystemExit(f"{name}: {kind.__name__} does not round-trip")
    return out


def per_call_us(once: Callable[[], Any], n: int) -> float:
    t0 = time.process_time()
    for _ in range(n):
        once()
    return (time.process_time() - t0) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    spec, result = samples()
    for label, value, n in (("spec", spec, 300), ("result (4 x 128 moves)", result, 30)):
        cands = candidates(value)
        times: dict[str, list[float]] = {name: [] for name in cands}
        for _ in range(args.rounds):
            for name, once in cands.items():
                times[name].append(per_call_us(once, n))
        for name, ts in times.items():
            ratio = statistics.median(a / b for a, b in zip(ts, times["tree"], strict=True))
            print(f"{label:24s} {name:9s} {statistics.median(ts):8.1f} us  x{ratio:.2f} of tree")
    opened = _opened_note(result, SigningKey.generate())
    note_us = statistics.median(per_call_us(opened, 30) for _ in range(args.rounds))
    print(f"{'signed result note':24s} {'open':9s} {note_us:8.1f} us  (signature checked, decoded once)")


if __name__ == "__main__":
    main()
