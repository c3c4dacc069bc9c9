"""Answer-stage benchmark: what the extractive generator adds to an Ask, per question, on CPU.

It replays recorded contexts (the passages, with the reranker's per-unit similarities, that the gateway
handed the generator for each labelled question; `ragmesh train-selector` records them) through the
coverage rule and, when their cards exist, the learned answer selector and the support reader's decision (a
cross-encoder over every unit of the context, services/generator/reading.py), in-process, one question at a time,
and prints p50 / p95 / max milliseconds. The gRPC hop is the same for both and is not included.

    python -m loadtest.bench_answer --contexts eval/out/selector/contexts.jsonl --repeat 3
"""

import argparse
import statistics
import time
from pathlib import Path

from loadtest.figures import figure, record
from services.evaluation.cases import read_jsonl
from services.generator import support
from services.generator.extractive import ExtractiveGenerator
from services.generator.learned import ReadingGenerator, SelectingGenerator
from services.generator.reading import DEFAULT_READER_CARD, ReaderCard
from services.generator.selection import DEFAULT_CARD
from shared import convert


def load(contexts: str, cases: str) -> list[tuple[str, list]]:
    questions = {row["id"]: row["question"] for row in read_jsonl(Path(cases))}
    rows = read_jsonl(Path(contexts))
    return [
        (questions[r["id"]], [convert.scored_from_json(p) for p in r["context"]])
        for r in rows
        if r["id"] in questions and r["context"]
    ]


def time_generator(generator, questions, repeat: int) -> dict:
    generator.warm_up()
    for question, passages in questions[:5]:
        generator.run(question, passages)  # first calls pay for imports and caches
    samples = []
    for _ in range(repeat):
        for question, passages in questions:
            started = time.perf_counter()
            generator.run(question, passages)
            samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {
        "questions": len(questions),
        "p50_ms": round(statistics.median(samples), 2),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 2),
        "max_ms": round(samples[-1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contexts", default="eval/out/selector/contexts.jsonl")
    parser.add_argument("--cases", default="eval/cases/sample.jsonl")
    parser.add_argument("--card", default=str(DEFAULT_CARD))
    parser.add_argument("--reader-card", default=str(DEFAULT_READER_CARD), help="the support reader's decision")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (0 = all)")
    args = parser.parse_args()
    if not Path(args.contexts).exists():
        raise SystemExit(f"{args.contexts}: no recorded contexts; run `ragmesh train-selector --record` first")
    questions = load(args.contexts, args.cases)
    questions = questions[: args.limit] if args.limit else questions
    generators = {"coverage rule (extractive-v1)": ExtractiveGenerator()}
    if Path(args.card).exists():
        generators["answer selector (extractive-v2)"] = SelectingGenerator(args.card)
    # The support reader is off by default and its model is trained only by `make support-reader`: a machine
    # without it measures the rest and says so, instead of failing `make bench`.
    not_measured = []
    if Path(args.reader_card).exists():
        reader = ReaderCard.load(args.reader_card).reader
        if support.resolve(reader) is not None:
            generators["support reader (extractive-v3)"] = ReadingGenerator(args.reader_card)
        else:
            not_measured.append(
                f"support reader (extractive-v3): not measured, reader {reader!r} is not trained in "
                f"{support.cache_root()} (`make support-reader`)"
            )
    print(f"{len(questions)} recorded contexts, {args.repeat} passes, one question at a time")
    print(f"{'generator':<34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    figures = []
    for name, generator in generators.items():
        r = time_generator(generator, questions, args.repeat)
        print(f"{name:<34} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['max_ms']:>8}")
        config = {"bench": "answer", "generator": name, "questions": len(questions), "repeat": args.repeat}
        figures += [figure(f"answer.{stat}", r[f"{stat}_ms"], "ms", **config) for stat in ("p50", "p95", "max")]
    for line in not_measured:
        print(line)
    print(f"figures: {record(figures)}")


if __name__ == "__main__":
    main()
