"""OIDC login views: ``/accounts/oidc/login/`` sends the browser to the provider, ``…/callback/`` logs in."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache

from dashboard.access import oidc
from dashboard.access.rbac import forget

SESSION_KEY = "oidc_login"


def _failure(request: HttpRequest, message: str) -> HttpResponse:
    context = {
        "next": settings.LOGIN_REDIRECT_URL,
        "error": f"Single sign-on failed: {message}",
        "page": "login",
    }
    return render(request, "registration/login.html", context, status=400)


@never_cache
def oidc_login(request: HttpRequest) -> HttpResponse:
    if not oidc.enabled():
        raise Http404("single sign-on is not configured")
    next_url = request.GET.get("next") or settings.LOGIN_REDIRECT_URL
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = settings.LOGIN_REDIRECT_URL
    try:
        url, state = oidc.begin(request.build_absolute_uri(reverse("oidc-callback")), next_url)
    except oidc.OidcError as error:
        return _failure(request, str(error))
    request.session[SESSION_KEY] = state
    return HttpResponseRedirect(url)


@never_cache
def oidc_callback(request: HttpRequest) -> HttpResponse:
    if not oidc.enabled():
        raise Http404("single sign-on is not configured")
    saved = request.session.pop(SESSION_KEY, None)
    if not isinstance(saved, dict) or request.GET.get("state") != saved.get("state"):
        return _failure(request, "this login was not started here or has expired; please try again")
    if request.GET.get("error"):
        return _failure(
            request,
            f"the provider said {request.GET.get('error')}: {request.GET.get('error_description', '')}",
        )
    code = request.GET.get("code")
    if not code:
        return _failure(request, "the provider sent no authorization code")
    try:
        user = oidc.user_for(oidc.exchange(code, saved))
    except oidc.OidcError as error:
        return _failure(request, str(error))
    if not user.is_active:
        return _failure(request, "this account is disabled")
    forget(user)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return HttpResponseRedirect(saved.get("next") or settings.LOGIN_REDIRECT_URL)
