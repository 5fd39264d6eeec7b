"""Text identical to ``kubectl argo rollouts get rollout|experiment NAME --no-color``.

The header is ``fmt "%-17s%v"`` lines; the tree goes through Go's tabwriter (min width 0, padding 2,
widths counted in runes), which :func:`tabulate` reproduces. Every level nests as cmd/get's printer
does (Rollout → revision → ReplicaSet/Experiment/AnalysisRun → Pod/ReplicaSet/AnalysisRun → Job); the
upstream quirk kept on purpose: revision rows carry an empty STATUS cell of one space.
Non-goals: colours and watch mode.
"""

from __future__ import annotations

from collections.abc import Sequence

from .analysis import AnalysisRunView
from .experiments import ExperimentView
from .images import ImageView
from .replicasets import ReplicaSetView
from .rollout_view import RolloutView

ICON_ROLLOUT = "⟳"
ICON_REVISION = "#"
ICON_REPLICA_SET = "⧉"
ICON_POD = "□"
ICON_EXPERIMENT = "Σ"
ICON_ANALYSIS = "α"
ICON_JOB = "⊞"
_PADDING = 2

Row = tuple[str, str, str, str, str]


def tabulate(rows: Sequence[Row]) -> str:
    """Go's ``tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)`` for rows of tab-terminated cells + a last cell."""
    widths = [max((len(row[col]) for row in rows), default=0) + _PADDING for col in range(4)]
    lines = []
    for row in rows:
        cells = [row[col].ljust(widths[col]) for col in range(4)]
        lines.append("".join(cells) + row[4])
    return "\n".join(lines) + "\n" if lines else ""


def _field(label: str, value: object) -> str:
    return f"{label:<17}{value}\n"


def _prefixes(is_last: bool, sub_prefix: str) -> tuple[str, str]:
    if is_last:
        return sub_prefix + "└──", sub_prefix + "   "
    return sub_prefix + "├──", sub_prefix + "│  "


def _images(images: Sequence[ImageView]) -> str:
    if not images:
        return ""
    out = _field("Images:", images[0].label())
    for image in images[1:]:
        out += _field("", image.label())
    return out


_HEADER: Row = ("NAME", "KIND", "STATUS", "AGE", "INFO")


def _node(name: str, kind: str, icon: str, status: str, age: str, info: str = "") -> Row:
    return name, kind, f"{icon} {status}", age, info


def _replica_set_rows(rs: ReplicaSetView, prefix: str, sub_prefix: str) -> list[Row]:
    info = rs.tags
    if rs.scale_down_deadline:
        info = [*info, f"delay:{rs.scale_down_delay}"]
    rows: list[Row] = [
        (
            f"{prefix}{ICON_REPLICA_SET} {rs.name}",
            "ReplicaSet",
            f"{rs.icon} {rs.status}",
            rs.age,
            ",".join(info),
        )
    ]
    for i, pod in enumerate(rs.pods):
        pod_prefix, _ = _prefixes(i == len(rs.pods) - 1, sub_prefix)
        pod_info = f"ready:{pod.ready}" + (f",restarts:{pod.restarts}" if pod.restarts > 0 else "")
        rows.append(
            (f"{pod_prefix}{ICON_POD} {pod.name}", "Pod", f"{pod.icon} {pod.status}", pod.age, pod_info)
        )
    return rows


def _analysis_run_rows(run: AnalysisRunView, prefix: str, sub_prefix: str) -> list[Row]:
    rows: list[Row] = [
        (
            f"{prefix}{ICON_ANALYSIS} {run.name}",
            "AnalysisRun",
            f"{run.icon} {run.status}",
            run.age,
            run.summary,
        )
    ]
    for i, job in enumerate(run.jobs):
        job_prefix, _ = _prefixes(i == len(run.jobs) - 1, sub_prefix)
        rows.append(_node(f"{job_prefix}{ICON_JOB} {job.name}", "Job", job.icon, job.status, job.age))
    return rows


def _experiment_rows(exp: ExperimentView, prefix: str, sub_prefix: str) -> list[Row]:
    rows: list[Row] = [
        _node(f"{prefix}{ICON_EXPERIMENT} {exp.name}", "Experiment", exp.icon, exp.status, exp.age)
    ]
    total = len(exp.replica_sets) + len(exp.analysis_runs)
    current = 0
    for rs in exp.replica_sets:
        child_prefix, child_sub = _prefixes(current == total - 1, sub_prefix)
        rows.extend(_replica_set_rows(rs, child_prefix, child_sub))
        current += 1
    for run in exp.analysis_runs:
        # PrintExperimentInfo: getPrefixes(isLast, subpfx), so the run's Jobs nest one level below it.
        run_prefix, run_sub = _prefixes(current == total - 1, sub_prefix)
        rows.extend(_analysis_run_rows(run, run_prefix, run_sub))
        current += 1
    return rows


def rollout_tree_rows(view: RolloutView) -> list[Row]:
    rows: list[Row] = [
        _HEADER,
        (f"{ICON_ROLLOUT} {view.name}", "Rollout", f"{view.icon} {view.status}", view.age, ""),
    ]
    revisions = view.revisions
    for i, revision in enumerate(revisions):
        prefix, sub_prefix = _prefixes(i == len(revisions) - 1, "")
        rows.append((f"{prefix}{ICON_REVISION} revision:{revision.revision}", "", " ", "", ""))
        total = len(revision.replica_sets) + len(revision.experiments) + len(revision.analysis_runs)
        current = 0
        for rs in revision.replica_sets:
            child_prefix, child_sub = _prefixes(current == total - 1, sub_prefix)
            rows.extend(_replica_set_rows(rs, child_prefix, child_sub))
            current += 1
        for exp in revision.experiments:
            child_prefix, child_sub = _prefixes(current == total - 1, sub_prefix)
            rows.extend(_experiment_rows(exp, child_prefix, child_sub))
            current += 1
        for run in revision.analysis_runs:
            child_prefix, child_sub = _prefixes(current == total - 1, sub_prefix)
            rows.extend(_analysis_run_rows(run, child_prefix, child_sub))
            current += 1
    return rows


def render_rollout(view: RolloutView) -> str:
    """``kubectl argo rollouts get rollout NAME --no-color``."""
    out = _field("Name:", view.name)
    out += _field("Namespace:", view.namespace)
    out += _field("Status:", f"{view.icon} {view.status}")
    if view.message:
        out += _field("Message:", view.message)
    out += _field("Strategy:", view.strategy)
    if view.strategy == "Canary":
        out += _field("  Step:", view.step or "")
        out += _field("  SetWeight:", view.set_weight)
        out += _field("  ActualWeight:", view.actual_weight)
    out += _images(view.images)
    out += "Replicas:\n"
    out += _field("  Desired:", view.desired)
    out += _field("  Current:", view.current)
    out += _field("  Updated:", view.updated)
    out += _field("  Ready:", view.ready)
    out += _field("  Available:", view.available)
    out += "\n"
    return out + tabulate(rollout_tree_rows(view))


def render_experiment(view: ExperimentView) -> str:
    """``kubectl argo rollouts get experiment NAME --no-color``."""
    out = _field("Name:", view.name)
    out += _field("Namespace:", view.namespace)
    out += _field("Status:", f"{view.icon} {view.status}")
    if view.message:
        out += _field("Message:", view.message)
    out += _images(view.images)
    out += "\n"
    return out + tabulate([_HEADER, *_experiment_rows(view, "", "")])
