"""`ragmesh compare BASE NEW`: is NEW better than BASE, query by query?

Both are `ragmesh eval` report.json files over the same queries. For each metric the mean per-query
difference (NEW - BASE) comes with a 95% paired bootstrap interval: the right test for two systems on
one query set, where per-query difficulty dominates the variance of either mean.
"""

import json
import sys
from pathlib import Path

from services.evaluation.cases import reported_answerable
from services.evaluation.metrics import evidence_completeness, paired_bootstrap
from services.evaluation.withheld import WITHHELD

LOWER_IS_BETTER = {"wrong_answer", "over_abstention", "false_answer", "near_miss"}

METRICS = ("ndcg@10", "recall@5")
# Per-case answer outcomes, read from any report's cases (older reports included). Each is a 0/1 value on the
# cases it applies to; "wrong_answer" counts answered-but-wrong per answerable question (a pairable rate).
ANSWER_METRICS = ("answer_accuracy", "wrong_answer", "over_abstention", "false_answer", "near_miss")


# Of a right answer to a question with several gold spans, the share it cites (reports that record gold_cited).
COMPLETENESS = "evidence_completeness"


def case_value(case: dict, metric: str) -> float | None:
    if metric == COMPLETENESS:
        return evidence_completeness(
            case.get("gold_spans", 0), case["answered"], bool(case.get("answer_correct")), case.get("gold_cited")
        )
    if metric not in ANSWER_METRICS:
        return case.get(metric)
    answerable = reported_answerable(case)
    if metric in ("false_answer", "near_miss"):
        # Near misses are rated apart from the written unanswerable questions.
        rated = not answerable and (case["category"] == WITHHELD) == (metric == "near_miss")
        return float(case["answered"]) if rated else None
    if not answerable:
        return None
    correct = bool(case["answered"] and case.get("answer_correct"))
    return {
        "answer_accuracy": float(correct),
        "over_abstention": float(not case["answered"]),
        "wrong_answer": float(case["answered"] and not correct),
    }[metric]


def compare(base: dict, new: dict, metrics=METRICS, samples: int = 5000, split: str = "") -> dict:
    """`split`: only the cases the NEW report puts in that split (e.g. test). A metric no shared case has a value
    of in both reports (evidence completeness where no question has several gold spans, SciFact's) is None."""
    base_cases = {c["id"]: c for c in base["cases"]}
    shared = [c for c in new["cases"] if c["id"] in base_cases and (not split or c.get("split") == split)]
    if not shared:
        raise ValueError("the two reports share no query ids")
    out: dict[str, object] = {"queries": len(shared)}
    for metric in metrics:
        values = [(case_value(base_cases[c["id"]], metric), case_value(c, metric)) for c in shared]
        pairs = [(a, b) for a, b in values if a is not None and b is not None]
        if not pairs:
            out[metric] = None
            continue
        a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        mean, low, high = paired_bootstrap(a, b, samples=samples)
        out[metric] = {
            "base": sum(a) / len(a),
            "new": sum(b) / len(b),
            "diff": mean,
            "ci95": [low, high],
            "better": sum(y > x for x, y in pairs),
            "worse": sum(y < x for x, y in pairs),
        }
    return out


def run(args) -> int:
    new = json.loads(Path(args.new).read_text())
    base = json.loads(Path(args.base).read_text())
    metrics = METRICS + (ANSWER_METRICS if "answer_accuracy" in new["overall"] else ())
    if all(any("gold_spans" in c for c in report["cases"]) for report in (base, new)):
        metrics += (COMPLETENESS,)
    try:
        result = compare(base, new, metrics, split=args.split or "")
    except ValueError as err:
        print(f"ragmesh compare: {err}", file=sys.stderr)
        return 2
    print(
        f"{result['queries']} shared queries{f' (NEW split {args.split})' if args.split else ''}; "
        "NEW - BASE with a 95% paired bootstrap interval"
    )
    for metric in metrics:
        r = result[metric]
        if r is None:
            print(f"  {metric:<21} n/a: no shared case has it in both reports")
            continue
        higher, lower = ("worse", "better") if metric in LOWER_IS_BETTER else ("better", "worse")
        verdict = higher if r["ci95"][0] > 0 else lower if r["ci95"][1] < 0 else "no significant difference"
        print(
            f"  {metric:<21} {r['base']:.4f} -> {r['new']:.4f}  diff {r['diff']:+.4f} "
            f"[{r['ci95'][0]:+.4f}, {r['ci95'][1]:+.4f}]  ({r['better']} queries up, {r['worse']} down): {verdict}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="per-query paired comparison of two `ragmesh eval` reports")
    p.add_argument("base", help="report.json of the baseline run")
    p.add_argument("new", help="report.json of the run to judge")
    p.add_argument("--json", help="also write the result here")
    p.add_argument("--split", help="only the cases NEW puts in this split (train, dev or test)")
    p.set_defaults(func=run)
