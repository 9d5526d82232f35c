"""The contest before the run: teams, their uploads, and what counts (docs/submissions.md).

Pure rules and the contest's own store, below the orchestration and web layers that use them
(docs/architecture.md, "Layers"):

- ``tokens``: a team's (and the organiser's) bearer token, kept only as a salted hash;
- ``contest_dir``: where a contest keeps its store, uploads, artifacts and checks;
- ``store``: the SQLite store of teams, submissions and their check steps;
- ``archive``: unpacking a hostile archive under caps, writing nothing outside;
- ``layouts``: what an upload must hold (icfp98, potm, plugin) and the entry it makes;
- ``counting``: which version of a team counts, and the deadline's rules.
"""
