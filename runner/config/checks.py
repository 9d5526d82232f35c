"""The checks a config needs beyond its schema: the file system, the registries, several sections at once.

Entry directories exist and hold entries of the tournament's game with a
protocol that carries it; boards parse for the game; stages name defined
boards and seed opponents; names are unique; and every stage can happen with
the entrants that can reach it (asked of the planners' ``runner.domain.stages.requirements``).
"""

from __future__ import annotations

import contextlib
import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from runner.config.engine_models import EngineModel, OpeningsModel
from runner.config.errors import ConfigProblem, Loc, did_you_mean, dotted, entry_names
from runner.config.models import EntrySource, LimitsModel
from runner.config.seed_rules import start_board_rules
from runner.config.source_map import SourceMap
from runner.domain.boards import DEFAULT_BOARD, BoardSpec, board_source_text, generate_board
from runner.domain.engine_clock import EngineSettings, merged
from runner.domain.entries import EntryError, EntryPathRefused, EntrySpec, load_entry
from runner.domain.entry_tree import EntryCaps, RefusedPath
from runner.domain.games import (
    GameLoadError,
    GameParamsError,
    game_names,
    get_game,
    is_game_reference,
    load_game_class,
    same_game,
)
from runner.domain.games.base import BoardError, Game
from runner.domain.names import entry_name_problem
from runner.domain.openings import OPENINGS_BOARD, BookError
from runner.domain.placeholders import run_arg_problems
from runner.domain.registry import ENGINE_PROTOCOLS, protocol_carries
from runner.domain.stage_models import (
    STAGE_ADAPTER,
    AnyStage,
    EliminationStage,
    GauntletStage,
    PermutationsStage,
    SeedingStage,
    SprtStage,
    SpsaStage,
    SystemTestStage,
)
from runner.domain.stages import requirements
from runner.domain.stages.requirements import Objection


class Checker:
    """The checks that need the file system, the game registry, or several sections at once.

    Works on whatever parts of the document passed the schema, so one broken
    stage does not hide a missing entry directory elsewhere.
    """

    def __init__(self, data: dict[str, Any], smap: SourceMap, base_dir: Path) -> None:
        self.data = data
        self.smap = smap
        self.base_dir = base_dir
        self.problems: list[ConfigProblem] = []
        self.warnings: list[ConfigProblem] = []
        self.entries: dict[str, EntrySpec] = {}
        self.opponents: dict[str, EntrySpec] = {}
        self._dirs: dict[Path, list[EntrySpec]] = {}
        self._name_at: dict[str, Loc] = {}

    def add(self, loc: Sequence[str | int], message: str, *, key: bool = False) -> None:
        self.problems.append(self.smap.problem(loc, message, key=key))

    def warn(self, loc: Sequence[str | int], message: str) -> None:
        self.warnings.append(replace(self.smap.problem(loc, message), warning=True))

    def _parsed(self, section: str, parse: Any) -> Iterator[tuple[int | str, Any]]:
        """The items of a section that pass the schema once their faulty keys are dropped.

        The schema pass has already reported those keys; dropping them (their
        defaults apply) lets the checks below still look at the rest.
        """
        raw = self.data.get(section)
        items: Any = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else []
        for key, value in items:
            for _attempt in range(2):
                try:
                    yield key, parse(value)
                    break
                except ValidationError as e:
                    if not isinstance(value, dict):
                        break
                    bad = {str(part) for err in e.errors() for part in err["loc"][:2] if part in value}
                    bad -= {"name", "planner", "path"}
                    if not bad:
                        break
                    value = {k: v for k, v in value.items() if k not in bad}
                except ValueError:
                    break

    def run(self) -> None:
        game = self._check_game()
        boards = {str(k): v for k, v in self._parsed("boards", BoardSpec.model_validate)}
        self._check_boards(game, boards)
        for i, src in self._parsed("entries", EntrySource.model_validate):
            self._expand(("entries", i), src, self.entries)
        for i, src in self._parsed("seed_opponents", EntrySource.model_validate):
            self._expand(("seed_opponents", i), src, self.opponents)
        stages = list(self._parsed("stages", STAGE_ADAPTER.validate_python))
        self._check_stages(game, boards, stages)
        self._check_submissions(boards)

    def _check_submissions(self, boards: dict[str, BoardSpec]) -> None:
        """The ``submissions:`` section names a house entry and a board the config has."""
        raw = self.data.get("submissions")
        if isinstance(self.data.get("entries"), dict) and raw is None:
            self.add(
                ("entries",),
                "{from: submissions} needs a submissions: section (the rules that say which "
                "version of each team counts; docs/submissions.md)",
            )
        if not isinstance(raw, dict):
            return
        house = raw.get("house")
        if isinstance(house, str) and (self.entries or self.opponents):
            known = [*self.entries, *self.opponents]
            if house not in known:
                self.add(
                    ("submissions", "house"),
                    f"no entry or seed opponent named {house!r}{did_you_mean(house, known)}; "
                    "the house entry plays every upload's smoke game",
                )
        board = raw.get("board")
        if isinstance(board, str) and board not in boards and board != DEFAULT_BOARD:
            self.add(("submissions", "board"), f"no board named {board!r}{did_you_mean(board, list(boards))}")

    def _check_game(self) -> Game[Any, Any] | None:
        name = self.data.get("game")
        if not isinstance(name, str):
            return None
        if not is_game_reference(name):
            known = game_names()
            self.add(
                ("game",),
                f"unknown game {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}",
            )
            return None
        try:
            load_game_class(name)
        except GameLoadError as e:  # names the import path and the import error
            self.add(("game",), str(e))
            return None
        params = self.data.get("game_params") or {}
        if not isinstance(params, dict):
            return None
        try:
            return get_game(name, **params)
        except GameParamsError as e:
            for fault in e.faults:
                self.add(("game_params", *fault.loc), fault.message)
        try:
            return get_game(name)
        except ValueError:  # the game needs parameters that were wrong: nothing more to check
            return None

    def _check_boards(self, game: Game[Any, Any] | None, boards: dict[str, BoardSpec]) -> None:
        seed = self.data.get("seed", 0)
        seed = seed if isinstance(seed, int) else 0
        for name, spec in boards.items():
            field = "file" if spec.file is not None else "text" if spec.text is not None else "generate"
            loc = ("boards", name, field)
            try:
                text = board_source_text(spec, self.base_dir)
            except OSError as e:
                self.add(loc, f"board {name!r}: cannot read {spec.file}: {e.strerror or e}")
                continue
            except RefusedPath as e:
                self.add(loc, f"board {name!r}: {e}")
                continue
            if game is None:
                continue
            try:
                if text is None:
                    text = generate_board(game, spec, seed, name, "validate", 1)
                game.validate_board(text)
            except (BoardError, ValueError, TypeError) as e:
                self.add(loc, f"board {name!r}: {e}")
                continue
            for rule in start_board_rules(game.name, text):
                (self.warn if rule.warning else self.add)(loc, f"board {name!r}: {rule.message}")

    def _entry_dirs(self, loc: Loc, pattern: str) -> list[Path]:
        full = self.base_dir / pattern
        if glob.has_magic(pattern):
            found = [Path(p) for p in sorted(glob.glob(str(full)))]
            dirs = [p for p in found if (p / "entry.yaml").is_file()]
            if not dirs:
                self.add(
                    loc,
                    f"no entry directory (holding entry.yaml) matches {pattern!r} (looked in {full.parent})",
                )
            return dirs
        if not full.is_dir():
            self.add(loc, f"missing entry directory {pattern!r} (resolved to {full.resolve()})")
            return []
        return [full]

    def _load_dir(self, loc: Loc, path: Path) -> list[EntrySpec]:
        key = path.resolve()
        if key not in self._dirs:
            try:
                # unresolved: an entry root that is a link is refused
                self._dirs[key] = load_entry(path, caps=self._entry_caps())
            except EntryPathRefused as e:
                shown = os.path.relpath(e.refused.path, self.base_dir)
                self.add(loc, f"{shown}: {e.refused.what}")
                self._dirs[key] = []
            except EntryError as e:
                self.add(loc, str(e))
                self._dirs[key] = []
        return self._dirs[key]

    def _entry_caps(self) -> EntryCaps:
        """The config's ``limits.entry_mb`` and friends; the defaults while ``limits`` itself is
        refused (its own problem is reported where it is)."""
        try:
            return LimitsModel.model_validate(self.data.get("limits") or {}).entry_caps()
        except ValidationError:
            return EntryCaps()

    def _expand(self, loc: Loc, src: EntrySource, into: dict[str, EntrySpec]) -> None:
        specs: list[EntrySpec] = []
        for d in self._entry_dirs((*loc, "path"), src.path):
            specs.extend(self._load_dir((*loc, "path"), d))
        if src.include is not None and specs:
            names = [s.name for s in specs]
            for j, want in enumerate(src.include):
                if want not in names:
                    self.add(
                        (*loc, "include", j), f"no entry {want!r} in {src.path}{did_you_mean(want, names)}"
                    )
            specs = [s for s in specs if s.name in src.include]
        if src.variants is not None:
            v = src.variants
            for j, arg in enumerate(v.args):  # {i} is the config's own, filled just below
                for problem in run_arg_problems(arg.replace("{i}", "0")):
                    self.add((*loc, "variants", "args", j), problem)
            if v.prefix and len(specs) > 1:
                # every entry found would get the same names: one problem, not one per name
                found = entry_names([s.name for s in specs])
                first_name = f"{v.prefix}-{v.start:0{len(str(v.start + v.count - 1))}d}"
                self.add(
                    (*loc, "variants", "prefix"),
                    f"prefix {v.prefix!r} would give each of the {len(specs)} {found} found in {src.path} "
                    f"the same names ({first_name}, ...): pick one with `include: [NAME]`, or drop "
                    f"`prefix` (names then start with each entry's own name)",
                )
                specs = specs[:1]
            width = len(str(v.start + v.count - 1))
            made: list[EntrySpec] = []
            for s in specs:
                if v.keep_original:
                    made.append(s)
                for i in range(v.start, v.start + v.count):
                    extra = [a.replace("{i}", str(i)) for a in v.args]
                    made.append(
                        replace(s, name=f"{v.prefix or s.name}-{i:0{width}d}", args=[*s.args, *extra])
                    )
            specs = made
        specs = self._with_engine_settings(src, specs)
        if src.submission is not None:
            specs = self._as_submitted(loc, src, specs)
        game = self.data.get("game")
        known_game = isinstance(game, str) and is_game_reference(game)
        wrong_game = [s.name for s in specs if known_game and not same_game(s.game, str(game))]
        if wrong_game:
            self.add(
                (*loc, "path"),
                f"{entry_names(wrong_game)} play {specs[0].game}, but this tournament's game is {game}",
            )
        wrong_protocol = [
            s.name
            for s in specs
            if known_game and s.name not in wrong_game and not protocol_carries(s.protocol, str(game))
        ]
        if wrong_protocol:
            self.add(
                (*loc, "path"),
                f"{entry_names(wrong_protocol)}: protocol {specs[0].protocol} cannot carry {game}",
            )
        self._check_system_programs(loc, specs)
        # the speed measure behind scale_nps speaks UCI (workers/engine_speed.py)
        unscalable = [s.name for s in specs if s.engine.get("scale_nps") and s.protocol != "uci"]
        if unscalable:
            self.add(
                (*loc, "path"),
                f"{entry_names(unscalable)}: scale_nps measures an engine's speed over UCI; "
                f"protocol {specs[0].protocol} has no fixed-nodes search to measure",
            )
        self._check_engine_settings(loc, specs)
        taken: dict[Loc, list[str]] = {}  # names already used, by where they were first
        for s in specs:
            if s.name in wrong_game or s.name in wrong_protocol:
                continue
            bad_name = entry_name_problem(s.name)
            if bad_name:  # a variant name made here (prefix-i): its length, or a bad entry.yaml name
                at = (*loc, "variants", "prefix") if src.variants is not None else (*loc, "path")
                self.add(at, bad_name)
                continue
            if "~" in s.name:
                self.add((*loc, "path"), f"entry name {s.name!r}: '~' is reserved (system-test mirrors)")
                continue
            if s.name in self._name_at:
                taken.setdefault(self._name_at[s.name], []).append(s.name)
                continue
            self._name_at[s.name] = loc
            into[s.name] = s
        for first, names in taken.items():  # one problem per clash, however many variants it has
            if len(names) == 1:
                self.add(loc, f"entry name {names[0]!r} is already used by {dotted(first)}")
            else:
                shown = ", ".join(repr(n) for n in names[:3]) + (
                    f" and {len(names) - 3} more" if len(names) > 3 else ""
                )
                self.add(loc, f"entry names {shown} are already used by {dotted(first)}")

    def _as_submitted(self, loc: Loc, src: EntrySource, specs: list[EntrySpec]) -> list[EntrySpec]:
        """An entry that says which submission it is must be that submission: one entry, named
        after the team, with the recorded digest (code changed under the contest directory, or
        a path to another entry, is refused here rather than played under the team's name)."""
        origin = src.submission
        assert origin is not None
        if len(specs) != 1:
            if specs:
                self.add((*loc, "path"), f"a submission is one entry; {src.path} holds {len(specs)}")
            return []
        (spec,) = specs
        if spec.name != origin.team:
            self.add(
                (*loc, "submission", "team"),
                f"the entry at {src.path} is {spec.name!r}, not team {origin.team!r}",
            )
            return []
        if spec.digest != origin.entry_digest:
            self.add(
                (*loc, "submission", "entry_digest"),
                f"the entry at {src.path} has digest {spec.digest[:16]}, but team {origin.team}'s version "
                f"{origin.version} was {origin.entry_digest[:16]}: its code changed since it was submitted",
            )
            return []
        return specs

    def _openings_ok(self) -> bool:
        """Check the ``openings`` book (the game is chess, the book reads, its positions are legal);
        whether stages may list the board ``openings``."""
        raw = self.data.get("openings")
        if raw is None:
            return False
        try:
            model = OpeningsModel.model_validate(raw)
        except ValidationError:
            return True  # the schema pass reports it at its place
        if self.data.get("game") != "chess":
            self.add(("openings",), "an opening book needs game: chess")
            return True
        params = self.data.get("game_params")
        chess960 = isinstance(params, dict) and params.get("variant") == "chess960"
        seed = self.data.get("seed", 0)
        try:
            model.load(self.base_dir, seed if isinstance(seed, int) else 0, chess960)
        except BookError as e:
            self.add(("openings", "file"), str(e))
        return True

    def _check_system_programs(self, loc: Loc, specs: list[EntrySpec]) -> None:
        """An entry that runs a program of the system (``command: /usr/games/stockfish``) needs it
        installed: one line naming the program, and the Debian package for /usr/games ones."""
        programs = {s.run[0] for s in specs if s.run and s.run[0].startswith("/")}
        missing = sorted(p for p in programs if not Path(p).exists())
        for program in missing:
            hint = f" (apt-get install {Path(program).name})" if program.startswith("/usr/games/") else ""
            self.add((*loc, "path"), f"{program} is not installed on this machine{hint}")

    def _check_engine_settings(self, loc: Loc, specs: list[EntrySpec]) -> None:
        """An engine's settings its protocol cannot carry are refused here, in one line each
        (``EngineSettings.refusal``), never played wrong."""
        for s in specs:
            if s.protocol in ENGINE_PROTOCOLS:
                why = EngineSettings.from_dict(s.engine).refusal(s.protocol)
                if why is not None:
                    self.add(loc, f"{s.name}: {why}")

    def _with_engine_settings(self, src: EntrySource, specs: list[EntrySpec]) -> list[EntrySpec]:
        """Engines get the config's ``each:`` and their own ``engine:`` over entry.yaml's options."""
        each: dict[str, Any] = {}
        raw_each = self.data.get("each")
        if isinstance(raw_each, dict):
            with contextlib.suppress(ValueError):  # the schema pass reports it at its place
                each = EngineModel.model_validate(raw_each).settings_dict()
        own = src.engine.settings_dict() if src.engine is not None else {}
        return [
            replace(s, engine=merged(s.engine, each, own)) if s.protocol in ENGINE_PROTOCOLS else s
            for s in specs
        ]

    def _check_stages(
        self,
        game: Game[Any, Any] | None,
        boards: dict[str, BoardSpec],
        stages: list[tuple[int | str, AnyStage]],
    ) -> None:
        defined = [*boards, DEFAULT_BOARD, *([OPENINGS_BOARD] if self._openings_ok() else [])]
        raw_boards = self.data.get("boards")
        board_names = set(raw_boards) if isinstance(raw_boards, dict) else set()
        opponents = list(self.opponents)
        raw_stages = self.data.get("stages")
        complete = isinstance(raw_stages, list) and len(stages) == len(raw_stages)
        # upper bound of the entrants that can reach each stage ("a final of 8 from 5 entries")
        count: int | None = len(self.entries) if self.entries and complete else None
        seen: dict[str, Loc] = {}
        for pos, (i, st) in enumerate(stages):
            loc: Loc = ("stages", i)
            if st.name in seen:
                self.add((*loc, "name"), f"stage name {st.name!r} is already used by {dotted(seen[st.name])}")
            seen.setdefault(st.name, loc)
            for j, b in enumerate(st.boards):
                if b not in defined and b not in board_names:
                    self.add((*loc, "boards", j), f"undefined board {b!r}{did_you_mean(b, defined)}")
            if pos == 0 and st.when != "always":
                self.add((*loc, "when"), "the first stage has no ranking before it to be tied")
            names: list[str] = []
            if isinstance(st, SeedingStage | GauntletStage):
                names = st.opponents if st.opponents is not None else opponents
                if not names and not self.data.get("seed_opponents"):
                    self.add(loc, f"planner {st.planner} needs seed_opponents (none are defined)")
                for j, o in enumerate(st.opponents or []):
                    if o not in self.opponents and self.data.get("seed_opponents") is not None:
                        self.add(
                            (*loc, "opponents", j), f"no seed opponent {o!r}{did_you_mean(o, opponents)}"
                        )
            if (
                isinstance(st, SystemTestStage)
                and st.reference is not None
                and st.reference not in self.opponents
            ):
                self.add(
                    (*loc, "reference"),
                    f"no seed opponent {st.reference!r}{did_you_mean(st.reference, opponents)}",
                )
            if isinstance(st, SprtStage) and self.entries:
                for key in ("engine", "baseline"):
                    who = getattr(st, key)
                    if who is not None and who not in self.entries:
                        self.add((*loc, key), f"no entry {who!r}{did_you_mean(who, list(self.entries))}")
            if isinstance(st, SpsaStage) and self.entries:
                self._check_spsa(loc, st)
            self._object(loc, requirements.board_objections(st, boards))
            if isinstance(st, EliminationStage):
                self._object(loc, requirements.finalist_objections(st))
            if isinstance(st, PermutationsStage) and game is not None and st.max_entrants > game.max_players:
                self.add(
                    (*loc, "max_entrants"), f"{game.name} takes at most {game.max_players} players in a game"
                )
            if isinstance(st, PermutationsStage) and game is not None and count is not None:
                self._object(loc, requirements.unbreakable_tie(st, count, game.max_players))
            if count is not None:
                self._object(loc, requirements.game_objections(st, count, len(opponents)))
                admitted = requirements.admission(st, count)
                self._object(loc, admitted.objections)
                count = admitted.out

    def _check_spsa(self, loc: Loc, st: SpsaStage) -> None:
        """The tuned entry exists and is an engine: its options are what spsa moves."""
        if st.engine is not None and st.engine not in self.entries:
            self.add((*loc, "engine"), f"no entry {st.engine!r}{did_you_mean(st.engine, list(self.entries))}")
            return
        tuned = [self.entries[st.engine]] if st.engine is not None else list(self.entries.values())
        for spec in tuned:
            if spec.protocol not in ENGINE_PROTOCOLS:
                where = (*loc, "engine") if st.engine is not None else loc
                self.add(
                    where,
                    f"spsa tunes engine options (uci or xboard), but {spec.name!r} speaks {spec.protocol}",
                )

    def _object(self, loc: Loc, objections: Sequence[Objection]) -> None:
        for objection in objections:
            if objection.warning:
                self.warn((*loc, *objection.at), objection.message)
            else:
                self.add((*loc, *objection.at), objection.message)
