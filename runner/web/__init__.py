"""The submission server (``tourney serve``): its ASGI app, pages and checks loop (docs/submissions.md)."""
