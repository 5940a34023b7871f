"""``offeval evaluate``'s arguments are one request, read and checked where they are parsed;
the rest of the command takes the request, never the parsed command line."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from offeval.cli.evaluate import EvaluateCommand
from offeval.cli.evaluate_request import EvaluateRequest, Target
from offeval.cli.options import Parser
from offeval.errors import OffevalError

CLI = Path(__file__).parents[2] / "core" / "offeval" / "cli"


def request(*words: str) -> EvaluateRequest:
    parser = Parser(prog="offeval evaluate")
    EvaluateCommand().add_arguments(parser)
    args = parser.parse_args(["log.csv", *words])
    args.argv = ["evaluate", "log.csv", *words]
    return EvaluateRequest.from_args(args)


def test_the_request_holds_each_option_read_into_its_type():
    made = request(
        "--policy", "a=pa", "--rerank", "b=score", "--correction", "none",
        "--interval", "is=normal", "--reward-range", "0,1", "--map", "reward=click",
        "--estimator", "is", "--quiet", "--level", "0.9",
    )  # fmt: skip
    assert made.targets == (Target("--policy", "a", "pa"), Target("--rerank", "b", "score"))
    assert [t.given for t in made.targets] == ["a=pa", "b=score"]
    assert made.correction is None and made.level == 0.9
    assert made.interval == {"is": "normal"} and made.reward_range == (0.0, 1.0)
    assert made.mapping == {"reward": "click"} and made.estimators == ("is",)
    assert made.progress is False and made.argv[0] == "evaluate"
    assert request("--policy", "a=pa", "--interval", "normal").interval == "normal"
    assert request("--policy", "a=pa").interval is None


def test_the_request_is_frozen():
    made = request("--policy", "a=pa")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.level = 0.5


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--level", "95"], "confidence level must lie in (0, 1)"),
        (["--correction", "holms"], "--correction 'holms': one of none, "),
        (["--interval", "bettin"], "--interval bettin: the method is one of"),
        (["--reward-range", "1,0"], "--reward-range must have its low end below its high end"),
        (["--map", "rewards=click"], "--map rewards=click: no role 'rewards'"),
        (["--baseline", "b"], "--baseline 'b' is not one of the policies ['a']"),
        (["--reward-model", "item"], "--reward-model item: names a column of a role of the log"),
    ],
)
def test_each_option_is_refused_where_the_request_is_made(words, message):
    with pytest.raises(OffevalError) as refused:
        request("--policy", "a=pa", *words)
    assert message in str(refused.value)


def test_only_the_commands_run_and_the_request_read_the_parsed_command_line():
    """Parse once, pass the object: a function of the core's command line that takes an
    argparse.Namespace is a command's ``run``, the request's ``from_args``, or the plugin
    API's ``progress_of`` (for plugins' commands)."""
    allowed = {"run", "from_args", "progress_of"}
    takers = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                    if "Namespace" in annotation and node.name not in allowed:
                        takers.append(f"{path.name}: {node.name}({arg.arg})")
    assert takers == []
