"""`ragmesh eval --splits ... --answerable-stride K`: which cases a run asks."""

import argparse

import pytest

from services.evaluation.cases import EvalCase, Gold
from services.evaluation.command import add_parser, select_cases


def case(case_id: str, split: str, answerable: bool) -> EvalCase:
    category = "general" if answerable else "unanswerable"
    return EvalCase(case_id, "?", "demo", category, [Gold("d")] if answerable else [], split)


CASES = [
    case("a1", "train", True),
    case("u1", "train", False),
    case("a2", "dev", True),
    case("a3", "test", True),
    case("u2", "test", False),
    case("a4", "train", True),
    case("a5", "dev", True),
    case("u3", "dev", False),
    case("a6", "train", True),
]


def ids(cases: list[EvalCase]) -> list[str]:
    return [c.case_id for c in cases]


def test_all_splits_and_no_stride_keep_every_case_in_order():
    kept, described = select_cases(CASES, "all", 1)
    assert kept == CASES and described == ""


def test_splits_keep_only_their_cases_in_order():
    kept, described = select_cases(CASES, "train,dev", 1)
    assert ids(kept) == ["a1", "u1", "a2", "a4", "a5", "u3", "a6"]
    assert described == " [dev+train]"
    assert ids(select_cases(CASES, "test", 1)[0]) == ["a3", "u2"]


def test_stride_counts_answerable_cases_within_the_chosen_splits():
    # train+dev answerable in order: a1 a2 a4 a5 a6 -> every 2nd from the first: a1 a4 a6; every unanswerable kept.
    kept, described = select_cases(CASES, "train,dev", 2)
    assert ids(kept) == ["a1", "u1", "a4", "u3", "a6"]
    assert described == " [dev+train] (unanswerable + every 2th answerable)"


def test_a_split_the_cases_lack_is_a_clear_error():
    with pytest.raises(SystemExit, match="'train,validation'"):
        select_cases(CASES, "train,validation", 1)
    unsplit = [case("x", "", True)]
    with pytest.raises(SystemExit, match="--splits"):
        select_cases(unsplit, "train", 1)


def test_the_eval_command_defaults_to_all_splits():
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["eval", "--cases", "c.jsonl"])
    assert args.splits == "all" and args.answerable_stride == 1
    args = parser.parse_args(["eval", "--cases", "c.jsonl", "--splits", "train,dev", "--answerable-stride", "4"])
    assert args.splits == "train,dev" and args.answerable_stride == 4
