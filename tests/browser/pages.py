"""What every page must agree on, checked against the page itself and the simulator's objects.

Each check reads the page as a user sees it (text, roles drawn, buttons' state and reasons) and
compares it with the Kubernetes objects kubesim holds, so a page that contradicts itself or the
cluster fails here. Used by the scenario suites; the per-scenario expectations live in those modules.
"""

from __future__ import annotations

import json
from typing import Any

from tests.browser.world import World, assert_clean

HASH_LABEL = "rollouts-pod-template-hash"
SCALE_DOWN_DEADLINE = "scale-down-deadline"


def orphans_in_cluster(world: World, key: str) -> set[str]:
    """ReplicaSets that hold replicas but are neither stable, the current canary (while not aborted), nor
    the blue-green active/preview, and are not waiting out a scale-down delay (Argo Rollouts' annotation)."""
    rollout = world.rollout(key)
    status = rollout.get("status") or {}
    # After an abort the current hash is no longer a canary (upstream: traffic and replicas go back to
    # stable), so a current ReplicaSet still holding pods then is an orphan too.
    keep = {status.get("stableRS")} | (set() if status.get("abort") else {status.get("currentPodHash")})
    bg = status.get("blueGreen") or {}
    keep |= {bg.get("activeSelector"), bg.get("previewSelector")}
    out = set()
    for rs in world.replicasets(key):
        meta = rs["metadata"]
        pod_hash = (meta.get("labels") or {}).get(HASH_LABEL)
        wanted = (rs.get("spec") or {}).get("replicas", 0)
        delayed = SCALE_DOWN_DEADLINE in (meta.get("annotations") or {})
        if wanted and pod_hash not in keep and not delayed:
            out.add(meta["name"])
    return out


def scaling_down_in_cluster(world: World, key: str) -> set[str]:
    return {
        rs["metadata"]["name"]
        for rs in world.replicasets(key)
        if SCALE_DOWN_DEADLINE in (rs["metadata"].get("annotations") or {})
        and (rs.get("spec") or {}).get("replicas", 0)
    }


def wait_for_header_phase(page: Any, phase: str, timeout: float = 15_000) -> None:
    page.wait_for_function(
        "(p) => { const n = document.querySelector('[data-badge=phase] [data-field=status]');"
        " return n && n.textContent === p; }",
        arg=phase,
        timeout=timeout,
    )


def header_and_finding_counts(page: Any) -> tuple[dict[str, int], dict[str, int]]:
    """The header's finding badges and the finding cards below them, by tone: read in one evaluation, so
    a live update between two reads cannot make the page look as if it contradicted itself."""
    header, cards = page.evaluate(
        """() => {
          const tones = ["critical", "warning"];
          const badge = (t) => {
            const n = document.querySelector(`#badges .badge.tone-${t}`);
            return n ? parseInt(n.textContent.trim().split(/\\s+/)[0], 10) : 0;
          };
          const cards = (t) => document.querySelectorAll(`#findings article.finding.${t}`).length;
          return [Object.fromEntries(tones.map(t => [t, badge(t)])),
                  Object.fromEntries(tones.map(t => [t, cards(t)]))];
        }"""
    )
    return dict(header), dict(cards)


def disabled_controls_say_why(page: Any, selector: str) -> None:
    """Every disabled control carries its reason: a tooltip and the text its aria-describedby names.

    Read in one evaluation: a live update may redraw the bar between two separate reads."""
    controls = page.evaluate(
        "(sel) => Array.from(document.querySelectorAll(sel))"
        ".filter(b => b.getAttribute('aria-disabled') === 'true')"
        ".map(b => ({label: b.textContent, title: b.getAttribute('title') || '',"
        " said: (document.getElementById(b.getAttribute('aria-describedby') || '') || {}).textContent"
        " || ''}))",
        selector,
    )
    for control in controls:
        label, title, said = control["label"], control["title"], control["said"]
        assert title, f"disabled {label!r} has no tooltip"
        assert said == title, f"disabled {label!r}: aria-describedby says {said!r}, tooltip {title!r}"


def check_rollout_page(world: World, page: Any, key: str) -> None:
    """An Argo Rollouts page agrees with itself and with the simulator."""
    page.wait_for_selector("#flow [data-node=rollout]")
    rollout = world.rollout(key)
    phase = (rollout.get("status") or {}).get("phase")
    if phase:
        wait_for_header_phase(page, phase)
    # Header counts = the cards below them.
    header, cards = header_and_finding_counts(page)
    assert header == cards, f"the header counts {header}, the cards below {cards}"
    # Argo CD's health appears only where an Application manages the rollout.
    managed = world.managed_by_application(key)
    assert (page.locator("#badges [data-badge=argocd]").count() > 0) == managed, (
        f"Argo CD badge, managed={managed}"
    )
    # Orphans: drawn (faded, apart) exactly when the cluster has one; a ReplicaSet waiting out its
    # scale-down delay is never called orphaned.
    expected = orphans_in_cluster(world, key)
    drawn = set(
        page.locator("#revisions .rs[data-role=orphaned]").evaluate_all(
            "ns => ns.map(n => n.getAttribute('data-rs'))"
        )
    )
    assert drawn == expected, f"orphans drawn {drawn}, in the cluster {expected}"
    assert (page.locator("#flow [data-role=orphaned]").count() > 0) == bool(expected)
    for name in scaling_down_in_cluster(world, key):
        assert page.locator(f"#revisions .rs[data-rs='{name}']").get_attribute("data-role") == "scaling-down"
    called_orphan = page.locator("#flow [data-node]").evaluate_all(
        "ns => ns.filter(n => /orphan/i.test((n.querySelector('text.kind') || {}).textContent || ''))"
        ".map(n => n.getAttribute('data-role'))"
    )
    assert all(role == "orphaned" for role in called_orphan), (
        f"a node says ORPHANED with roles {called_orphan}"
    )
    # Action enablement follows the cluster: unwedge only with an orphan, retry only after an abort.
    aborted = bool((rollout.get("status") or {}).get("abort"))
    applies = page.evaluate(
        "() => Object.fromEntries(((JSON.parse(document.getElementById('initial').textContent).page || {})"
        ".actions || {buttons: []}).buttons.map(b => [b.name, b.applies]))"
    )
    if applies.get("unwedge") is not None:
        assert bool(applies["unwedge"]) == bool(expected), (
            f"unwedge applies={applies['unwedge']}, orphans={expected}"
        )
    if applies.get("retry") is not None:
        assert bool(applies["retry"]) == aborted, f"retry applies={applies['retry']}, aborted={aborted}"
    disabled_controls_say_why(page, "#rollout-actions button, #findings button[data-fix]")
    # A finding's fix names a ReplicaSet that exists.
    for finding in page_document(page).get("findings") or []:
        params = finding.get("actionParams") or {}
        if params.get("replicaSet"):
            names = {rs["metadata"]["name"] for rs in world.replicasets(key)}
            assert params["replicaSet"] in names
            assert page.locator(f"#findings [data-code='{finding['code']}'] [data-fix]").count() == 1
    # The action bar is one row.
    heights = page.locator("#rollout-actions").evaluate(
        "n => [n.scrollHeight, n.clientHeight, n.scrollWidth, n.clientWidth]"
    )
    assert heights[0] <= 48 and heights[2] <= heights[3] + 1, f"the action bar wraps or overflows: {heights}"
    names = page.locator("#rollout-actions button").all_text_contents()
    assert len(names) == len(set(names)), f"an action appears twice: {names}"
    assert_clean(page)


def check_canary_page(world: World, page: Any, key: str) -> None:
    """A Flagger Canary page: the phase is Flagger's, the actions are at the top, a failure is not 'fine'."""
    _, namespace, name = key.split("/")
    page.wait_for_selector("#flow [data-node=rollout]")
    canary = next(
        c for c in world.objects("flagger.app/canaries", namespace) if c["metadata"]["name"] == name
    )
    phase = (canary.get("status") or {}).get("phase") or ""
    page.wait_for_function(
        "(p) => (document.querySelector('[data-field=phase]') || {}).textContent === p",
        arg=phase,
        timeout=15_000,
    )
    bar = page.locator("#canary-actions").bounding_box()
    flow = page.locator("#flow").bounding_box()
    assert bar and flow and bar["y"] < flow["y"], "the Canary's actions are not above the diagram"
    assert page.locator("#badges [data-badge=argocd]").count() == 0  # no Application manages it
    if phase == "Failed":
        text = page.text_content("#findings") or ""
        assert "No findings: nothing here needs a person" not in text
        assert not (page.text_content("[data-field=failedChecks]") or "").startswith("0 /")
    header, cards = header_and_finding_counts(page)
    assert header == cards, f"the header counts {header}, the cards below {cards}"
    disabled_controls_say_why(page, "#canary-actions button")
    assert_clean(page)


def page_document(page: Any) -> dict[str, Any]:
    """The rollout page's first-paint document (the same one live updates replace)."""
    return dict(json.loads(page.text_content("#initial") or "{}").get("page") or {})
