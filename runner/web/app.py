"""The submission server's ASGI app (Starlette; docs/submissions.md has the pages and the JSON API).

Pages: ``/`` the public status board, ``/login`` (a team's or the organiser's token, kept in
an HttpOnly SameSite=Strict cookie), ``/team`` its versions and the upload form,
``/team/v/N`` one version's checks (refreshing while they run), ``/team/v/N/build-log``,
``/register`` (``registration: open``), ``/organiser``. API: ``POST /api/submissions``
(``Authorization: Bearer TOKEN``, multipart field ``file``), ``GET /api/submissions[/N]``,
``POST /api/submissions/N/choose``, ``GET /api/status``. The contest's run, live while it plays:
``/run``, ``/api/run``, ``/api/run/version`` (``runner.web.live_run``). Every page shows the
deadline and the time left; a refusal is one line, on the page and as ``{"error": ...}``.

Uploads: the deadline and the rate limit are checked before the body is read; the body is
capped (``runner.web.guards.BodyCap``) and its file part streamed once into the contest's
``incoming/`` (``runner.web.receiving``), then stored durably by digest and recorded: the
answer comes at "received" (``201``, the version ``checking``; ``422`` at once for a file whose
first bytes are no known archive). Unpacking and the layout follow in the intake pool; the
row is written only once the bytes are stored, so a server killed mid-upload leaves no
submission, and one killed after the answer unpacks it as it starts again.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from runner.submissions.counting import counting, time_left
from runner.submissions.store import Auth, Submission
from runner.web.context import Refusal, ServeContext
from runner.web.guards import BodyCap, BodyTooLarge, OneLineErrors, RateLimit, csrf_ok, csrf_value
from runner.web.live_run import live_script
from runner.web.receiving import UploadIntake
from runner.web.shapes import iso_time, smoke_moves, submission_json

log = logging.getLogger("tourney.serve")

TOKEN_COOKIE = "tourney_token"
CSRF_COOKIE = "tourney_csrf"
#: multipart framing and the other form fields, beyond the file itself
FORM_OVERHEAD = 64 * 1024


class SubmissionApp:
    """The routes, over one ``ServeContext``."""

    def __init__(self, ctx: ServeContext) -> None:
        self.ctx = ctx
        self.limit = RateLimit(ctx.rules.rate_limit.uploads, ctx.rules.rate_limit.per_s)
        self._intake = UploadIntake(ctx)
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("runner.web", "templates"),
            autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
            undefined=jinja2.StrictUndefined,
        )

    # -- shared ------------------------------------------------------------------
    def _deadline(self) -> dict[str, str]:
        now = self.ctx.now()
        rules = self.ctx.rules
        opens = rules.opens
        return {
            "deadline": rules.deadline.isoformat(),
            "deadline_epoch": str(int(rules.deadline.timestamp())),
            "left": time_left(rules.deadline, now),
            "opens": opens.isoformat() if opens is not None and now < opens else "",
        }

    def _page(self, request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        csrf_cookie = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        auth = self._cookie_auth(request)
        html = self.templates.get_template(name).render(
            contest=self.ctx.config.name,
            description=self.ctx.config.description,
            clock=self._deadline(),
            csrf=csrf_value(self.ctx.secret, csrf_cookie),
            signed_in=auth.team or ("organiser" if auth.organiser else ""),
            registration=self.ctx.rules.registration,
            **values,
        )
        response = HTMLResponse(html, status_code=status)
        if request.cookies.get(CSRF_COOKIE) != csrf_cookie:
            response.set_cookie(CSRF_COOKIE, csrf_cookie, httponly=True, samesite="strict", path="/")
        response.headers["Cache-Control"] = "no-store"
        return response

    def _refused_page(self, request: Request, e: Refusal) -> HTMLResponse:
        response = self._page(request, "message.html.j2", e.status, title="Refused", message=str(e))
        response.headers.update(e.headers)
        return response

    @staticmethod
    def _refused_json(e: Refusal) -> JSONResponse:
        return JSONResponse({"error": str(e)}, status_code=e.status, headers=e.headers)

    def _cookie_auth(self, request: Request) -> Auth:
        token = request.cookies.get(TOKEN_COOKIE)
        return self.ctx.store.authenticate(token) if token else Auth(refused="not signed in")

    def _bearer_auth(self, request: Request) -> Auth:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refusal(401, "refused: send your team's token as 'Authorization: Bearer TOKEN'")
        auth = self.ctx.store.authenticate(token.strip())
        if auth.refused:
            raise Refusal(401, f"refused: {auth.refused}")
        return auth

    def _counting(self, team: str, versions: list[Submission] | None = None) -> Submission | None:
        subs = versions if versions is not None else self.ctx.store.submissions(team)
        return counting(subs, self.ctx.rules.counts)

    def _check_csrf(self, request: Request, form: Any) -> None:
        if not csrf_ok(self.ctx.secret, request.cookies.get(CSRF_COOKIE), form.get("csrf")):
            raise Refusal(
                403, "refused: the form's CSRF token is missing or wrong (reload the page and try again)"
            )

    # -- uploads -------------------------------------------------------------------
    def _may_upload(self, team: str) -> None:
        now = self.ctx.now()
        rules = self.ctx.rules
        if rules.opens is not None and now < rules.opens:
            raise Refusal(403, f"refused: uploads open at {rules.opens.isoformat()}")
        if now > rules.deadline:
            raise Refusal(403, f"refused: the deadline was {rules.deadline.isoformat()}; uploads are closed")
        wait = self.limit.take(team)
        if wait is not None:
            raise Refusal(
                429,
                f"refused: more than {rules.rate_limit.uploads} uploads in {rules.rate_limit.per_s:g}s; "
                f"try again in {int(wait + 0.999)}s",
                {"Retry-After": str(int(wait + 0.999))},
            )

    # -- the JSON API ------------------------------------------------------------------
    async def api_submit(self, request: Request) -> Response:
        try:
            auth = self._bearer_auth(request)
            if auth.team is None:
                raise Refusal(403, "refused: the organiser token cannot upload; use a team's")
            self._may_upload(auth.team)
            sub = await self._intake.receive(request, auth.team)
        except Refusal as e:
            return self._refused_json(e)
        # a version just received cannot count yet: no entry yet, not ready, not chosen
        body = submission_json(sub, False)
        refused = sub.state == "refused"
        headers = {} if refused else {"Location": body["api_url"]}
        return JSONResponse(body, status_code=422 if refused else 201, headers=headers)

    async def api_list(self, request: Request) -> Response:
        try:
            auth = self._bearer_auth(request)
        except Refusal as e:
            return self._refused_json(e)
        teams = [t.name for t in self.ctx.store.teams()] if auth.organiser else [str(auth.team)]
        out = []
        for team in teams:
            subs = self.ctx.store.submissions(team)
            counted = self._counting(team, subs)
            out += [submission_json(s, counted is not None and counted.id == s.id) for s in subs]
        return JSONResponse({"submissions": out, **self._deadline()})

    async def api_one(self, request: Request) -> Response:
        try:
            auth = self._bearer_auth(request)
            team = auth.team or request.query_params.get("team", "")
            sub = self.ctx.store.version(team, int(request.path_params["version"]))
            if sub is None:
                raise Refusal(404, f"no version {request.path_params['version']} of team {team}")
        except Refusal as e:
            return self._refused_json(e)
        counted = self._counting(sub.team)
        return JSONResponse(submission_json(sub, counted is not None and counted.id == sub.id))

    async def api_choose(self, request: Request) -> Response:
        try:
            auth = self._bearer_auth(request)
            if auth.team is None:
                raise Refusal(403, "refused: a team chooses its own version")
            self._choose(auth.team, int(request.path_params["version"]))
        except Refusal as e:
            return self._refused_json(e)
        return JSONResponse({"chosen": int(request.path_params["version"])})

    def _choose(self, team: str, version: int) -> None:
        if self.ctx.rules.counts != "chosen":
            raise Refusal(409, f"refused: this contest counts {self.ctx.rules.counts}, not a chosen version")
        if self.ctx.now() > self.ctx.rules.deadline:
            raise Refusal(
                403, f"refused: the deadline was {self.ctx.rules.deadline.isoformat()}; what counts is frozen"
            )
        try:
            self.ctx.store.choose(team, version)
        except ValueError as e:
            raise Refusal(409, f"refused: {e}") from None

    def board_rows(self) -> list[dict[str, Any]]:
        """The public status board: no code, logs or emails of any team."""
        rows = []
        by_team: dict[str, list[Submission]] = {}
        for sub in self.ctx.store.submissions():
            by_team.setdefault(sub.team, []).append(sub)
        for team in self.ctx.store.teams():
            if team.revoked is not None:
                continue
            subs = by_team.get(team.name, [])
            counted = self._counting(team.name, subs)
            rows.append(
                {
                    "team": team.name,
                    "versions": len(subs),
                    "last": iso_time(max((s.received for s in subs), default=None)),
                    "counting": counted.version if counted is not None else None,
                    "ready": counted is not None and counted.state == "ready",
                }
            )
        return rows

    async def api_status(self, request: Request) -> Response:
        return JSONResponse({"contest": self.ctx.config.name, "teams": self.board_rows(), **self._deadline()})

    # -- pages ---------------------------------------------------------------------------
    async def board(self, request: Request) -> Response:
        return self._page(request, "board.html.j2", rows=self.board_rows())

    async def login_form(self, request: Request) -> Response:
        return self._page(request, "login.html.j2", error="")

    async def login(self, request: Request) -> Response:
        async with request.form(max_files=0, max_fields=4) as form:
            try:
                self._check_csrf(request, form)
            except Refusal as e:
                return self._refused_page(request, e)
            token = str(form.get("token") or "").strip()
        auth = self.ctx.store.authenticate(token)
        if auth.refused:
            return self._page(request, "login.html.j2", 401, error=f"refused: {auth.refused}")
        response = RedirectResponse("/organiser" if auth.organiser else "/team", status_code=303)
        secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
        response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", secure=secure, path="/")
        return response

    async def logout(self, request: Request) -> Response:
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(TOKEN_COOKIE, path="/")
        return response

    def _team_or_login(self, request: Request) -> str | Response:
        auth = self._cookie_auth(request)
        if auth.team is None:
            return RedirectResponse("/login", status_code=303)
        return auth.team

    async def team_page(self, request: Request) -> Response:
        team = self._team_or_login(request)
        if not isinstance(team, str):
            return team
        subs = self.ctx.store.submissions(team)
        counted = self._counting(team, subs)
        return self._page(
            request,
            "team.html.j2",
            team=team,
            versions=[submission_json(s, counted is not None and counted.id == s.id) for s in reversed(subs)],
            counts=self.ctx.rules.counts,
            layout=self.ctx.rules.layout,
            max_bytes=self.ctx.rules.max_bytes,
        )

    async def upload(self, request: Request) -> Response:
        team = self._team_or_login(request)
        if not isinstance(team, str):
            return team
        try:
            self._may_upload(team)
            sub = await self._intake.receive(request, team, lambda fields: self._check_csrf(request, fields))
        except Refusal as e:
            return self._refused_page(request, e)
        return RedirectResponse(f"/team/v/{sub.version}", status_code=303)

    async def choose(self, request: Request) -> Response:
        team = self._team_or_login(request)
        if not isinstance(team, str):
            return team
        try:
            async with request.form(max_files=0, max_fields=4) as form:
                self._check_csrf(request, form)
            self._choose(team, int(request.path_params["version"]))
        except Refusal as e:
            return self._refused_page(request, e)
        return RedirectResponse("/team", status_code=303)

    async def version_page(self, request: Request) -> Response:
        team = self._team_or_login(request)
        if not isinstance(team, str):
            return team
        sub = self.ctx.store.version(team, int(request.path_params["version"]))
        if sub is None:
            return self._refused_page(request, Refusal(404, "no such version of your team"))
        counted = self._counting(team)
        return self._page(
            request,
            "submission.html.j2",
            team=team,
            sub=submission_json(sub, counted is not None and counted.id == sub.id),
            moves=smoke_moves(sub),
            checking=sub.state == "checking",
        )

    async def build_log(self, request: Request) -> Response:
        team = self._team_or_login(request)
        if not isinstance(team, str):
            return team
        sub = self.ctx.store.version(team, int(request.path_params["version"]))
        if sub is None or not sub.build_log:
            return PlainTextResponse("no build log for this version\n", status_code=404)
        return PlainTextResponse(sub.build_log, headers={"Cache-Control": "no-store"})

    async def register_form(self, request: Request) -> Response:
        if self.ctx.rules.registration != "open":
            return self._refused_page(
                request, Refusal(403, "registration is closed: ask the organiser for a token")
            )
        return self._page(request, "register.html.j2", error="")

    async def register(self, request: Request) -> Response:
        if self.ctx.rules.registration != "open":
            return self._refused_page(
                request, Refusal(403, "registration is closed: ask the organiser for a token")
            )
        async with request.form(max_files=0, max_fields=6) as form:
            try:
                self._check_csrf(request, form)
            except Refusal as e:
                return self._refused_page(request, e)
            name = str(form.get("team") or "").strip()
            emails = [e.strip() for e in str(form.get("emails") or "").replace(",", " ").split() if e.strip()]
        if self.ctx.now() > self.ctx.rules.deadline:
            return self._refused_page(request, Refusal(403, "registration closed with the deadline"))
        try:
            if not emails:
                raise ValueError("give at least one email address")
            token = await run_in_threadpool(self.ctx.store.add_team, name, emails)
        except ValueError as e:
            return self._page(request, "register.html.j2", 400, error=f"refused: {e}")
        return self._page(request, "registered.html.j2", team=name, token=token)

    async def organiser(self, request: Request) -> Response:
        auth = self._cookie_auth(request)
        if not auth.organiser:
            return self._refused_page(
                request, Refusal(403, "the organiser's view: sign in with the organiser token")
            )
        teams = []
        for team in self.ctx.store.teams():
            subs = self.ctx.store.submissions(team.name)
            counted = self._counting(team.name, subs)
            teams.append(
                {
                    "name": team.name,
                    "emails": team.emails,
                    "revoked": team.revoked is not None,
                    "versions": [
                        submission_json(s, counted is not None and counted.id == s.id) for s in reversed(subs)
                    ],
                }
            )
        return self._page(request, "organiser.html.j2", teams=teams)

    # -- the run, live (runner.web.live_run) ------------------------------------------------
    async def run_page(self, request: Request) -> Response:
        live = self.ctx.live
        version, page = await run_in_threadpool(live.page) if live is not None else (None, "")
        if version is None or not page:
            return self._page(request, "run_waiting.html.j2")
        body = page.replace("</body>", live_script(version.key) + "</body>", 1)
        return HTMLResponse(body, headers={"Cache-Control": "no-store"})

    async def api_run(self, request: Request) -> Response:
        if self.ctx.live is None:
            return JSONResponse({"state": "none"})
        return JSONResponse(
            await run_in_threadpool(self.ctx.live.summary), headers={"Cache-Control": "no-store"}
        )

    async def api_run_version(self, request: Request) -> Response:
        if self.ctx.live is None:
            return JSONResponse({"state": "none", "version": ""})
        version = await run_in_threadpool(self.ctx.live.version)
        return JSONResponse(
            {"state": version.state, "version": version.key}, headers={"Cache-Control": "no-store"}
        )

    def routes(self) -> list[Route]:
        return [
            Route("/", self.board),
            Route("/login", self.login_form, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/team", self.team_page),
            Route("/team/upload", self.upload, methods=["POST"]),
            Route("/team/v/{version:int}", self.version_page),
            Route("/team/v/{version:int}/build-log", self.build_log),
            Route("/team/v/{version:int}/choose", self.choose, methods=["POST"]),
            Route("/register", self.register_form, methods=["GET"]),
            Route("/register", self.register, methods=["POST"]),
            Route("/organiser", self.organiser),
            Route("/api/submissions", self.api_submit, methods=["POST"]),
            Route("/api/submissions", self.api_list, methods=["GET"]),
            Route("/api/submissions/{version:int}", self.api_one, methods=["GET"]),
            Route("/api/submissions/{version:int}/choose", self.api_choose, methods=["POST"]),
            Route("/api/status", self.api_status),
            Route("/run", self.run_page),
            Route("/api/run", self.api_run),
            Route("/api/run/version", self.api_run_version),
        ]


def make_app(ctx: ServeContext) -> Starlette:
    """The app: routes behind the body cap (the upload cap plus the form's framing) and the
    one-line error handler."""

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("not found\n", status_code=404)

    app = SubmissionApp(ctx)
    return Starlette(
        routes=app.routes(),
        middleware=[
            Middleware(BodyCap, max_body=ctx.rules.max_bytes + FORM_OVERHEAD),  # type: ignore[arg-type]
            Middleware(OneLineErrors),  # type: ignore[arg-type]
        ],
        exception_handlers={404: not_found},
    )


__all__ = ["BodyTooLarge", "Refusal", "ServeContext", "make_app", "submission_json"]
