"""Pages and the JSON API. Views are thin: parse, check access, fetch from the bus, present, render.

Every view goes through ``_reader`` (the login gate, ``dashboard.access.visibility``). Pages embed their
first document as JSON (``json_script``) and the page script draws it and then follows the websocket,
so the first paint and every live update take the same path. Non-goal: actions (a later issue).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from functools import wraps
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import aauthenticate, alogin, alogout
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_GET, require_safe

from dashboard.access.policy import LOGS
from dashboard.access.rbac import aaccess_for, access_for
from dashboard.access.visibility import can_view, may_read, visible
from dashboard.live.bus import BusError
from dashboard.web import data
from dashboard.web.fleet import GROUPS
from dashboard.web.history import present_release, present_releases
from dashboard.web.rollout import TIMELINE_FILTERS, with_permissions
from dashboard.web.rollout import actions as present_actions

View = Callable[..., Coroutine[Any, Any, HttpResponse]]
HISTORY_PAGE = 50  # releases on one page of a rollout's history (older ones a link further)


def _reader(api: bool = False) -> Callable[[View], View]:
    """Require a reader; pages redirect to the login page, the API answers 401 with a JSON error."""

    def decorate(view: View) -> View:
        @wraps(view)
        async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            user = await request.auser()
            request.user = user  # resolved here, so templates never touch the database synchronously
            await aaccess_for(user)  # the user's grants, loaded once here for every check below
            if not may_read(user):
                if api:
                    return JsonResponse({"error": "authentication required"}, status=401)
                query = urlencode({"next": request.get_full_path()})
                return HttpResponseRedirect(f"{settings.LOGIN_URL}?{query}")
            request.reader = user  # type: ignore[attr-defined]
            return await view(request, *args, **kwargs)

        return wrapper

    return decorate


_JSON_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def embed_json(value: Any) -> SafeString:
    """JSON safe inside a <script> element (what ``json_script`` does, compact and faster for big pages)."""
    return mark_safe(json.dumps(value, separators=(",", ":")).translate(_JSON_ESCAPES))


def _key(cluster: str, namespace: str, name: str) -> str:
    return f"{cluster}/{namespace}/{name}"


@never_cache
@require_safe  # HEAD / answers like GET (uptime checks use HEAD)
@_reader()
async def fleet_page(request: HttpRequest) -> HttpResponse:
    """The page shell, at once: the rows follow from ``api_fleet_rows`` (requested by the shell's preload)."""
    data.warm_fleet_index()
    context = {
        "groups": [{"name": n, "label": label, "hint": hint} for n, label, hint in GROUPS],
        "page": "fleet",
    }
    return render(request, "dashboard/fleet.html", context)


@never_cache
@require_GET
@_reader()
async def rollout_page(request: HttpRequest, cluster: str, namespace: str, name: str) -> HttpResponse:
    key = _key(cluster, namespace, name)
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        raise Http404("no such rollout")
    stream_id, view = await data.gather_rollout(key)
    page = await data.rollout_page(key, view, stream_id) if view else None
    controller = str((view or {}).get("controller") or "argo-rollouts")
    permissions = await sync_to_async(data.action_permissions_sync)(request.reader, key)  # type: ignore[attr-defined]
    if page is not None and isinstance(page.get("actions"), dict):
        page = {**page, "actions": with_permissions(page["actions"], permissions)}
    context = {
        "initial": {"streamId": stream_id, "view": view, "page": page, "permissions": permissions},
        "action_permissions": permissions,
        "controller": controller,
        "canary_actions": canary_actions(request.reader, key) if controller == "flagger" else [],  # type: ignore[attr-defined]
        "logs_allowed": access_for(request.reader).can(LOGS, key),  # type: ignore[attr-defined]
        "timeline_filters": TIMELINE_FILTERS,
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "key": key,
        "found": view is not None,
        "page": "rollout",
    }
    return render(request, "dashboard/rollout.html", context, status=200 if view else 404)


@never_cache
@require_GET
@_reader()
async def history_page(request: HttpRequest, cluster: str, namespace: str, name: str) -> HttpResponse:
    key = _key(cluster, namespace, name)
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        raise Http404("no such rollout")
    before = request.GET.get("before") or None
    try:  # one more than a page: whether there are older releases to link to
        releases = await sync_to_async(data.release_rows_sync)(key, HISTORY_PAGE + 1, before)
    except data.NoSuchRelease:
        raise Http404("no such release") from None
    older = releases[HISTORY_PAGE - 1]["podHash"] if len(releases) > HISTORY_PAGE else None
    context = {
        "releases": present_releases(releases[:HISTORY_PAGE], key, data.now()),
        "older": older,
        "before": before,
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "key": key,
        "page": "history",
    }
    return render(request, "dashboard/history.html", context)


async def _release_document(
    request: HttpRequest, cluster: str, namespace: str, name: str, pod_hash: str
) -> dict[str, Any] | None:
    key = _key(cluster, namespace, name)
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        return None
    detail = await sync_to_async(data.release_detail_sync)(key, pod_hash)
    if detail is None:
        return None
    _, live = await data.gather_rollout(key)
    chain = await data.release_chain(key, pod_hash, live)
    return present_release(key, detail, live, data.now(), chain)


@never_cache
@require_GET
@_reader()
async def release_page(
    request: HttpRequest, cluster: str, namespace: str, name: str, pod_hash: str
) -> HttpResponse:
    document = await _release_document(request, cluster, namespace, name, pod_hash)
    if document is None:
        raise Http404("no such release")
    context = {
        "initial_json": embed_json(document),
        "initial": document,
        "release": document["release"],
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "key": document["key"],
        "page": "release",
        "timeline_filters": TIMELINE_FILTERS,
    }
    return render(request, "dashboard/release.html", context)


@never_cache
@require_GET
@_reader()
async def release_postmortem(
    request: HttpRequest, cluster: str, namespace: str, name: str, pod_hash: str, fmt: str
) -> HttpResponse:
    """The release's post-mortem as Markdown or JSON (``?tz=`` the reader's IANA time zone)."""
    from dashboard.domain.postmortem import BadTimeZone, time_zone, to_markdown

    key = _key(cluster, namespace, name)
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        raise Http404("no such release")
    try:
        zone = time_zone(request.GET.get("tz"))
    except BadTimeZone as error:
        return JsonResponse({"error": str(error), "field": "tz"}, status=400)
    _, live = await data.gather_rollout(key)
    document = await sync_to_async(data.postmortem_sync)(
        key, pod_hash, zone=zone, base_url=request.build_absolute_uri("/"), view=live
    )
    if document is None:
        return JsonResponse({"error": f"no release {pod_hash} of {key}"}, status=404)
    filename = f"postmortem-{namespace}-{name}-{pod_hash}.{fmt}"
    if fmt == "json":
        response: HttpResponse = JsonResponse(document, json_dumps_params={"indent": 2})
    else:
        response = HttpResponse(to_markdown(document), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def canary_actions(user: Any, key: str) -> list[str]:
    """The Canary actions ``user`` may take on ``key``: the gate server's own permission rule (each maps
    to the Rollout action of the same meaning), so a button shown is a button that is allowed."""
    from dashboard.flagger_gates.services import ACTIONS, PERMISSION

    if not getattr(user, "is_authenticated", False):
        return []
    access = access_for(user)
    return [action for action in ACTIONS if access.can(PERMISSION[action], key)]


# --- JSON API (DESIGN §3) ---------------------------------------------------------------------------


@never_cache
@require_GET
@_reader(api=True)
async def api_fleet(request: HttpRequest) -> JsonResponse:
    stream_id, rows = await data.gather_fleet()
    rows = visible(request.reader, rows)  # type: ignore[attr-defined]
    return JsonResponse({"streamId": stream_id, "count": len(rows), "rollouts": rows})


@never_cache
@require_GET
@_reader(api=True)
async def api_fleet_rows(request: HttpRequest) -> HttpResponse:
    """The fleet page's rows: ``{streamId, count, fields, rows: [[...]]}``, gzip when accepted."""
    try:
        body, gzipped = await data.fleet_document(
            request.reader,  # type: ignore[attr-defined]
            "gzip" in request.headers.get("Accept-Encoding", ""),
        )
    except BusError as error:
        return JsonResponse({"error": f"the live bus is unavailable: {error}"}, status=503)
    response = HttpResponse(body, content_type="application/json")
    response["Vary"] = "Accept-Encoding, Cookie"
    if gzipped:
        response["Content-Encoding"] = "gzip"
    return response


@never_cache
@require_GET
@_reader(api=True)
async def api_rollout(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    key = _key(cluster, namespace, name)
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        return JsonResponse({"error": f"no rollout {key}"}, status=404)
    stream_id, view = await data.gather_rollout(key)
    if view is None:
        return JsonResponse({"error": f"no rollout {key}"}, status=404)
    permissions = await sync_to_async(data.action_permissions_sync)(request.reader, key)  # type: ignore[attr-defined]
    document: dict[str, Any] = {"streamId": stream_id, **view}
    if view.get("controller") != "flagger":
        # What the page's action bar shows: each action's rule (applies/reason/params) and this user's right.
        document["actions"] = with_permissions(present_actions(view), permissions)
    return JsonResponse(document)


@never_cache
@require_GET
@_reader(api=True)
async def api_timeline(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    key = _key(cluster, namespace, name)
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        return JsonResponse({"error": f"no rollout {key}"}, status=404)
    stream_id, view = await data.gather_rollout(key)
    events = await data.timeline_events(key, stream_id)
    if view is None and not events:
        return JsonResponse({"error": f"no rollout {key}"}, status=404)
    return JsonResponse({"key": key, "streamId": stream_id, "events": list(events)})


@never_cache
@require_GET
@_reader(api=True)
async def api_release(
    request: HttpRequest, cluster: str, namespace: str, name: str, pod_hash: str
) -> JsonResponse:
    document = await _release_document(request, cluster, namespace, name, pod_hash)
    if document is None:
        key = _key(cluster, namespace, name)
        return JsonResponse({"error": f"no release {pod_hash} of {key}"}, status=404)
    return JsonResponse(document)


# --- login --------------------------------------------------------------------------------------------


@never_cache
@csrf_protect
async def login_page(request: HttpRequest) -> HttpResponse:
    request.user = await request.auser()
    next_url = request.POST.get("next") or request.GET.get("next") or settings.LOGIN_REDIRECT_URL
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = settings.LOGIN_REDIRECT_URL
    error = ""
    if request.method == "POST":
        username = request.POST.get("username", "").strip()
        password = request.POST.get("password", "")
        user = await aauthenticate(request, username=username, password=password) if username else None
        if user is not None and user.is_active:
            await alogin(request, user)
            return HttpResponseRedirect(next_url)
        error = "That username and password do not match an account."
    context = {"next": next_url, "error": error, "page": "login"}
    return render(request, "registration/login.html", context, status=401 if error else 200)


async def logout_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponse("Log out with a POST request.", status=405, content_type="text/plain")
    await alogout(request)
    return HttpResponseRedirect(settings.LOGIN_URL)


# --- plotly.js, served from the installed package (never copied into the repo) ----------------------


def _plotly_path() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


@require_safe
def favicon(request: HttpRequest) -> FileResponse:
    """``/favicon.ico`` for clients that ask for it without reading the page's ``<link rel=icon>``."""
    icon = settings.BASE_DIR / "static" / "favicon.svg"
    response = FileResponse(icon.open("rb"), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_GET
def plotly_js(request: HttpRequest) -> FileResponse:
    response = FileResponse(_plotly_path().open("rb"), content_type="application/javascript")
    response["Cache-Control"] = "public, max-age=86400"
    return response
