"""Aggregates case results into metrics and writes report.json, report.md and PNG plots."""

import json
from collections import Counter, defaultdict
from pathlib import Path

from services.evaluation import metrics as m
from services.evaluation.cases import reported_answerable
from services.evaluation.runner import CaseResult
from services.evaluation.withheld import WITHHELD

RECALL_KS = (1, 3, 5, 10, 20, 50, 100)
HEADLINE = (
    "recall@5",
    "ndcg@10",
    "citation_validity",
    "false_answer_rate",
    "answer_accuracy",
    "wrong_answer_rate",
    "over_abstention_rate",
    "evidence_completeness",
    "near_miss_answer_rate",
)


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


def retrieval_metrics(results: list[CaseResult], ks=RECALL_KS) -> dict:
    rows = [r for r in results if r.case.answerable]
    if not rows:
        return {}
    out = {}
    for k in ks:
        out[f"recall@{k}"] = _mean(m.recall_at(r.ranks, [g.key for g in r.case.gold], k) for r in rows)
    out["hit@5"] = _mean(m.hit_at(r.ranks, [g.key for g in r.case.gold], 5) for r in rows)
    out["mrr@10"] = _mean(m.mrr_at(r.ranks, [g.key for g in r.case.gold], 10) for r in rows)
    out["ndcg@10"] = _mean(m.ndcg_at(r.ranks, {g.key: g.gain for g in r.case.gold}, 10) for r in rows)
    out["precision@5"] = _mean(m.precision_at(r.relevant_positions, 5) for r in rows)
    out["queries"] = len(rows)
    return out


def answer_metrics(results: list[CaseResult]) -> dict:
    answerable = [r for r in results if r.case.answerable]
    # The written unanswerable questions and the near misses of --withhold-gold are rated apart: some of the
    # latter are answered rightly by another document, so their rate is an upper bound.
    near_misses = [r for r in results if r.case.category == WITHHELD]
    unanswerable = [r for r in results if not r.case.answerable and r.case.category != WITHHELD]
    answered = [r for r in results if r.answered]
    answers_given = [r for r in answerable if r.answered]
    # A run that asked no near misses has no rate for them (nor a column in report.md).
    asked_near_misses = (
        {
            "near_miss_answer_rate": _mean(1.0 if r.answered else 0.0 for r in near_misses),
            "near_misses": len(near_misses),
        }
        if near_misses
        else {}
    )
    return {
        "citation_validity": _mean(1.0 if r.citation_valid else 0.0 for r in answered) if answered else 1.0,
        "answer_accuracy": _mean(1.0 if r.answered and r.answer_correct else 0.0 for r in answerable),
        # A confidently wrong answer: an answerable question answered with citations to no gold evidence.
        "wrong_answer_rate": _mean(0.0 if r.answer_correct else 1.0 for r in answers_given)
        if answers_given
        else (0.0 if answerable else None),
        "false_answer_rate": _mean(1.0 if r.answered else 0.0 for r in unanswerable),
        "over_abstention_rate": _mean(0.0 if r.answered else 1.0 for r in answerable),
        "evidence_completeness": _mean(
            m.evidence_completeness(len(r.case.gold), r.answered, r.answer_correct, r.gold_cited) for r in answerable
        ),
        "answered": len(answered),
        "unanswerable": len(unanswerable),
        **asked_near_misses,
    }


def latency(results: list[CaseResult]) -> dict:
    by_stage = defaultdict(list)
    for r in results:
        for stage, seconds in r.seconds.items():
            by_stage[stage].append(seconds)
    return {
        stage: {"p50_ms": round(m.percentile(v, 50) * 1000, 1), "p95_ms": round(m.percentile(v, 95) * 1000, 1)}
        for stage, v in sorted(by_stage.items())
    }


def _group_row(subset: list[CaseResult], answers: bool) -> dict:
    row = retrieval_metrics(subset)
    if answers:
        row.update(answer_metrics(subset))
    row["cases"] = len(subset)
    return row


def build_report(results: list[CaseResult], meta: dict, answers: bool) -> dict:
    overall = retrieval_metrics(results)
    if answers:
        overall.update(answer_metrics(results))
    per_category = {
        category: _group_row([r for r in results if r.case.category == category], answers)
        for category in sorted({r.case.category for r in results})
    }
    per_split = {
        split: _group_row(subset, answers)
        for split in ("train", "dev", "test")
        if (subset := [r for r in results if r.case.split == split])
    }
    return {
        "meta": meta,
        "overall": overall,
        "per_category": per_category,
        "per_split": per_split,
        "latency": latency(results),
        "triage": dict(Counter(r.triage for r in results if r.triage != "ok")),
        # Answers the gateway gave without a stage (the reranker unreachable or late): each measures the fallback.
        "degraded": sum(bool(r.degraded) for r in results),
        "cases": [
            {
                "id": r.case.case_id,
                "category": r.case.category,
                "split": r.case.split,
                "answerable": r.case.answerable,
                "question": r.case.question,
                "triage": r.triage,
                "answered": r.answered,
                "abstain_reason": r.abstain_reason,
                "citation_valid": r.citation_valid,
                "answer_correct": r.answer_correct,
                "gold_ranks": r.ranks,
                "top_rerank_score": r.top_rerank_score,
                "coverage": round(r.coverage, 4),
                "gold_spans": len(r.case.gold),
                "gold_cited": None if r.gold_cited is None else round(r.gold_cited, 4),
                "top_ids": r.top_ids,
                "degraded": r.degraded,
                # Per-query values, so two runs can be compared query by query (ragmesh compare).
                "ndcg@10": round(m.ndcg_at(r.ranks, {g.key: g.gain for g in r.case.gold}, 10), 4)
                if r.case.answerable
                else None,
                "recall@5": round(m.recall_at(r.ranks, [g.key for g in r.case.gold], 5), 4)
                if r.case.answerable
                else None,
                "cited": r.cited,
                "answer": r.answer_text,
            }
            for r in results
        ],
    }


def _fmt(value) -> str:
    return "—" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def write_markdown(report: dict, path: Path) -> None:
    meta, overall = report["meta"], report["overall"]
    lines = [f"# ragmesh evaluation: {meta.get('name', '')}", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += ["", "## Overall", "", "| metric | value |", "|---|---|"]
    lines += [f"| {k} | {_fmt(v)} |" for k, v in overall.items()]
    keys = [
        k
        for k in (
            "recall@5",
            "ndcg@10",
            "mrr@10",
            "citation_validity",
            "answer_accuracy",
            "wrong_answer_rate",
            "false_answer_rate",
            "over_abstention_rate",
            "evidence_completeness",
            "near_miss_answer_rate",
        )
        if k in overall or k == "false_answer_rate"
    ]
    for title, rows in (
        ("Per split (by document; tune on train/dev, report test)", report.get("per_split", {})),
        ("Per category", report["per_category"]),
    ):
        if not rows:
            continue
        lines += ["", f"## {title}", "", "| | cases | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
        for name, row in rows.items():
            lines.append(f"| {name} | {row['cases']} | " + " | ".join(_fmt(row.get(k)) for k in keys) + " |")
    if report.get("degraded"):
        lines += ["", f"**{report['degraded']} answers degraded** (a stage skipped; see each case's `degraded`)."]
    lines += ["", "## Latency per stage (ms)", "", "| stage | p50 | p95 |", "|---|---|---|"]
    lines += [f"| {s} | {v['p50_ms']} | {v['p95_ms']} |" for s, v in report["latency"].items()]
    lines += ["", "## Triage of failed cases", ""]
    lines += [f"- {k}: {v}" for k, v in sorted(report["triage"].items())] or ["- none"]
    failed = [c for c in report["cases"] if c["triage"] != "ok"]
    if failed:
        lines += ["", "| case | category | triage | question | gold ranks |", "|---|---|---|---|---|"]
        lines += [
            f"| {c['id']} | {c['category']} | {c['triage']} | {c['question']} | {c['gold_ranks'] or '—'} |"
            for c in failed
        ]
    lines += ["", "Plots: `recall_at_k.png`, `rerank_scores.png`, `latency.png`.", ""]
    path.write_text("\n".join(lines))


def write_plots(report: dict, out: Path, threshold: float | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = {"overall": report["overall"], **report["per_category"]}
    for name, row in series.items():
        ks = [k for k in RECALL_KS if f"recall@{k}" in row]
        if ks:
            ax.plot(
                ks, [row[f"recall@{k}"] for k in ks], marker="o", label=name, linewidth=3 if name == "overall" else 1.2
            )
    ax.set_xscale("log")
    ax.set_xticks(RECALL_KS, [str(k) for k in RECALL_KS])
    ax.set(xlabel="k (ranked positions)", ylabel="recall@k", title="Recall@k", ylim=(0, 1.02))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "recall_at_k.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    scores: dict[bool, list[float]] = {True: [], False: []}
    for c in report["cases"]:
        if c["top_rerank_score"] is not None:
            scores[reported_answerable(c)].append(c["top_rerank_score"])
    bins = 25
    ax.hist(scores[True], bins=bins, alpha=0.6, label=f"answerable ({len(scores[True])})")
    ax.hist(scores[False], bins=bins, alpha=0.6, label=f"unanswerable ({len(scores[False])})")
    if threshold is not None:
        ax.axvline(threshold, color="red", linestyle="--", label=f"abstain threshold {threshold:.2f}")
    ax.set(xlabel="top rerank score", ylabel="questions", title="Top rerank score: answerable vs unanswerable")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rerank_scores.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    stages = list(report["latency"])
    p50 = [report["latency"][s]["p50_ms"] for s in stages]
    p95 = [report["latency"][s]["p95_ms"] for s in stages]
    xs = range(len(stages))
    ax.bar([x - 0.2 for x in xs], p50, width=0.4, label="p50")
    ax.bar([x + 0.2 for x in xs], p95, width=0.4, label="p95")
    ax.set_xticks(list(xs), stages)
    ax.set(ylabel="milliseconds", title="Latency per stage")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)


def write_report(report: dict, out: str, threshold: float | None) -> Path:
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    (path / "report.json").write_text(json.dumps(report, indent=2))
    write_markdown(report, path / "report.md")
    write_plots(report, path, threshold)
    return path
