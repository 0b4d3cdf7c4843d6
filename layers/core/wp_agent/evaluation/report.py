"""Eval results: per trial, per task and in total (JSON), rendered as Markdown, and two runs compared."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from wp_agent.evaluation.scoring import pass_hat_k
from wp_agent.evaluation.tasks import Category

REPORT_FORMAT = "wp-agent-eval-report/1"
# Infrastructure trouble, not the model's judgement: such a trial is an error, not a misreading.
INFRASTRUCTURE_ERRORS = frozenset(
    {"API_ERROR", "API_RATE_LIMITED", "SSH_CONNECTION_FAILED", "COMMAND_TIMEOUT", "HARNESS_ERROR"}
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Model):
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, other: Usage) -> Usage:
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})


class TrialResult(_Model):
    task_id: str
    category: Category
    trial: int
    success: bool
    failures: list[str] = Field(default_factory=list)  # why the trial failed (empty when it passed)
    outcome: str  # answer | question | awaiting_approval | error
    error_code: str | None = None
    answer: str = ""  # the final answer
    clarification: str = ""  # the agent's question, when the simulated requester answered it
    commands: list[str] = Field(default_factory=list)  # every WP-CLI command that reached the site
    writes: list[str] = Field(default_factory=list)
    approval_requests: int = 0
    approval_bypasses: list[str] = Field(default_factory=list)
    blocked_attempts: int = 0
    # Read-only commands the model ran before its first write or its answer (each one a round trip
    # unless several go in one reply).
    observation_commands: int = 0
    asked_question: bool = False
    unnecessary_question: bool = False
    id_request: bool = False
    non_japanese: bool = False
    interpretation_failure: bool = False
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    wall_seconds: float = 0.0


class Metrics(_Model):
    trials: int = 0
    successes: int = 0
    success_rate: float = 0.0
    interpretation_failures: int = 0
    unnecessary_questions: int = 0
    id_requests: int = 0
    non_japanese_answers: int = 0
    approval_bypasses: int = 0
    blocked_attempts: int = 0
    observation_commands: int = 0
    observation_commands_per_trial: float = 0.0
    errors: int = 0
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    wall_seconds: float = 0.0

    @classmethod
    def of(cls, trials: list[TrialResult]) -> Metrics:
        usage = Usage()
        for trial in trials:
            usage = usage.add(trial.usage)
        costs = [t.cost_usd for t in trials]
        successes = sum(t.success for t in trials)
        return cls(
            trials=len(trials),
            successes=successes,
            success_rate=round(successes / len(trials), 4) if trials else 0.0,
            interpretation_failures=sum(t.interpretation_failure for t in trials),
            unnecessary_questions=sum(t.unnecessary_question for t in trials),
            id_requests=sum(t.id_request for t in trials),
            non_japanese_answers=sum(t.non_japanese for t in trials),
            approval_bypasses=sum(len(t.approval_bypasses) for t in trials),
            blocked_attempts=sum(t.blocked_attempts for t in trials),
            observation_commands=sum(t.observation_commands for t in trials),
            observation_commands_per_trial=(
                round(sum(t.observation_commands for t in trials) / len(trials), 2) if trials else 0.0
            ),
            errors=sum(t.outcome == "error" for t in trials),
            usage=usage,
            cost_usd=None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6),
            wall_seconds=round(sum(t.wall_seconds for t in trials), 3),
        )


class TaskSummary(_Model):
    task_id: str
    category: Category
    instruction: str
    metrics: Metrics
    pass_hat_k: float  # with k = the number of trials


class EvalReport(_Model):
    format: str = REPORT_FORMAT
    model: str
    provider: str
    started_at: str
    finished_at: str
    trials_per_task: int
    tasks_selected: str | None = None
    retirement_warning: str | None = None
    interrupted: bool = False  # stopped by hand: only the trials run so far
    pass_hat: dict[int, float]  # k -> pass^k averaged over tasks (k = 1 is the success rate)
    totals: Metrics
    by_category: dict[str, Metrics]
    tasks: list[TaskSummary]
    trials: list[TrialResult]

    @classmethod
    def build(
        cls,
        *,
        model: str,
        provider: str,
        started_at: str,
        finished_at: str,
        trials_per_task: int,
        trials: list[TrialResult],
        instructions: dict[str, str],
        tasks_selected: str | None = None,
        retirement_warning: str | None = None,
        interrupted: bool = False,
    ) -> EvalReport:
        by_task: dict[str, list[TrialResult]] = {}
        for trial in trials:
            by_task.setdefault(trial.task_id, []).append(trial)
        summaries = [
            TaskSummary(
                task_id=task_id,
                category=group[0].category,
                instruction=instructions.get(task_id, ""),
                metrics=Metrics.of(group),
                pass_hat_k=round(pass_hat_k(sum(t.success for t in group), len(group), len(group)), 4),
            )
            for task_id, group in by_task.items()
        ]
        pass_hat = {
            k: round(
                sum(pass_hat_k(s.metrics.successes, s.metrics.trials, k) for s in summaries) / len(summaries), 4
            )
            for k in range(1, trials_per_task + 1)
        } if summaries else {}  # fmt: skip
        categories = {str(t.category) for t in trials}
        return cls(
            model=model,
            provider=provider,
            started_at=started_at,
            finished_at=finished_at,
            trials_per_task=trials_per_task,
            tasks_selected=tasks_selected,
            retirement_warning=retirement_warning,
            interrupted=interrupted,
            pass_hat=pass_hat,
            totals=Metrics.of(trials),
            by_category={c: Metrics.of([t for t in trials if t.category == c]) for c in sorted(categories)},
            tasks=summaries,
            trials=trials,
        )


_COLUMNS = (
    "| task | category | success | pass^k | interp. fail | unneeded Q | ID req. | non-JA | bypass | "
    "blocked | obs./trial | tokens in/out | cost USD | time s |"
)
_RULE = "|" + "---|" * 14


def _row(name: str, category: str, m: Metrics, pass_k: float | None) -> str:
    cost = "unknown" if m.cost_usd is None else f"{m.cost_usd:.4f}"
    pass_text = "" if pass_k is None else f"{pass_k:.2f}"
    return (
        f"| {name} | {category} | {m.successes}/{m.trials} ({m.success_rate:.0%}) | {pass_text} | "
        f"{m.interpretation_failures} | {m.unnecessary_questions} | {m.id_requests} | {m.non_japanese_answers} | "
        f"{m.approval_bypasses} | {m.blocked_attempts} | {m.observation_commands_per_trial:.1f} | "
        f"{m.usage.input_tokens}/{m.usage.output_tokens} | "
        f"{cost} | {m.wall_seconds:.1f} |"
    )


def to_markdown(report: EvalReport) -> str:
    lines = [
        f"# wp-agent eval — model `{report.model}` ({report.provider})",
        "",
        f"{report.started_at} – {report.finished_at}; {len(report.tasks)} tasks × {report.trials_per_task} "
        f"trials; pass^k: " + ", ".join(f"k={k}: {v:.2f}" for k, v in report.pass_hat.items()),
    ]
    if report.retirement_warning:
        lines += ["", f"> ⚠ {report.retirement_warning}"]
    if report.interrupted:
        lines += ["", "> Interrupted: only the trials that finished are counted."]
    lines += ["", _COLUMNS, _RULE]
    lines += [_row(s.task_id, s.category, s.metrics, s.pass_hat_k) for s in report.tasks]
    lines += [_row(f"**{c}**", "", m, None) for c, m in report.by_category.items()]
    k = report.trials_per_task
    lines.append(_row("**total**", "", report.totals, report.pass_hat.get(k)))
    failed = [t for t in report.trials if not t.success]
    if failed:
        lines += ["", "## Failed trials", ""]
        lines += [f"- `{t.task_id}` #{t.trial}: " + "; ".join(t.failures) for t in failed]
    return "\n".join(lines) + "\n"


def compare_markdown(before: EvalReport, after: EvalReport) -> str:
    """Per task and in total: success rates of two runs side by side, regressions first."""
    old = {s.task_id: s for s in before.tasks}
    new = {s.task_id: s for s in after.tasks}
    lines = [
        f"# wp-agent eval comparison — `{before.model}` ({before.started_at}) → `{after.model}` ({after.started_at})",
        "",
        "| task | before | after | Δ success | before pass^k | after pass^k |",
        "|---|---|---|---|---|---|",
    ]

    def delta(task_id: str) -> float:
        a, b = old.get(task_id), new.get(task_id)
        return (b.metrics.success_rate if b else 0.0) - (a.metrics.success_rate if a else 0.0)

    for task_id in sorted(old.keys() | new.keys(), key=lambda t: (delta(t), t)):
        a, b = old.get(task_id), new.get(task_id)
        lines.append(
            f"| {task_id} | {_rate(a)} | {_rate(b)} | {delta(task_id):+.0%} | "
            f"{'' if a is None else f'{a.pass_hat_k:.2f}'} | {'' if b is None else f'{b.pass_hat_k:.2f}'} |"
        )
    lines += ["", "| metric | before | after |", "|---|---|---|"]
    for name in (
        "success_rate", "interpretation_failures", "unnecessary_questions", "id_requests",
        "non_japanese_answers", "approval_bypasses", "blocked_attempts", "observation_commands_per_trial",
        "errors", "cost_usd", "wall_seconds",
    ):  # fmt: skip
        lines.append(f"| {name} | {getattr(before.totals, name)} | {getattr(after.totals, name)} |")
    for k in sorted(before.pass_hat.keys() | after.pass_hat.keys()):
        lines.append(f"| pass^{k} | {before.pass_hat.get(k, '')} | {after.pass_hat.get(k, '')} |")
    if after.totals.approval_bypasses:
        lines += ["", f"**⚠ approval bypasses in the new run: {after.totals.approval_bypasses} (must be 0)**"]
    return "\n".join(lines) + "\n"


def _rate(summary: TaskSummary | None) -> str:
    if summary is None:
        return "—"
    m = summary.metrics
    return f"{m.successes}/{m.trials}"
