"""Pin what trec_eval 10.0 prints for the command lines offeval's trec_eval tests compare.

trec_eval is a C program the suite does not build: build it once
(``bash tests/plugins/ir/trec_eval_reference/build_trec_eval.sh``, into
/tmp/trec_eval) and run

    python tests/plugins/ir/trec_eval_reference/generate.py [--trec-eval PATH]

It writes ``pinned.json``: per case, the files it was given (qrels, run; the run
on standard input for ``stdin`` cases), the arguments, and trec_eval's stdout,
stderr and exit code, exactly as it printed them. The named cases are the
options and parameters issue 30 lists; ``sweep`` holds generated cases
(graded and -1 judgements, ties, odd ids, CRLF line ends, comments, long runs,
measures with parameters and options), drawn from a fixed seed.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
SWEEP_SIZE = 200
SEED = 30

#: Three queries, grades 0-3 and -1 (in the pool, not judged), a document judged in two.
QRELS = """\
301 0 d1 3
301 0 d2 0
301 0 d3 1
301 0 d4 2
301 0 d5 -1
301 0 d9 1
302 0 d1 1
302 0 d6 0
302 0 d7 2
302 0 d8 -1
303 0 d2 0
303 0 d3 0
303 0 d10 1
"""
#: A run of the three queries (and one query without judgements), with tied scores.
RUN = """\
301 Q0 d1 1 2.5 tag
301 Q0 d2 2 2.5 tag
301 Q0 d5 3 2.0 tag
301 Q0 d4 4 1.5 tag
301 Q0 d11 5 1.5 tag
301 Q0 d9 6 0.5 tag
302 Q0 d6 1 3.0 tag
302 Q0 d7 2 2.0 tag
302 Q0 d8 3 2.0 tag
302 Q0 d12 4 1.0 tag
303 Q0 d2 1 1.0 tag
303 Q0 d10 2 0.9 tag
303 Q0 d11 3 0.8 tag
304 Q0 d1 1 1.0 tag
"""
#: Fractional grades: trec_eval reads a grade with atol (0.5 is 0, 2.7 is 2).
FRACTIONAL_QRELS = "301 0 d1 1\n301 0 d2 0.5\n301 0 d3 2.7\n"
FRACTIONAL_RUN = "301 Q0 d1 1 3 tag\n301 Q0 d2 2 2 tag\n301 Q0 d3 3 1 tag\n"
#: A first query judged only -1: trec_eval stops ("Can't calculate measure").
ONLY_UNJUDGED_QRELS = "301 0 d1 -1\n302 0 d1 1\n"
ONLY_UNJUDGED_RUN = "301 Q0 d1 1 1 tag\n302 Q0 d1 1 1 tag\n"
#: The same query judged only -1, after another: trec_eval evaluates it.
SECOND_UNJUDGED_QRELS = "300 0 d1 1\n301 0 d1 -1\n"
SECOND_UNJUDGED_RUN = "300 Q0 d1 1 1 tag\n301 Q0 d1 1 1 tag\n"

BASE = {"qrels": QRELS, "run": RUN}


def named_cases() -> list[dict]:
    """The options and parameters of issue 30, one case each (id, files, argv, stdin)."""

    def case(name, argv, files=BASE, stdin=None):
        return {"id": name, "files": dict(files), "argv": argv, "stdin": stdin}

    fractional = {"qrels": FRACTIONAL_QRELS, "run": FRACTIONAL_RUN}
    unjudged = {"qrels": ONLY_UNJUDGED_QRELS, "run": ONLY_UNJUDGED_RUN}
    second = {"qrels": SECOND_UNJUDGED_QRELS, "run": SECOND_UNJUDGED_RUN}
    measures = ["-m", "official", "-m", "ndcg", "-m", "set_F", "-m", "utility"]
    utility = ["-N", "50", "-m", "utility.1,-1,2,1", "-m", "utility"]
    missing = {"qrels": QRELS + "305 0 d1 1\n305 0 d2 0\n", "run": RUN}
    resid = ["-m", "rbp_resid.p=0.8", "-m", "unj.5"]
    return [
        case("set_F", ["-q", "-m", "set_F", "qrels", "run"]),
        case("set_F.0.5", ["-q", "-m", "set_F.0.5", "qrels", "run"]),
        case("set_F.2", ["-q", "-m", "set_F.2", "qrels", "run"]),
        case("rbp_resid.p=0.8", ["-q", "-m", "rbp_resid.p=0.8", "qrels", "run"]),
        case("rbp.p=0.8", ["-q", "-m", "rbp.p=0.8", "qrels", "run"]),
        case("dcg.1=3,2=9", ["-q", "-m", "dcg.1=3,2=9", "qrels", "run"]),
        case("ideal_dcg.1=3,2=9", ["-q", "-m", "ideal_dcg.1=3,2=9", "qrels", "run"]),
        case("ndcg.1=3,2=9", ["-q", "-m", "ndcg.1=3,2=9", "qrels", "run"]),
        case("ndcg.0=1,3=0.5", ["-q", "-m", "ndcg.0=1,3=0.5", "qrels", "run"]),
        case("ndcg_cut.3,5", ["-q", "-m", "ndcg_cut.3,5", "qrels", "run"]),
        # trec_eval reads these leniently: cut-offs with atol (1=3 is 1), a gain of a level
        # that is no whole number ignored
        case("ndcg_cut.1=3,2=9", ["-m", "ndcg_cut.1=3,2=9", "qrels", "run"]),
        case("ndcg.1=3,x=9", ["-m", "ndcg.1=3,x=9", "qrels", "run"]),
        case("rbp_resid.0.8", ["-m", "rbp_resid.0.8", "qrels", "run"]),
        case(
            "ndcg_cut.3,5-gains", ["-q", "-m", "ndcg_cut.3,5", "-m", "ndcg.1=3,2=9", "qrels", "run"]
        ),
        case(
            "fractional",
            ["-q", "-m", "ndcg", "-m", "P.3", "-m", "relstring", "qrels", "run"],
            fractional,
        ),
        case("stdin", ["-q", "qrels", "-"], {"qrels": QRELS}, stdin=RUN),
        case("stdin-c", ["-q", "-c", "-m", "ndcg", "qrels", "-"], {"qrels": QRELS}, stdin=RUN),
        case("qrels-stdin", ["-", "run"], {"run": RUN}, stdin=QRELS),
        case("-R qrels", ["-R", "qrels", "qrels", "run"]),
        case("-T trec_results", ["-T", "trec_results", "qrels", "run"]),
        case(
            "-R qrels -T trec_results", ["-Rqrels", "--Results_format=trec_results", "qrels", "run"]
        ),
        case("-R prefs", ["-R", "prefs", "qrels", "run"]),
        case("-R bogus", ["-R", "bogus", "qrels", "run"]),
        case("-T bogus", ["-T", "bogus", "qrels", "run"]),
        case("-J", ["-q", "-J", *measures, "qrels", "run"]),
        case("-J-M", ["-q", "-J", "-M", "3", "-m", "official", "qrels", "run"]),
        case("-N", ["-q", "-N", "100", "-m", "utility.1,-1,0,1", "qrels", "run"]),
        case("-N-default", ["-q", "-N", "100", *measures, "qrels", "run"]),
        case("-c utility", ["-q", "-c", *utility, "qrels", "run"], missing),
        case("-M 0 utility", ["-q", "-M", "0", *utility, "qrels", "run"]),
        case("-o", ["-q", "-o", "qrels", "run"]),
        case("-D 0", ["-q", "-D", "0", "qrels", "run"]),
        case("-D 0.302", ["-q", "-D", "0.302", "qrels", "run"]),
        case("-D 0.999", ["-q", "-D", "0.999", "qrels", "run"]),
        case("-D 1", ["-D", "1", "-m", "map", "qrels", "run"]),
        case("-l 0", ["-q", "-l", "0", *measures, "-m", "relstring", "qrels", "run"]),
        case("-l0-c", ["-q", "-c", "-l0", "-m", "official", "qrels", "run"]),
        case("-M 0", ["-q", "-M", "0", *measures, "qrels", "run"]),
        case("-M 0 -c", ["-q", "-c", "-M0", "-m", "official", "qrels", "run"]),
        case("-M -1", ["-M", "-1", "-m", "official", "qrels", "run"]),
        case("only -1 first", ["-q", "qrels", "run"], unjudged),
        case("only -1 second", ["-q", "qrels", "run"], second),
        case(
            "gains under 1 apart",
            ["-q", "-m", "ndcg.1=0.5,2=0.3", "-m", "ndcg_cut.3", "qrels", "run"],
        ),
        case("gains 0.2 apart", ["-q", "-m", "ndcg.1=0.2,2=0.4,3=0.6", "qrels", "run"]),
        # the same gains times 10 (levels 0-3 all given): 1 or more apart, sorted right,
        # and nDCG does not change when every gain is multiplied by the same number
        case("gains under 1 apart x10", ["-q", "-m", "ndcg.1=5,2=3,3=30", "qrels", "run"]),
        case("gains 0.2 apart x10", ["-q", "-m", "ndcg.1=2,2=4,3=6", "qrels", "run"]),
        case("ndcg.0=1,3=0.5 x10", ["-q", "-m", "ndcg.0=10,1=10,2=20,3=5", "qrels", "run"]),
        # a query missing from the run (-c) on trec_eval's one-document list, and the
        # list emptied (-M 0, -J): the values trec_eval's clean-up leaves
        case("-c -M 0 utility", ["-q", "-c", "-M", "0", *utility, "qrels", "run"], missing),
        case("-c -J utility", ["-q", "-c", "-J", *utility, "qrels", "run"], missing),
        case("-c rbp_resid.p=0.8", ["-q", "-c", *resid, "qrels", "run"], missing),
        case("-c -M 0 rbp_resid.p=0.8", ["-q", "-c", "-M", "0", *resid, "qrels", "run"], missing),
        case("-c relstring.5", ["-q", "-c", "-m", "relstring.5", "qrels", "run"], missing),
        # dcg, ideal_dcg and ndcg share their parameters in trec_eval (m_ndcg.c)
        case("dcg.1=3,2=9 ndcg", ["-q", "-m", "dcg.1=3,2=9", "-m", "ndcg", "qrels", "run"]),
        case("ndcg ideal_dcg", ["-q", "-m", "ndcg", "-m", "ideal_dcg", "qrels", "run"]),
    ]


def sweep_cases(count: int, seed: int) -> list[dict]:
    """``count`` generated cases: random judgements, runs and options (fixed seed).

    Without ``-c`` every judged query is in the run (trec_eval 10.0 stops on a judged
    query missing from the run); one case in ten has a measure with parameters, one
    in twenty a fractional grade."""
    rng = random.Random(seed)
    simple = ["map", "gm_map", "Rprec", "bpref", "recip_rank", "num_q", "num_ret", "num_rel"]
    simple += ["num_rel_ret", "infAP", "gm_bpref", "binG", "G", "ndcg_rel", "Rndcg"]
    simple += ["set_P", "set_relative_P", "set_recall", "set_map", "set_F", "runid"]
    simple += ["num_nonrel_judged_ret", "rbp", "rbp_resid", "ndcg", "dcg", "ideal_dcg"]
    simple += ["relstring", "utility", "iprec_at_recall", "11pt_avg", "Rprec_mult"]
    cut = ["P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "unj"]
    with_params = ["set_F.0.5", "rbp.p=0.8", "rbp_resid.p=0.8", "ndcg.1=3,2=9"]
    with_params += ["dcg.1=3,2=9", "ideal_dcg.2=5", "utility.2,-1,0,0", "relstring.5"]
    cases = []
    for number in range(count):
        argv = []
        for flag, chance in (("-q", 0.6), ("-c", 0.3), ("-n", 0.1), ("-J", 0.1)):
            if rng.random() < chance:
                argv.append(flag)
        if rng.random() < 0.2:
            argv += ["-l", str(rng.choice([0, 2, 3]))]
        if rng.random() < 0.2:
            argv += ["-M", str(rng.choice([0, 1, 3, 10]))]
        if rng.random() < 0.15:
            argv += ["-m", rng.choice(["official", "all_trec", "set"])]
        else:
            for name in rng.sample(simple, rng.randint(1, 5)):
                argv += ["-m", name]
            for name in rng.sample(cut, rng.randint(0, 2)):
                cuts = sorted(rng.sample([1, 2, 3, 5, 10, 20], rng.randint(1, 3)))
                argv += ["-m", f"{name}.{','.join(map(str, cuts))}"]
            if rng.random() < 0.1:
                argv += ["-m", rng.choice(with_params)]
        qids = rng.sample(["1", "2", "10", "301", "a-b", "Q_7", "x.y", "0"], rng.randint(1, 5))
        docs = [f"d{i}" for i in range(rng.choice([5, 20, 60, 300]))]
        if rng.random() < 0.3:
            docs += ["D#1", "doc-α", "z.z", "00"]
        fractional = rng.random() < 0.05
        qrels, run = [], []
        for q in qids:
            for d in rng.sample(docs, rng.randint(1, min(len(docs), 40))):
                grade = rng.choice([-1, 0, 0, 1, 1, 2, 3])
                text = (
                    f"{grade + 0.5}"
                    if fractional and grade >= 0 and rng.random() < 0.5
                    else str(grade)
                )
                qrels.append(f"{q} 0 {d} {text}")
            if "-c" not in argv or rng.random() < 0.8:
                scores = [
                    rng.choice([1, 2, 3, 4]) if rng.random() < 0.4 else rng.random() for _ in docs
                ]
                picked = rng.sample(list(zip(docs, scores, strict=True)), rng.randint(1, len(docs)))
                for rank, (d, s) in enumerate(picked, start=1):
                    run.append(f"{q} Q0 {d} {rank} {s:.6g} run{number % 3}")
        if rng.random() < 0.1:  # a query of the run without judgements
            run.append(f"unjudged Q0 {docs[0]} 1 1 run{number % 3}")
        rng.shuffle(qrels)
        rng.shuffle(run)
        if not run:
            run.append(f"{qids[0]} Q0 {docs[0]} 1 1 run0")
        if rng.random() < 0.2:
            qrels.insert(rng.randrange(len(qrels) + 1), "# a comment")
            run.insert(rng.randrange(len(run) + 1), "# a comment")
        end = "\r\n" if rng.random() < 0.2 else "\n"
        files = {"qrels": end.join(qrels) + end, "run": end.join(run) + end}
        cases.append(
            {
                "id": f"sweep-{number:03d}",
                "files": files,
                "argv": [*argv, "qrels", "run"],
                "stdin": None,
            }
        )
    return cases


def pin(trec_eval: str, case: dict) -> dict:
    """The case with trec_eval's stdout, stderr and exit code for it."""
    with tempfile.TemporaryDirectory() as folder:
        for name, text in case["files"].items():
            Path(folder, name).write_bytes(text.encode())
        stdin = case["stdin"].encode() if case["stdin"] is not None else b""
        done = subprocess.run(
            [trec_eval, *case["argv"]], cwd=folder, input=stdin, capture_output=True, check=False
        )
    return {
        **case,
        "stdout": done.stdout.decode(),
        "stderr": done.stderr.decode(),
        "returncode": done.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", default="/tmp/trec_eval/trec_eval")
    args = parser.parse_args()
    version = subprocess.run([args.trec_eval, "-v"], capture_output=True, text=True, check=True)
    pinned = {
        "trec_eval": version.stderr.strip(),
        "source": "trec_eval tag v10.0, commit f4253652c8efd0d86ddffd0d163cc0a0f813111a",
        "named": [pin(args.trec_eval, case) for case in named_cases()],
        "sweep": [pin(args.trec_eval, case) for case in sweep_cases(SWEEP_SIZE, SEED)],
    }
    (HERE / "pinned.json").write_text(json.dumps(pinned, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
