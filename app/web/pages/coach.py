"""The coach's pages: where a finished game slipped, and "Try again from here" (issue #22).

The JSON twins are in app/web/api/games.py (``/api/games/{id}/analysis`` and ``/try-again``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from app.services.errors import DealInPlay
from app.web.deps import BrowserPlayer, SolverDep, ViewerDep
from app.web.http.ratelimit import limit_costly
from app.web.pages.htmx import is_htmx, vary_on_htmx
from app.web.pages.templating import render
from app.web.words import say_words

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema


@router.get("/games/{game_id}/analysis")
async def analysis_page(
    request: Request, game_id: str, viewer: ViewerDep, solver: SolverDep
) -> Response:
    """The analysis of a finished game: a fragment for the finished board (loaded by HTMX
    once the board shows), or a page of its own without JavaScript."""
    limit_costly(request, "analyses", viewer)
    found = await solver.analysis(game_id, viewer)
    context: dict[str, Any] = {"analysis": found, "game_id": game_id}
    slip = found.get("slip")
    if slip:
        better = slip["better"]
        notation = f"{better['from']}-{better['to']}" + (
            f"/{better['count']}" if better["count"] > 1 else ""
        )
        played, instead = await run_in_threadpool(
            solver.slip_words, game_id, viewer, int(slip["ply"]), notation
        )
        context |= {"played": say_words(played), "instead": say_words(instead)}
    fragment = is_htmx(request)
    if fragment:
        # The board above was drawn before this answer: the deal's verdict may have been found
        # since (a judgement finished, or this analysis decided it). Its line says the latest.
        judged = await run_in_threadpool(solver.judged_verdict, game_id)
        verdict = judged if judged is not None else found["deal_winnable"]
        if verdict is not None:  # an undecided analysis says none
            context["verdict_update"] = verdict
            context["verdict_solution"] = f"/games/{game_id}/solution" if judged else None
    template = "components/analysis.html" if fragment else "pages/analysis.html"
    return vary_on_htmx(render(request, template, context))


@router.post("/games/{game_id}/try-again")
async def try_again(
    request: Request, game_id: str, player: BrowserPlayer, solver: SolverDep
) -> Response:
    """ "Try again from here": a new casual game of the deal, just before the slip."""
    try:
        view = await solver.try_again(game_id, player)
    except DealInPlay as exc:  # one unfinished game per deal: take the player back to it
        return RedirectResponse(f"/games/{exc.game_id}", status_code=303)
    return RedirectResponse(f"/games/{view.record.id}", status_code=303)
