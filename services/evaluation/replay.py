"""Answers replayed offline: the labelled questions' recorded contexts (what the gateway handed the generator;
`make bench-answer` records them once) through the current extractive generator and the shipped answer decision,
one outcome per question, and what changed against an earlier replay. An answer rule is decided on train and dev
in seconds this way, before `make eval-gate` checks it through the mesh; the test split stays out unless asked.

    python -m services.evaluation.replay --out /tmp/before.json
    (change a rule)
    python -m services.evaluation.replay --out /tmp/after.json --against /tmp/before.json

With --wrap, each question is asked as a template writes it ("Hello, could you please let me know {question}?
Thanks!"), and with --slip, with one slip in its longest word (two letters swapped, one dropped or one doubled in
its middle): against a plain replay, what changes is what the generator reads differently for those alone (the
context is the one recorded for the plain question).
"""

import argparse
import dataclasses
import json
import re
from pathlib import Path

from services.evaluation.cases import load_cases, read_jsonl
from services.evaluation.runner import cites_any_gold
from services.generator.extractive import ExtractiveGenerator
from shared import calibration, convert

DEFAULT_CONTEXTS = "eval/out/selector/contexts.jsonl"
SLIPS = ("swap", "drop", "double")
_LONG_WORD = re.compile(r"[A-Za-z]{6,}")


def with_slip(question: str, slip: str) -> str:
    """The question with one slip in the middle of its longest word of six letters or more (the first such when
    several are as long): "threshold" as "thrsehold" (swap), "threhold" (drop) or "thressshold" (double)."""
    words = _LONG_WORD.findall(question)
    if not words:
        return question
    word = max(words, key=len)
    i = len(word) // 2
    slipped = {
        "swap": word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :],
        "drop": word[:i] + word[i + 1 :],
        "double": word[:i] + word[i] + word[i:],
    }[slip]
    return question.replace(word, slipped, 1)


@dataclasses.dataclass
class Outcome:
    question: str
    split: str
    answerable: bool
    answered: bool  # the generator answered and the decision let it through
    right: bool  # answered, citing gold evidence
    coverage: float
    text: str


def replay(
    cases_file: str,
    corpus_dirs: list[str],
    contexts_file: str,
    calibration_file: str,
    splits: set[str],
    wrap: str = "{question}",
    slip: str = "",
):
    """Each recorded question of the given splits, by case id, as the generator and the decision answer it now,
    asked as `wrap` writes it, with a `slip` (one of SLIPS) when one is given."""
    cases = {c.case_id: c for c in load_cases(cases_file, corpus_dirs)}
    decision = calibration.load(calibration_file).decision()
    generator = ExtractiveGenerator()
    generator.warm_up()
    out: dict[str, Outcome] = {}
    for row in read_jsonl(Path(contexts_file)):
        case = cases.get(row["id"])
        if case is None or (case.split and case.split not in splits):  # no splits file: one set
            continue
        passages = [convert.scored_from_json(p) for p in row["context"]]
        asked = with_slip(case.question, slip) if slip else case.question
        answer = generator.run(wrap.format(question=asked), passages)
        top = max((p.scores.rerank_score for p in passages), default=0.0)
        answered = not answer.abstained and decision.answers(top, answer.coverage)
        cited = cites_any_gold(case.gold, answer.citations)
        out[case.case_id] = Outcome(
            case.question, case.split, bool(case.gold), answered, answered and cited, answer.coverage, answer.text
        )
    return out


def summary(outcomes: dict[str, Outcome]) -> str:
    answerable = [o for o in outcomes.values() if o.answerable]
    unanswerable = [o for o in outcomes.values() if not o.answerable]
    return (
        f"{len(outcomes)} questions: {sum(o.right for o in answerable)} of {len(answerable)} answerable answered "
        f"right, {sum(o.answered and not o.right for o in answerable)} wrong; "
        f"{sum(o.answered for o in unanswerable)} of {len(unanswerable)} unanswerable answered"
    )


def changes(before: dict[str, Outcome], after: dict[str, Outcome]) -> list[str]:
    """A line pair per question whose answer, coverage or outcome differs."""
    lines = []
    for case_id, old in before.items():
        new = after.get(case_id)
        if new is None or (old.answered, old.right, old.text, round(old.coverage, 4)) == (
            new.answered,
            new.right,
            new.text,
            round(new.coverage, 4),
        ):
            continue
        lines.append(
            f"{old.split or '-'} {case_id} {_outcome(old)} -> {_outcome(new)}, coverage {old.coverage:.3f} -> "
            f"{new.coverage:.3f} | {old.question}"
        )
        lines.append(f"    before: {_first_line(old.text)}")
        lines.append(f"    after:  {_first_line(new.text)}")
    return lines


def _outcome(o: Outcome) -> str:
    if not o.answered:
        return "refused"
    return "right" if o.right else ("wrong" if o.answerable else "false answer")


def _first_line(text: str) -> str:
    return text.splitlines()[0][:160] if text else "(no answer)"


def save(outcomes: dict[str, Outcome], path: str) -> None:
    Path(path).write_text(json.dumps({k: dataclasses.asdict(v) for k, v in outcomes.items()}, indent=1))


def load(path: str) -> dict[str, Outcome]:
    return {k: Outcome(**v) for k, v in json.loads(Path(path).read_text()).items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="eval/cases/sample.jsonl")
    parser.add_argument("--corpus", action="append", default=None, help="corpus folder (default: examples)")
    parser.add_argument("--contexts", default=DEFAULT_CONTEXTS)
    parser.add_argument("--calibration", default="eval/calibration.json")
    parser.add_argument("--with-test", action="store_true", help="the test split too (read it once, tune nothing)")
    parser.add_argument("--out", required=True, help="where this replay's outcomes are written (JSON)")
    parser.add_argument("--against", help="an earlier replay's outcomes: print what changed")
    parser.add_argument(
        "--wrap", default="{question}", help='how each question is asked, e.g. "hi! {question} thanks" (default: as is)'
    )
    parser.add_argument("--slip", choices=SLIPS, help="one slip in each question's longest word")
    args = parser.parse_args(argv)
    if "{question}" not in args.wrap:
        parser.error("--wrap must hold {question}")
    splits = {"train", "dev", "test"} if args.with_test else {"train", "dev"}
    outcomes = replay(
        args.cases, args.corpus or ["examples"], args.contexts, args.calibration, splits, args.wrap, args.slip or ""
    )
    save(outcomes, args.out)
    print(summary(outcomes))
    if args.against:
        lines = changes(load(args.against), outcomes)
        print("\n".join(lines))
        print(f"{len(lines) // 3} of {len(outcomes)} changed")


if __name__ == "__main__":
    main()
